//! A game: its profile (`config/games/<game>.toml` read once into typed sections, plus its
//! skills), and the ground truth of the two test worlds, Minetest's probe mod ([`minetest`]) and
//! the Minecraft client's test server ([`mcweb`]), behind one interface ([`LabelGame`]) that the
//! auto-labeller ([`autolabel`]) and the closed-loop tools use alike. The agent itself never
//! reads the ground truth: it plays through the window.

pub mod autolabel;
pub mod camera;
pub mod file;
pub mod mcweb;
pub mod minetest;
pub mod profile;
pub mod settings;

pub use autolabel::LabelGame;
pub use file::{ProfileFile, Sections};
pub use profile::{GameProfile, ProfileError};
