//! Grabbing the game window's pixels.

use image::RgbImage;

use super::window::{Transport, WindowCapture};
use super::windows::{WindowError, WindowInfo};

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error(transparent)]
    Window(#[from] WindowError),
    #[error("the game window (id {0}) is gone")]
    Gone(u32),
    #[error("cannot capture window \"{title}\": {reason}")]
    Capture { title: String, reason: String },
    #[error("cannot connect to the X server: {0}")]
    NoConnection(String),
    #[error("cannot read the recorded frame {path}: {reason}")]
    Frame { path: String, reason: String },
}

/// Captures the window with X id `id` (its client area) as RGB, once. A loop keeps a
/// [`WindowCapture`] instead: one connection and one shared buffer for every frame.
pub fn capture(id: u32) -> Result<(RgbImage, WindowInfo), CaptureError> {
    WindowCapture::open(id, Transport::Auto)?.grab()
}
