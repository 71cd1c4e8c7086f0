//! Grabbing the game window's pixels.

use image::RgbImage;

use super::windows::{WindowError, WindowInfo};

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error(transparent)]
    Window(#[from] WindowError),
    #[error("the game window (id {0}) is gone")]
    Gone(u32),
    #[error("cannot capture window \"{title}\": {reason}")]
    Capture { title: String, reason: String },
    #[error("cannot read the recorded frame {path}: {reason}")]
    Frame { path: String, reason: String },
}

/// Captures the window with X id `id` (its client area) as RGB.
pub fn capture(id: u32) -> Result<(RgbImage, WindowInfo), CaptureError> {
    let windows = xcap::Window::all().map_err(|e| CaptureError::Capture {
        title: String::new(),
        reason: e.to_string(),
    })?;
    let window = windows
        .into_iter()
        .find(|w| w.id().ok() == Some(id))
        .ok_or(CaptureError::Gone(id))?;
    let info = super::windows::info(&window);
    let rgba = window.capture_image().map_err(|e| CaptureError::Capture {
        title: info.title.clone(),
        reason: e.to_string(),
    })?;
    Ok((image::DynamicImage::ImageRgba8(rgba).to_rgb8(), info))
}
