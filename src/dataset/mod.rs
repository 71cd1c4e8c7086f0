//! Detection datasets: the Ultralytics YOLO layout used for training, evaluation and annotation.

pub mod manifest;
pub mod ops;
pub mod writer;
pub mod yolo;
