//! Capture: finding the game window (xcap) and grabbing its pixels (x11rb and MIT-SHM on X11,
//! xcap elsewhere).

pub mod desktop_window;
mod error;
pub mod frame;
pub mod source;
pub mod window;
pub mod windows;
pub mod x11;
