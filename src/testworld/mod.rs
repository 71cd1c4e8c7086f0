//! The two test worlds' ground truth: Minetest's probe mod ([`minetest`]) and the Minecraft
//! client's test server ([`mcweb`]), behind one interface ([`LabelGame`]) that the
//! auto-labeller ([`autolabel`]) and the closed-loop tools use alike, and the camera model that
//! projects the world's blocks into the window ([`camera`]). The agent itself never reads the
//! ground truth: it plays through the window.

pub mod autolabel;
mod camera;
mod label_games;
mod mcweb;
mod minetest;

pub use autolabel::LabelGame;
pub use camera::{Camera, Merge, Scan, scan_boxes};
pub use mcweb::McwebServer;
pub use minetest::{PlayerState, Probe};
