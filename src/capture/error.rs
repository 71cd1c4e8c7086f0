//! What can go wrong when the game window is captured.

use super::windows::WindowError;

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
