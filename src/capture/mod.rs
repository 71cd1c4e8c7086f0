//! Capture: finding the game window (xcap) and grabbing its pixels (x11rb, MIT-SHM).

pub mod frame;
pub mod windows;
pub mod x11;
