//! The step benchmark: what one agent step costs above its floor, the detector's bare ONNX
//! Runtime run on a ready tensor. It runs the play loop's stages on real frames (capture from a
//! real X window, letterbox, inference, decode, the rest of perception, graph, prompt, planner
//! and validation, recording) and reports each stage's minimum and median, and the step's
//! overhead above the floor as a ratio: ratios, not absolute times, compare machines.

use std::sync::Arc;
use std::time::Instant;

use image::RgbImage;
use serde::Serialize;

use super::memory_step::LongTerm;
use super::pipeline::{Parts, ms_since};
use super::session::{Line, Recorder, SessionError};
use super::session_report::median;
use super::step::{Agent, LlmFailure, StepError};
use crate::capture::FrameWindow;
use crate::capture::frame::CaptureError;
use crate::capture::{PixelPath, WindowCapture};
use crate::perception::PreparedInput;
use crate::perception::{Detector, DetectorError};
use crate::policy::Asker;
use crate::policy::Planner;
use crate::skills::{ActResult, StopFlag};

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The agent's step (detection, or the policy's LLM where it fails the step).
    #[error(transparent)]
    Step(#[from] StepError),
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Detector(#[from] DetectorError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("no frames to play: {0}")]
    NoFrames(String),
    #[error("cannot start the async runtime: {0}")]
    Runtime(String),
}

/// Where a step's pixels come from.
pub enum Pixels {
    /// The frames as they are: no capture stage.
    Frames,
    /// Each frame shown in a window of our own, then captured from it (timed).
    OwnWindow {
        window: Box<FrameWindow>,
        capture: Box<WindowCapture>,
    },
    /// The game window, captured as it is (the frames only set the count of steps).
    Game(Box<WindowCapture>),
}

impl Pixels {
    /// The step's frame for `source`, the milliseconds its capture took, and whether a frame
    /// shown in the bench's own window came back with other pixels.
    fn frame(&mut self, source: &RgbImage) -> Result<(RgbImage, f64, bool), BenchError> {
        Ok(match self {
            Pixels::Frames => (source.clone(), 0.0, false),
            Pixels::OwnWindow { window, capture } => {
                window.show(source)?;
                let t = Instant::now();
                let grabbed = capture.grab()?.0;
                let took = ms_since(t);
                let differs = grabbed != *source;
                (grabbed, took, differs)
            }
            Pixels::Game(capture) => {
                let t = Instant::now();
                (capture.grab()?.0, ms_since(t), false)
            }
        })
    }
}

/// Minimum and median of one stage, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StageStat {
    pub stage: String,
    pub min_ms: f64,
    pub median_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchReport {
    pub steps: usize,
    pub frame_w: u32,
    pub frame_h: u32,
    /// The bare inference on a ready tensor, run alone just before each step.
    pub floor: StageStat,
    /// The step's stages in the loop's order; `step` is their sum.
    pub stages: Vec<StageStat>,
    /// The frame writer's own time (JPEG encode and write, on its thread, overlapping the
    /// step: the `record` stage is only what the step waits for, plus the line's write).
    pub frame_writer: StageStat,
    /// The median over steps of (step - its floor) / its floor: each step against the bare run
    /// just before it, so the machine's drift during the bench cancels out.
    pub overhead: f64,
    /// How the frames were captured (`None`: not captured, `--capture none`).
    pub capture: Option<PixelPath>,
    /// Frames shown in the bench's own window that came back with other pixels (0, or the
    /// capture is broken and its times mean nothing).
    pub capture_mismatches: usize,
}

/// The stages a step is split into, in the loop's order.
pub const STAGES: [&str; 10] = [
    "capture",
    "letterbox",
    "inference",
    "decode",
    "slots+counts",
    "graph",
    "prompt",
    "policy+validate",
    "record",
    "step",
];

/// What a step is played with: the agent's parts, the planner as the policy, and a recorder
/// (a throw-away session).
pub struct StepParts<'a> {
    pub parts: &'a Parts,
    pub detector: &'a mut Detector,
    pub planner: &'a mut Planner,
    pub recorder: &'a mut Recorder,
}

/// Runs `warmup` bare inferences, then `steps` steps over `frames` (in a loop), each after one
/// timed bare inference (its floor); `progress` is called after each step.
pub fn run(
    with: StepParts,
    frames: &[RgbImage],
    pixels: &mut Pixels,
    (warmup, steps): (usize, usize),
    progress: &mut dyn FnMut(usize),
) -> Result<BenchReport, BenchError> {
    let first = frames
        .first()
        .ok_or_else(|| BenchError::NoFrames("the frame list is empty".into()))?;
    let input = with.detector.preprocess(first)?;
    for _ in 0..warmup {
        with.detector.infer(&input)?;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| BenchError::Runtime(e.to_string()))?;
    let StepParts {
        parts,
        detector,
        planner,
        recorder,
    } = with;
    let mut long_term = LongTerm::disabled(&parts.config.memory);
    let mut bench = Bench {
        agent: Agent::new(parts, detector, planner, &mut long_term, LlmFailure::Error),
        recorder,
        runtime,
        started: Instant::now(),
        samples: Samples::new(steps),
        frame_size: (first.width(), first.height()),
    };
    for i in 0..steps {
        bench.step(i, &input, &frames[i % frames.len()], pixels)?;
        progress(i + 1);
    }
    Ok(bench.report(steps, pixels))
}

/// Every sample the bench takes, a list per measure.
struct Samples {
    floor: Vec<f64>,
    /// One list per [`STAGES`] entry.
    stages: Vec<Vec<f64>>,
    writer: Vec<f64>,
    /// (step - floor) / floor, per step.
    ratios: Vec<f64>,
    capture_mismatches: usize,
}

impl Samples {
    fn new(steps: usize) -> Self {
        Samples {
            floor: Vec::with_capacity(steps),
            stages: vec![Vec::with_capacity(steps); STAGES.len()],
            writer: Vec::with_capacity(steps),
            ratios: Vec::with_capacity(steps),
            capture_mismatches: 0,
        }
    }
}

/// The bench under way: the agent (the planner its policy), the throw-away session, and the
/// samples so far.
struct Bench<'a> {
    agent: Agent<'a>,
    recorder: &'a mut Recorder,
    /// The planner asks no LLM; the agent's step takes a runtime all the same.
    runtime: tokio::runtime::Runtime,
    started: Instant,
    samples: Samples,
    /// The last step's frame size.
    frame_size: (u32, u32),
}

impl Bench<'_> {
    /// Step `i` on `source`: its floor, then the play loop's stages, each timed.
    fn step(
        &mut self,
        i: usize,
        input: &PreparedInput,
        source: &RgbImage,
        pixels: &mut Pixels,
    ) -> Result<(), BenchError> {
        let s = &mut self.samples;
        let t = Instant::now();
        self.agent.detector().infer(input)?;
        s.floor.push(ms_since(t));
        let (frame, capture_ms, differs) = pixels.frame(source)?;
        s.capture_mismatches += usize::from(differs);
        self.frame_size = (frame.width(), frame.height());
        let number = i as u64 + 1;
        let frame = Arc::new(frame);
        let pending = self
            .recorder
            .save_frame_in_background(number, frame.clone());

        let never = StopFlag::default();
        let asker = Asker {
            runtime: &self.runtime,
            stop: &never,
        };
        let mut step = self.agent.step(number, &frame, &asker)?;
        step.stage_ms.capture = capture_ms;
        let m = &step.stage_ms;
        let detector_ms = m.letterbox + m.inference + m.decode;
        let stages = [
            m.capture,
            m.letterbox,
            m.inference,
            m.decode,
            m.detect - detector_ms,
            m.graph,
            m.prompt,
            m.policy,
        ];
        for (k, v) in stages.into_iter().enumerate() {
            s.stages[k].push(v);
        }

        let t = Instant::now();
        let (frame_file, took) = pending.wait()?;
        let record = step.record(frame_file, self.started.elapsed().as_secs_f64());
        self.recorder.append(&Line::Step(Box::new(record)))?;
        s.stages[8].push(ms_since(t));
        s.writer.push(took.as_secs_f64() * 1e3);
        let total: f64 = s.stages[..9].iter().map(|v| v[i]).sum();
        s.stages[9].push(total);
        s.ratios
            .push((total - s.floor[i]) / s.floor[i].max(f64::MIN_POSITIVE));

        // The planner goes on as if its call had run, so the prompt's memory grows as in play.
        self.agent.acted(&step, Some(&ActResult::DryRun));
        Ok(())
    }

    fn report(self, steps: usize, pixels: &Pixels) -> BenchReport {
        let s = self.samples;
        BenchReport {
            steps,
            frame_w: self.frame_size.0,
            frame_h: self.frame_size.1,
            floor: stat("floor", s.floor),
            stages: STAGES
                .iter()
                .zip(s.stages)
                .map(|(name, v)| stat(name, v))
                .collect(),
            frame_writer: stat("frame writer", s.writer),
            overhead: median(s.ratios),
            capture_mismatches: s.capture_mismatches,
            capture: match pixels {
                Pixels::Frames => None,
                Pixels::OwnWindow { capture, .. } | Pixels::Game(capture) => {
                    Some(capture.pixel_path())
                }
            },
        }
    }
}

fn stat(stage: &str, v: Vec<f64>) -> StageStat {
    StageStat {
        stage: stage.to_string(),
        min_ms: v.iter().copied().reduce(f64::min).unwrap_or(0.0),
        median_ms: median(v),
    }
}

impl BenchReport {
    /// The report as a table, with each stage's share of the floor.
    pub fn table(&self) -> String {
        let floor = self.floor.median_ms.max(f64::MIN_POSITIVE);
        let mut out = format!(
            "{} steps on {}x{} frames{}\n| stage | min ms | median ms | x floor |\n|---|---:|---:|---:|\n",
            self.steps,
            self.frame_w,
            self.frame_h,
            match self.capture {
                Some(path) => format!(", captured through {}", path.describe()),
                None => ", no capture".to_string(),
            }
        );
        for s in std::iter::once(&self.floor).chain(&self.stages) {
            out += &format!(
                "| {} | {:.2} | {:.2} | {:.3} |\n",
                s.stage,
                s.min_ms,
                s.median_ms,
                s.median_ms / floor
            );
        }
        if self.capture_mismatches > 0 {
            out += &format!(
                "WARNING: {} captured frames differ from the frame shown: the capture is wrong\n",
                self.capture_mismatches
            );
        }
        out += &format!(
            "frame writer (on its own thread): min {:.2} ms, median {:.2} ms\n\
             step overhead above the floor (median over steps of each against its own): {:.1}%\n",
            self.frame_writer.min_ms,
            self.frame_writer.median_ms,
            self.overhead * 100.0
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_the_minimum_and_the_median() {
        let s = stat("x", vec![5.0, 1.0, 3.0, 2.0]);
        assert_eq!((s.min_ms, s.median_ms), (1.0, 2.5));
        let s = stat("x", vec![4.0, 1.0, 9.0]);
        assert_eq!((s.min_ms, s.median_ms), (1.0, 4.0));
        assert_eq!(stat("x", vec![]).median_ms, 0.0);
    }
}
