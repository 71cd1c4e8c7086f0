//! Detection datasets: the Ultralytics YOLO layout used for training, evaluation and annotation.

pub mod yolo;
