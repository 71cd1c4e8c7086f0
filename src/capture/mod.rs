//! Capture: finding the game window (xcap) and grabbing its pixels (x11rb and MIT-SHM on X11,
//! xcap elsewhere).

mod desktop_window;
mod error;
pub mod frame;
mod source;
mod window;
pub mod windows;
mod x11;

pub use desktop_window::DesktopWindow;
pub use source::{FrameSource, RecordedFrames, SourcedFrame, frame_paths, image_files};
pub use window::{PixelPath, Transport, WindowCapture};
pub use x11::{FrameWindow, show_as_background};
