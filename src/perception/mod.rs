//! Perception: the YOLO detector (ONNX Runtime) and what its boxes mean for the agent.

mod ascii_font;
pub mod debug_position;
mod decode;
pub mod detections;
mod detector;
mod grid_angle;
mod letterbox;
mod model_info;
pub mod overlay;
pub mod runtime;
pub(crate) mod settings;
pub mod stack_count;
pub mod view_digest;

pub use ascii_font::AsciiFont;
pub use debug_position::{PositionError, PositionStyle};
pub use decode::{DetectOptions, iou};
pub use detections::{
    Detection, EnvironmentEntity, GuiScaleReading, InventoryIcon, Perception, ScaleSource,
    SplitContext,
};
pub use detector::{Detector, DetectorError, ModelInfo, PreparedInput, StageTimes};
pub use grid_angle::{GridAngle, grid_angle};
pub use letterbox::mask_areas;
pub use model_info::parse_names;
pub use stack_count::{CountStyle, CountUnit};
