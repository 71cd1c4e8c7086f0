//! Recorded sessions: `sessions/<id>/meta.json`, `session.jsonl` (one step per line, appended and
//! flushed to disk before the step's action runs) and `frames/<step>.jpg` (written atomically).
//! A `kill -9` at any moment loses no completed step, and the reader tolerates a truncated last
//! line. Format: docs/sessions.md.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::llm::Usage;
use crate::perception::{Detection, Perception};
use crate::policy::Attempt;
pub use crate::policy::Validation;
use crate::skills::{ActResult, InputEvent, SkillCall};

pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: not a session step: {reason}")]
    BadLine {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{path}: {reason}")]
    BadMeta { path: PathBuf, reason: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SessionError + '_ {
    move |source| SessionError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What a session was made with (never an API key: the config is masked).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub format_version: u32,
    pub vistawise_version: String,
    pub started: String,
    pub task: String,
    pub profile: String,
    pub policy: String,
    pub dry_run: bool,
    /// The effective config as TOML, secrets masked.
    pub config: String,
    pub detector: String,
    pub detector_sha256: String,
    pub kg: String,
    pub kg_sha256: String,
    pub window_title: String,
}

/// Milliseconds spent in each stage of a step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StageMs {
    pub capture: f64,
    /// Detection in all: the detector's letterbox, inference and decode below, then the slots,
    /// stack counts and screen marks read off the frame.
    pub detect: f64,
    /// The detector's own stages (absent in sessions recorded before they were kept).
    #[serde(default)]
    pub letterbox: f64,
    #[serde(default)]
    pub inference: f64,
    #[serde(default)]
    pub decode: f64,
    pub graph: f64,
    pub prompt: f64,
    pub policy: f64,
    pub act: f64,
}

/// One step, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub step: u64,
    /// Seconds since the session started.
    pub t: f64,
    /// Frame file relative to the session folder.
    pub frame: String,
    pub frame_w: u32,
    pub frame_h: u32,
    pub detections: Vec<Detection>,
    pub perception: Perception,
    /// The pooled graph as the prompt shows it.
    pub knowledge: String,
    pub inventory: String,
    pub environment: String,
    pub prompt: String,
    pub prompt_tokens: usize,
    /// The answers of the LLM (empty for the planner).
    pub attempts: Vec<Attempt>,
    /// The planner's or the LLM's reasoning for the chosen action.
    pub reasoning: String,
    pub action: Option<SkillCall>,
    /// "valid", or why no valid action came out.
    pub validation: Validation,
    /// Events the action expands to (planned before anything is sent).
    pub events: Vec<InputEvent>,
    /// Events actually sent (filled in by the next line's `outcome` of this step).
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    pub stage_ms: StageMs,
    /// Why the success check set a sighting of the target aside (`[success]`), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_note: Option<String>,
}

/// Written after the action ran: what was sent and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub step: u64,
    pub sent: Vec<InputEvent>,
    pub released: Vec<InputEvent>,
    pub result: ActResult,
    pub act_ms: f64,
}

/// One line of `session.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Line {
    Step(Box<StepRecord>),
    Outcome(Outcome),
    End {
        reason: String,
        steps: u64,
        cost_usd: f64,
    },
}

pub struct Recorder {
    dir: PathBuf,
    log: File,
    jpeg_quality: u8,
}

fn frame_name(step: u64) -> String {
    format!("frames/{step:06}.jpg")
}

/// The frame as a JPEG (jpeg-encoder: its AVX2 path encodes a 1280x720 frame several times
/// faster than the `image` crate's encoder), written atomically.
fn encode_and_write(path: &Path, frame: &image::RgbImage, quality: u8) -> Result<(), SessionError> {
    let fail = |reason: String| SessionError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(reason),
    };
    let (w, h) = frame.dimensions();
    let (Ok(w), Ok(h)) = (u16::try_from(w), u16::try_from(h)) else {
        return Err(fail(format!("a {w}x{h} frame is too large for a JPEG")));
    };
    let mut bytes = Vec::with_capacity(frame.as_raw().len() / 8);
    jpeg_encoder::Encoder::new(&mut bytes, quality.clamp(1, 100))
        .encode(frame.as_raw(), w, h, jpeg_encoder::ColorType::Rgb)
        .map_err(|e| fail(e.to_string()))?;
    write_atomically(path, &bytes)
}

/// A frame being saved by [`Recorder::save_frame_in_background`].
pub struct PendingFrame {
    rel: String,
    path: PathBuf,
    worker: std::io::Result<std::thread::JoinHandle<Result<std::time::Duration, SessionError>>>,
}

impl PendingFrame {
    /// Waits until the frame is on disk; its path relative to the session, and how long the
    /// encode and write took on their thread.
    pub fn wait(self) -> Result<(String, std::time::Duration), SessionError> {
        let failed = |reason: &str| SessionError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(reason.to_string()),
        };
        let worker = self
            .worker
            .map_err(|e| failed(&format!("cannot start the frame writer: {e}")))?;
        let took = worker
            .join()
            .map_err(|_| failed("the frame writer panicked"))??;
        Ok((self.rel, took))
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), SessionError> {
    crate::atomic_file::write(path, bytes).map_err(io(path))
}

/// A process killed while writing a frame leaves its temporary (`.partial`, or `.tmp` from
/// older recorders); the folder's next recorder removes them (the finished frames are renamed,
/// so a temporary is never a frame).
fn remove_partial_frames(frames: &Path) {
    let Ok(entries) = std::fs::read_dir(frames) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path
            .extension()
            .is_some_and(|x| x == "partial" || x == "tmp")
        {
            match std::fs::remove_file(&path) {
                Ok(()) => tracing::info!("removed a partly written frame: {}", path.display()),
                Err(e) => tracing::warn!("cannot remove {}: {e}", path.display()),
            }
        }
    }
}

impl Recorder {
    /// Creates `root/<id>/` with `meta.json`, an empty `session.jsonl` and `frames/`.
    pub fn create(
        root: &Path,
        id: &str,
        meta: &Meta,
        jpeg_quality: u8,
    ) -> Result<Self, SessionError> {
        let dir = root.join(id);
        std::fs::create_dir_all(dir.join("frames")).map_err(io(&dir))?;
        remove_partial_frames(&dir.join("frames"));
        let text = serde_json::to_string_pretty(meta).map_err(|e| SessionError::BadMeta {
            path: dir.join("meta.json"),
            reason: e.to_string(),
        })?;
        write_atomically(&dir.join("meta.json"), text.as_bytes())?;
        let log_path = dir.join("session.jsonl");
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(io(&log_path))?;
        Ok(Recorder {
            dir,
            log,
            jpeg_quality,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts saving a frame as `frames/<step>.jpg` on another thread, so the JPEG encode and
    /// its write overlap with the step's detection and decision; [`PendingFrame::wait`] before
    /// the step's line is appended keeps the promise that a recorded step has its frame.
    pub fn save_frame_in_background(
        &self,
        step: u64,
        frame: std::sync::Arc<image::RgbImage>,
    ) -> PendingFrame {
        let rel = frame_name(step);
        let path = self.dir.join(&rel);
        let target = path.clone();
        let quality = self.jpeg_quality;
        let started = std::time::Instant::now();
        let worker = std::thread::Builder::new()
            .name("frame-writer".into())
            .spawn(move || {
                encode_and_write(&target, &frame, quality)?;
                Ok(started.elapsed())
            });
        PendingFrame { rel, path, worker }
    }

    /// Appends a line and forces it to disk.
    pub fn append(&mut self, line: &Line) -> Result<(), SessionError> {
        let path = self.dir.join("session.jsonl");
        let mut text = serde_json::to_string(line).map_err(|e| SessionError::BadLine {
            path: path.clone(),
            line: 0,
            reason: e.to_string(),
        })?;
        text.push('\n');
        self.log.write_all(text.as_bytes()).map_err(io(&path))?;
        self.log.sync_data().map_err(io(&path))
    }
}

/// A session read back.
#[derive(Debug, Clone)]
pub struct Session {
    pub dir: PathBuf,
    pub meta: Meta,
    pub steps: Vec<StepRecord>,
    pub outcomes: Vec<Outcome>,
    pub end: Option<String>,
    /// The last line was cut off (the process died while writing it) and was skipped.
    pub truncated_tail: bool,
}

impl Session {
    pub fn load(dir: &Path) -> Result<Self, SessionError> {
        let meta_path = dir.join("meta.json");
        let meta_text = std::fs::read_to_string(&meta_path).map_err(io(&meta_path))?;
        let meta: Meta = serde_json::from_str(&meta_text).map_err(|e| SessionError::BadMeta {
            path: meta_path.clone(),
            reason: e.to_string(),
        })?;
        let log_path = dir.join("session.jsonl");
        let file = File::open(&log_path).map_err(io(&log_path))?;
        let lines: Vec<String> = BufReader::new(file)
            .lines()
            .collect::<Result<_, _>>()
            .map_err(io(&log_path))?;
        let mut session = Session {
            dir: dir.to_path_buf(),
            meta,
            steps: Vec::new(),
            outcomes: Vec::new(),
            end: None,
            truncated_tail: false,
        };
        let count = lines.len();
        for (i, text) in lines.iter().enumerate() {
            if text.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Line>(text) {
                Ok(Line::Step(s)) => session.steps.push(*s),
                Ok(Line::Outcome(o)) => session.outcomes.push(o),
                Ok(Line::End { reason, .. }) => session.end = Some(reason),
                // Only the last line may be cut short by a crash.
                Err(_) if i + 1 == count => session.truncated_tail = true,
                Err(e) => {
                    return Err(SessionError::BadLine {
                        path: log_path,
                        line: i + 1,
                        reason: e.to_string(),
                    });
                }
            }
        }
        Ok(session)
    }

    pub fn outcome(&self, step: u64) -> Option<&Outcome> {
        self.outcomes.iter().find(|o| o.step == step)
    }

    pub fn frame(&self, step: &StepRecord) -> Result<image::RgbImage, SessionError> {
        let path = self.dir.join(&step.frame);
        image::open(&path)
            .map(|i| i.to_rgb8())
            .map_err(|e| SessionError::Io {
                path,
                source: std::io::Error::other(e.to_string()),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::Validation;

    #[test]
    fn a_validation_reads_back_from_the_text_a_session_holds() {
        let all = [
            Validation::Valid,
            Validation::Done,
            Validation::PlannerStuck("no tree in view".into()),
            Validation::NoGoal(Some("Log was obtained".into())),
            Validation::NoGoal(None),
            Validation::LlmFailed("timed out".into()),
            Validation::Stopped,
            Validation::NoValidRecordedAnswer,
            Validation::NoAnswer,
            Validation::Refused("unknown skill `fly`".into()),
        ];
        for v in all {
            let json = serde_json::to_string(&v).expect("serialise");
            let back: Validation = serde_json::from_str(&json).expect("read back");
            assert_eq!(back, v, "{json}");
        }
        assert_eq!(
            serde_json::to_string(&Validation::Valid).expect("serialise"),
            "\"valid\"",
            "the session text is what it always was"
        );
        assert!(Validation::Valid.is_valid() && !Validation::Done.is_valid());
    }
}
