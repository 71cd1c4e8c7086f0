//! Perception: the YOLO detector (ONNX Runtime) and what its boxes mean for the agent.

pub mod ascii_font;
pub mod decode;
pub mod detections;
pub mod detector;
mod letterbox;
pub mod model_info;
pub mod overlay;
pub mod runtime;
pub(crate) mod settings;
pub mod stack_count;
pub mod view_digest;

pub use decode::DetectOptions;
pub use detections::{
    Detection, EnvironmentEntity, GuiScaleReading, InventoryIcon, Perception, ScaleSource,
    SplitContext,
};
pub use detector::{Detector, DetectorError, ModelInfo, StageTimes};
pub use letterbox::mask_areas;
pub use stack_count::{CountStyle, CountUnit};
