//! Detection datasets: the Ultralytics YOLO layout used for training, evaluation and annotation.

mod manifest;
pub mod ops;
pub mod writer;
pub mod yolo;

pub use manifest::{
    FrameRecord, Manifest, ManifestError, ManifestWriter, Record, file_sha256, text_sha256,
};
