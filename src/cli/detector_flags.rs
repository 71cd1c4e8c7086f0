//! The `--model`, `--conf` and `--iou` flags that `detect` and `annotate` share: each one set
//! becomes a command-line override of its `[detector]` config key.

use std::path::PathBuf;

use clap::Args;
use vistawise::config::{Origin, Override};

#[derive(Args, Debug, Clone)]
pub struct DetectorFlags {
    /// Detector ONNX file [config: detector.model].
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Confidence threshold [config: detector.confidence].
    #[arg(long)]
    pub conf: Option<f32>,
    /// NMS IoU threshold [config: detector.iou].
    #[arg(long)]
    pub iou: Option<f32>,
}

impl DetectorFlags {
    pub fn overrides(&self) -> Vec<Override> {
        let flags = [
            (
                "detector.model",
                "--model",
                self.model.as_ref().map(|m| m.display().to_string()),
            ),
            (
                "detector.confidence",
                "--conf",
                self.conf.map(|c| c.to_string()),
            ),
            ("detector.iou", "--iou", self.iou.map(|i| i.to_string())),
        ];
        flags
            .into_iter()
            .filter_map(|(key, flag, value)| {
                Some(Override {
                    key: key.into(),
                    value: value?,
                    origin: Origin::Flag(flag.into()),
                })
            })
            .collect()
    }
}
