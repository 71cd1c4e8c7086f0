//! The two test worlds' ground truth: Minetest's probe mod ([`minetest`]) and the Minecraft
//! client's test server ([`mcweb`]), behind one interface ([`LabelGame`]) that the
//! auto-labeller ([`autolabel`]) and the closed-loop tools use alike, and the camera model that
//! projects the world's blocks into the window ([`camera`]). The agent itself never reads the
//! ground truth: it plays through the window.

pub mod autolabel;
pub mod camera;
mod label_games;
pub mod mcweb;
pub mod minetest;

pub use autolabel::LabelGame;
