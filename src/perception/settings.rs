//! `[detector]` and `[onnxruntime]` of the config.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::validate::check;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DetectorConfig {
    pub model: PathBuf,
    pub confidence: f32,
    pub iou: f32,
    pub max_detections: usize,
    pub threads: usize,
    /// Longest input side for a dynamic-size model (0: the model's own export size).
    pub input_size: u32,
    /// Input pixels per GUI pixel the model learnt icons at (0: off): frames whose GUI would
    /// come out larger are shrunk to it (see [`Self::input_cap`]).
    pub gui_input_px: f32,
    pub k_w: f32,
    pub k_h: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnnxRuntimeConfig {
    /// Empty means "search the usual places".
    pub library: PathBuf,
}

impl DetectorConfig {
    /// The longest input side for a `w` x `h` frame whose GUI is drawn at `gui_scale`, when
    /// `gui_input_px` asks for one: the frame scaled so that a GUI pixel is `gui_input_px` input
    /// pixels, rounded up to the stride of 32.
    pub fn input_cap(&self, w: u32, h: u32, gui_scale: f32) -> Option<u32> {
        if self.gui_input_px <= 0.0 || gui_scale.is_nan() || gui_scale <= 0.0 {
            return None;
        }
        let side = w.max(h) as f32 * self.gui_input_px / gui_scale;
        Some(((side / 32.0).ceil() as u32).max(1) * 32)
    }

    /// The thresholds applied after inference.
    pub fn detect_options(&self) -> super::DetectOptions {
        super::DetectOptions {
            confidence: self.confidence,
            iou: self.iou,
            max_detections: self.max_detections,
            multi_label: false,
            clip_boxes: true,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), (String, String)> {
        let d = self;
        check(
            !d.model.as_os_str().is_empty(),
            "detector.model",
            "must name an ONNX file",
        )?;
        check(
            d.confidence > 0.0 && d.confidence < 1.0,
            "detector.confidence",
            "must be between 0 and 1 (exclusive)",
        )?;
        check(
            d.iou > 0.0 && d.iou <= 1.0,
            "detector.iou",
            "must be in (0, 1]",
        )?;
        check(
            (1..=10_000).contains(&d.max_detections),
            "detector.max_detections",
            "must be 1-10000",
        )?;
        check(
            (1..=64).contains(&d.threads),
            "detector.threads",
            "must be 1-64",
        )?;
        check(
            d.input_size == 0
                || ((32..=4096).contains(&d.input_size) && d.input_size.is_multiple_of(32)),
            "detector.input_size",
            "must be 0 (the model's own size) or a multiple of 32 from 32 to 4096",
        )?;
        check(
            d.gui_input_px >= 0.0 && d.gui_input_px.is_finite(),
            "detector.gui_input_px",
            "must be 0 (off) or the input pixels per GUI pixel the model learnt at",
        )?;
        check(
            d.k_w > 0.0 && d.k_w.is_finite(),
            "detector.k_w",
            "must be a positive number of pixels",
        )?;
        check(
            d.k_h > 0.0 && d.k_h.is_finite(),
            "detector.k_h",
            "must be a positive number of pixels",
        )?;
        Ok(())
    }
}
