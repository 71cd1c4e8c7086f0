//! Where a loop's frames come from: the game window, or recorded frames played back in order
//! (a full loop with no display, e.g. on a session's `frames/`).

use std::path::{Path, PathBuf};

use image::RgbImage;

use super::frame::CaptureError;
use super::window::WindowCapture;
use super::windows::WindowInfo;

/// A frame and where the game window was when it was taken.
pub struct SourcedFrame {
    pub image: RgbImage,
    /// `None` for recorded frames: there is no window to send input to.
    pub window: Option<WindowInfo>,
}

pub trait FrameSource {
    /// The next frame; `Ok(None)` when recorded frames ran out.
    fn next_frame(&mut self) -> Result<Option<SourcedFrame>, CaptureError>;

    /// The X id of the live window the frames come from.
    fn window_id(&self) -> Option<u32> {
        None
    }
}

impl FrameSource for WindowCapture {
    fn next_frame(&mut self) -> Result<Option<SourcedFrame>, CaptureError> {
        let (image, window) = self.grab()?;
        Ok(Some(SourcedFrame {
            image,
            window: Some(window),
        }))
    }

    fn window_id(&self) -> Option<u32> {
        Some(self.id())
    }
}

/// The images of a folder, in name order.
pub struct RecordedFrames {
    paths: Vec<PathBuf>,
    next: usize,
}

impl RecordedFrames {
    /// The images of `dir` (a session folder means its `frames/`).
    pub fn open(dir: &Path) -> std::io::Result<Self> {
        Ok(RecordedFrames {
            paths: frame_paths(dir)?,
            next: 0,
        })
    }
}

impl FrameSource for RecordedFrames {
    fn next_frame(&mut self) -> Result<Option<SourcedFrame>, CaptureError> {
        let Some(path) = self.paths.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        Ok(Some(SourcedFrame {
            image: read_frame(path)?,
            window: None,
        }))
    }
}

/// The images (.jpg, .jpeg, .png) of a folder, in name order; a session folder means its
/// `frames/`.
pub fn frame_paths(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let frames = dir.join("frames");
    let dir = if frames.is_dir() {
        frames
    } else {
        dir.to_path_buf()
    };
    image_files(&dir)
}

/// The .jpg, .jpeg and .png files of a folder (not recursive), in name order.
pub fn image_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| matches!(x.to_ascii_lowercase().as_str(), "jpg" | "jpeg" | "png"))
        })
        .collect();
    paths.sort();
    Ok(paths)
}

/// A recorded frame, refused when it is cut short: the JPEG decoder fills a truncated file's
/// missing rows with grey and reports nothing, and a step played on that is a step on a frame
/// nobody saw.
fn read_frame(path: &Path) -> Result<RgbImage, CaptureError> {
    let bad = |reason: String| CaptureError::Frame {
        path: path.display().to_string(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let jpeg = bytes.starts_with(&[0xFF, 0xD8]);
    // Some writers pad after the end-of-image marker; the marker must still be there.
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    if jpeg && !bytes[..end].ends_with(&[0xFF, 0xD9]) {
        return Err(bad(format!(
            "the JPEG is cut short ({} bytes, no end-of-image marker)",
            bytes.len()
        )));
    }
    image::load_from_memory(&bytes)
        .map(|img| img.to_rgb8())
        .map_err(|e| bad(e.to_string()))
}
