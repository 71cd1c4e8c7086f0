//! Capture: finding the game window and grabbing its pixels (xcap).

pub mod frame;
pub mod windows;
