//! Seeing one frame: detection, the graph view and the success check, in the order every driver
//! of the loop runs them.

use std::time::Instant;

use image::RgbImage;

use super::pipeline::{GraphView, Parts, graph_view, ms_since, perceive};
use super::success::{SuccessCheck, Verdict};
use crate::perception::{self, Detection, Detector, Perception};
use crate::skills::gui_scale::GuiScaleTracker;

/// What one frame shows the agent: the detector's boxes, their reading, the pooled graph and the
/// success check's verdict, with how long seeing took.
pub struct Seen {
    pub detections: Vec<Detection>,
    pub perception: Perception,
    pub graph: GraphView,
    pub verdict: Verdict,
    /// Detection, its reading included, ms.
    pub detect_ms: f64,
    /// The detector's own stages (letterbox, inference, decode), ms.
    pub detector_ms: [f64; 3],
    /// The graph view and the success check, ms.
    pub graph_ms: f64,
}

/// Detection, the graph view and the success check, as every driver of the loop does them
/// (play, replay, the bench). Success is read off the screen before anything is decided; a
/// sighting the open inventory refuted is left out of what the policy sees.
pub fn see(
    parts: &Parts,
    detector: &mut Detector,
    success: &mut SuccessCheck,
    gui_scale: &mut GuiScaleTracker,
    frame: &RgbImage,
) -> Result<Seen, perception::DetectorError> {
    let t = Instant::now();
    let (detections, mut perception, times) = perceive(detector, frame, parts, gui_scale)?;
    let detect_ms = ms_since(t);
    let t = Instant::now();
    let mut graph = graph_view(parts, &perception);
    let verdict = success.judge(parts, &graph, &perception);
    if success.drop_refuted(parts, &mut perception) > 0 {
        graph = graph_view(parts, &perception);
    }
    Ok(Seen {
        detections,
        perception,
        graph,
        verdict,
        detect_ms,
        detector_ms: times.ms(),
        graph_ms: ms_since(t),
    })
}
