//! The YOLO detector: an Ultralytics ONNX export run by ONNX Runtime.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use image::RgbImage;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;
use serde::Serialize;

use super::decode::{self, DecodeError, DetectOptions, OutputForm};
use super::detections::Detection;
use super::letterbox::Letterbox;
use super::model_info::{self, MetadataError};
use super::runtime;

#[derive(Debug, thiserror::Error)]
pub enum DetectorError {
    #[error("ONNX Runtime is not initialised (call perception::runtime::init first)")]
    RuntimeNotInitialised,
    #[error("detector file {0} does not exist")]
    Missing(PathBuf),
    #[error("detector {path}: {reason}")]
    Load { path: PathBuf, reason: String },
    #[error("detector {path}: {source}")]
    Metadata {
        path: PathBuf,
        source: MetadataError,
    },
    #[error("detector {path}: {source}")]
    Output { path: PathBuf, source: DecodeError },
    #[error("detector {path}: inference failed: {reason}")]
    Run { path: PathBuf, reason: String },
    #[error("frame is empty (0x0)")]
    EmptyFrame,
    #[error(
        "detector {path}: detector.input_size = {size} needs a model exported with a dynamic input size \
         (tools/detector/export.py --dynamic); this one takes a fixed {w}x{h} input (set detector.input_size = 0)"
    )]
    FixedInput {
        path: PathBuf,
        size: u32,
        w: usize,
        h: usize,
    },
    #[error(
        "detector {path}: detector.input_size = {size} is not a multiple of the model's stride {stride}"
    )]
    InputSizeNotStride {
        path: PathBuf,
        size: u32,
        stride: usize,
    },
}

/// What the model says about itself.
#[derive(Debug, Clone, Serialize)]
pub struct ModelInfo {
    pub path: PathBuf,
    pub class_names: Vec<String>,
    /// Input height and width in pixels; for a dynamic-size model, the largest input (the
    /// export size), which each frame is fitted into with [`Letterbox::min_rect`].
    pub input_h: usize,
    pub input_w: usize,
    /// The model takes any input size (an export with `dynamic=True`).
    pub dynamic_input: bool,
    pub stride: Option<usize>,
    pub output_form: String,
    /// Every metadata key/value the export carries.
    pub metadata: Vec<(String, String)>,
}

/// Per-stage wall time of one detection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StageTimes {
    pub preprocess: Duration,
    pub inference: Duration,
    pub postprocess: Duration,
}

impl StageTimes {
    /// Pre-process, inference and post-process in milliseconds.
    pub fn ms(&self) -> [f64; 3] {
        [self.preprocess, self.inference, self.postprocess].map(|d| d.as_secs_f64() * 1e3)
    }
}

/// A prepared input: the letterboxed tensor and how to map boxes back.
pub struct PreparedInput {
    pub tensor: Vec<f32>,
    pub letterbox: Letterbox,
}

pub struct Detector {
    session: Session,
    info: ModelInfo,
    form: OutputForm,
    input_name: String,
}

/// An ONNX Runtime session of the model at `path` on `threads` intra-op threads.
fn open_session(
    env: &ort::environment::Environment,
    path: &Path,
    threads: usize,
) -> Result<Session, DetectorError> {
    let load_err = |reason: String| DetectorError::Load {
        path: path.to_path_buf(),
        reason,
    };
    // Each builder step returns its own error type, so map each one.
    Session::builder(env)
        .map_err(|e| load_err(e.to_string()))?
        .with_intra_threads(threads.max(1))
        .map_err(|e| load_err(e.to_string()))?
        .with_inter_threads(1)
        .map_err(|e| load_err(e.to_string()))?
        .with_optimization_level(GraphOptimizationLevel::Level3)
        .map_err(|e| load_err(e.to_string()))?
        .commit_from_file(path)
        .map_err(|e| load_err(format!("not a loadable ONNX model: {e}")))
}

/// The model's input: its name, height and width (the export size in the metadata for a
/// dynamic input), and whether it is dynamic.
fn input_of<'m>(
    session: &Session,
    get: &dyn Fn(&str) -> Option<&'m str>,
    path: &Path,
) -> Result<(String, usize, usize, bool), DetectorError> {
    let input = session
        .inputs()
        .first()
        .ok_or_else(|| DetectorError::Load {
            path: path.to_path_buf(),
            reason: "model has no input".into(),
        })?;
    let name = input.name().to_string();
    Ok(match input.dtype().tensor_shape().map(|s| s.to_vec()) {
        Some(dims) if dims.len() == 4 && dims[2] > 0 && dims[3] > 0 => {
            (name, dims[2] as usize, dims[3] as usize, false)
        }
        _ => {
            let meta_err = |source: MetadataError| DetectorError::Metadata {
                path: path.to_path_buf(),
                source,
            };
            let (h, w) = model_info::parse_imgsz(
                get("imgsz").ok_or_else(|| meta_err(MetadataError::Missing("imgsz")))?,
            )
            .map_err(meta_err)?;
            (name, h, w, true)
        }
    })
}

impl Detector {
    /// Loads a model; ONNX Runtime must have been initialised with [`runtime::init`].
    pub fn load(path: &Path, threads: usize) -> Result<Self, DetectorError> {
        let env = runtime::environment().ok_or(DetectorError::RuntimeNotInitialised)?;
        if !path.is_file() {
            return Err(DetectorError::Missing(path.to_path_buf()));
        }
        let load_err = |reason: String| DetectorError::Load {
            path: path.to_path_buf(),
            reason,
        };
        let session = open_session(env, path, threads)?;

        let meta_err = |source: MetadataError| DetectorError::Metadata {
            path: path.to_path_buf(),
            source,
        };
        let metadata = read_metadata(&session).map_err(&load_err)?;
        let get = |k: &str| {
            metadata
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        let class_names = model_info::parse_names(
            get("names").ok_or_else(|| meta_err(MetadataError::Missing("names")))?,
        )
        .map_err(meta_err)?;
        let stride = get("stride").and_then(|s| s.trim().parse().ok());
        let end2end_hint = get("end2end").and_then(model_info::parse_bool);

        let (input_name, input_h, input_w, dynamic_input) = input_of(&session, &get, path)?;
        let output = session
            .outputs()
            .first()
            .ok_or_else(|| load_err("model has no output".into()))?;
        let out_shape = output
            .dtype()
            .tensor_shape()
            .map(|s| s.to_vec())
            .ok_or_else(|| load_err("first output is not a tensor".into()))?;
        let form = OutputForm::from_shape(&out_shape, class_names.len(), end2end_hint).map_err(
            |source| DetectorError::Output {
                path: path.to_path_buf(),
                source,
            },
        )?;
        let info = ModelInfo {
            path: path.to_path_buf(),
            class_names,
            input_h,
            input_w,
            dynamic_input,
            stride,
            output_form: form.describe(),
            metadata,
        };
        Ok(Detector {
            session,
            info,
            form,
            input_name,
        })
    }

    /// The configured detector: `[detector]`'s model on its threads, at its input size.
    pub fn from_config(config: &super::settings::DetectorConfig) -> Result<Self, DetectorError> {
        Self::load(&config.model, config.threads)?.with_input_size(config.input_size)
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// Caps a dynamic-size model's input at `size` x `size` instead of its export size (0 keeps
    /// the export size), as Ultralytics' `predict(imgsz=size)` does. A fixed-size model, or a
    /// size that is not a multiple of the stride, is an error rather than silently ignored.
    pub fn with_input_size(mut self, size: u32) -> Result<Self, DetectorError> {
        if size == 0 {
            return Ok(self);
        }
        if !self.info.dynamic_input {
            return Err(DetectorError::FixedInput {
                path: self.info.path.clone(),
                size,
                w: self.info.input_w,
                h: self.info.input_h,
            });
        }
        let stride = self.stride();
        if stride == 0 || !(size as usize).is_multiple_of(stride) {
            return Err(DetectorError::InputSizeNotStride {
                path: self.info.path.clone(),
                size,
                stride,
            });
        }
        self.info.input_w = size as usize;
        self.info.input_h = size as usize;
        Ok(self)
    }

    /// The model's largest stride: Ultralytics' exports always carry it; 32 is what every YOLO
    /// head uses when the metadata lacks it.
    fn stride(&self) -> usize {
        self.info.stride.unwrap_or(32)
    }

    /// The input a frame of this size gets: the fixed input of a fixed-size model, the smallest
    /// stride-multiple rectangle within the export size for a dynamic one.
    pub fn letterbox_for(&self, frame_w: u32, frame_h: u32) -> Letterbox {
        self.letterbox_within(frame_w, frame_h, None)
    }

    /// As [`Self::letterbox_for`], with a dynamic-size model's input no larger than `max_side`
    /// on either side (a fixed-size model ignores it).
    pub fn letterbox_within(&self, frame_w: u32, frame_h: u32, max_side: Option<u32>) -> Letterbox {
        let (mut max_w, mut max_h) = (self.info.input_w as u32, self.info.input_h as u32);
        if let (true, Some(cap)) = (self.info.dynamic_input, max_side) {
            let cap = cap.max(self.stride() as u32);
            (max_w, max_h) = (max_w.min(cap), max_h.min(cap));
        }
        if self.info.dynamic_input {
            Letterbox::min_rect(frame_w, frame_h, max_w, max_h, self.stride() as u32)
        } else {
            Letterbox::new(frame_w, frame_h, max_w, max_h)
        }
    }

    /// Letterboxes a frame into the model's input tensor.
    pub fn preprocess(&self, frame: &RgbImage) -> Result<PreparedInput, DetectorError> {
        self.preprocess_within(frame, None)
    }

    /// Letterboxes a frame into an input no larger than `max_side` ([`Self::letterbox_within`]).
    pub fn preprocess_within(
        &self,
        frame: &RgbImage,
        max_side: Option<u32>,
    ) -> Result<PreparedInput, DetectorError> {
        if frame.width() == 0 || frame.height() == 0 {
            return Err(DetectorError::EmptyFrame);
        }
        let letterbox = self.letterbox_within(frame.width(), frame.height(), max_side);
        let mut tensor = vec![0.0f32; 3 * letterbox.dst_h as usize * letterbox.dst_w as usize];
        letterbox.fill_chw(frame, &mut tensor);
        Ok(PreparedInput { tensor, letterbox })
    }

    /// Runs the network; returns the first output's data.
    pub fn infer(&mut self, input: &PreparedInput) -> Result<Vec<f32>, DetectorError> {
        let run_err = |reason: String| DetectorError::Run {
            path: self.info.path.clone(),
            reason,
        };
        let shape = [
            1usize,
            3,
            input.letterbox.dst_h as usize,
            input.letterbox.dst_w as usize,
        ];
        let tensor = TensorRef::from_array_view((shape, input.tensor.as_slice()))
            .map_err(|e| run_err(e.to_string()))?;
        let outputs = self
            .session
            .run(ort::inputs![self.input_name.as_str() => tensor])
            .map_err(|e| run_err(e.to_string()))?;
        let (_, data) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(|e| run_err(format!("output is not f32: {e}")))?;
        Ok(data.to_vec())
    }

    /// Decodes the output and maps boxes back to frame pixels.
    pub fn postprocess(
        &self,
        output: &[f32],
        letterbox: &Letterbox,
        opts: &DetectOptions,
    ) -> Result<Vec<Detection>, DetectorError> {
        let boxes = decode::decode(self.form, output, self.info.class_names.len(), opts).map_err(
            |source| DetectorError::Output {
                path: self.info.path.clone(),
                source,
            },
        )?;
        Ok(boxes
            .into_iter()
            .map(|b| Detection {
                class_id: b.class_id,
                class: self.info.class_names[b.class_id].clone(),
                conf: b.conf,
                xyxy: if opts.clip_boxes {
                    letterbox.to_source(b.xyxy)
                } else {
                    letterbox.to_source_unclipped(b.xyxy)
                },
            })
            .collect())
    }

    /// The three stages in a row, timed.
    pub fn detect(
        &mut self,
        frame: &RgbImage,
        opts: &DetectOptions,
    ) -> Result<(Vec<Detection>, StageTimes), DetectorError> {
        self.detect_within(frame, opts, None)
    }

    /// [`Self::detect`] with the input no larger than `max_side` ([`Self::letterbox_within`]).
    pub fn detect_within(
        &mut self,
        frame: &RgbImage,
        opts: &DetectOptions,
        max_side: Option<u32>,
    ) -> Result<(Vec<Detection>, StageTimes), DetectorError> {
        let t0 = Instant::now();
        let input = self.preprocess_within(frame, max_side)?;
        let t1 = Instant::now();
        let output = self.infer(&input)?;
        let t2 = Instant::now();
        let detections = self.postprocess(&output, &input.letterbox, opts)?;
        let t3 = Instant::now();
        Ok((
            detections,
            StageTimes {
                preprocess: t1 - t0,
                inference: t2 - t1,
                postprocess: t3 - t2,
            },
        ))
    }
}

fn read_metadata(session: &Session) -> Result<Vec<(String, String)>, String> {
    let meta = session
        .metadata()
        .map_err(|e| format!("cannot read metadata: {e}"))?;
    let mut keys = meta
        .custom_keys()
        .map_err(|e| format!("cannot read metadata keys: {e}"))?;
    keys.sort();
    Ok(keys
        .into_iter()
        .filter_map(|k| meta.custom(&k).map(|v| (k, v)))
        .collect())
}
