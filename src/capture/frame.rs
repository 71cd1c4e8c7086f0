//! Grabbing the game window's pixels.

use image::RgbImage;

pub use super::error::CaptureError;
use super::window::{Transport, WindowCapture};
use super::windows::WindowInfo;

/// Captures the window with X id `id` (its client area) as RGB, once. A loop keeps a
/// [`WindowCapture`] instead: one connection and one shared buffer for every frame.
pub fn capture(id: u32) -> Result<(RgbImage, WindowInfo), CaptureError> {
    WindowCapture::open(id, Transport::Auto)?.grab()
}
