//! `vistawise play`: the agent loop. Capture the game window, detect, embed, pool, prompt, ask
//! the policy, validate, record the step (flushed before anything moves), act, remember.
//! It ends on success (the target in the inventory), on the step/time/cost limits, on the
//! emergency stop or Ctrl-C, always with held input released and the session closed.

use std::time::{Duration, Instant};

use crate::capture::frame::CaptureError;
use crate::capture::window::WindowCapture;
use crate::capture::windows::WindowInfo;
use crate::longterm::{LongTermMemory, Query, Tracker, TrackerEvent, episode, howto};
use crate::perception::{Detector, DetectorError};
use crate::policy::planner::Planner;
use crate::policy::subgoal::SubgoalPolicy;
use crate::policy::{ChatOptions, LlmClient, LlmError, LlmPolicy, MemoryStack};
use crate::skills::{
    EnigoBackend, ExecError, Executed, InputError, StopFlag, StopReason, WindowRect, execute,
};

use super::pipeline::{self, Decision, Parts, StepHead, ms_since};
use super::session::{Line, Meta, Outcome, Recorder, SessionError, StageMs};
use super::success::{SuccessCheck, Verdict};

pub enum PolicyChoice {
    Llm(Box<LlmPolicy>),
    Planner(Box<Planner>),
    /// The LLM names the next item, the planner obtains it (`policy::subgoal`).
    Subgoal(Box<SubgoalPolicy>),
}

impl PolicyChoice {
    pub fn name(&self) -> &'static str {
        match self {
            PolicyChoice::Llm(_) => "llm",
            PolicyChoice::Planner(_) => "planner",
            PolicyChoice::Subgoal(_) => "subgoal",
        }
    }
}

/// The long-term memory of a play session: the selected modules, the teacher the how-to memory
/// asks (the LLM endpoint), and what the episode has done so far.
pub struct LongTerm {
    pub memory: LongTermMemory,
    pub teacher: Option<LlmClient>,
    tracker: Tracker,
    asked: std::collections::BTreeSet<String>,
}

impl LongTerm {
    pub fn new(memory: LongTermMemory, teacher: Option<LlmClient>, goal: &str) -> Self {
        LongTerm {
            memory,
            teacher,
            tracker: Tracker::new(goal),
            asked: Default::default(),
        }
    }

    /// No module: the loop behaves as without long-term memory.
    pub fn disabled(config: &crate::config::MemoryConfig) -> Self {
        Self::new(LongTermMemory::disabled(config), None, "")
    }

    fn store(&mut self, events: Vec<TrackerEvent>, kg: &crate::knowledge::KnowledgeGraph) {
        for ev in events {
            if let Err(e) = self.memory.store(&ev, kg) {
                tracing::warn!("long-term memory: cannot store: {e}");
            }
        }
    }

    /// One step: store what finished, ask the teacher when the sub-goal has no how-to, and
    /// render the `{long_term_memory}` text. Memory errors are logged, never fatal. Returns
    /// the text and the teacher's tokens.
    pub fn step(
        &mut self,
        parts: &Parts,
        q: &Query,
        runtime: &tokio::runtime::Runtime,
        stop: &StopFlag,
    ) -> (String, u64) {
        if self.memory.is_empty() {
            return (String::new(), 0);
        }
        let kg = &parts.kg;
        let events = self.tracker.observe(q, &|plan: &str, before: &Query| {
            episode::missing_tool(kg, plan, &before.inventory)
        });
        self.store(events, kg);
        let mut tokens = 0;
        if let (Some(item), Some(teacher)) = (&q.subgoal, &self.teacher)
            && !self.asked.contains(item)
            && self.memory.lacks_howto(item, kg).unwrap_or(false)
        {
            self.asked.insert(item.clone());
            let options = ChatOptions {
                max_tokens: parts.config.llm.max_tokens,
                temperature: parts.config.llm.temperature,
                ..ChatOptions::default()
            };
            let asked = until_stopped(
                runtime,
                stop,
                teacher.chat(&howto::question(kg, item), &options),
            );
            match asked {
                None => tracing::info!("stopped while asking the teacher about {item}"),
                Some(Ok(c)) => {
                    if let Some(u) = c.response.usage() {
                        tokens = u.total();
                    }
                    let answer = c.response.text();
                    match self.memory.store_howto(item, &answer) {
                        Ok(Ok(id)) => tracing::info!("how-to for {item} stored as entry {id}"),
                        Ok(Err(e)) => tracing::warn!("how-to for {item} refused: {e}"),
                        Err(e) => tracing::warn!("long-term memory: {e}"),
                    }
                }
                Some(Err(e)) => tracing::warn!("the teacher did not answer about {item}: {e}"),
            }
        }
        let text = self.memory.section(q, kg).unwrap_or_else(|e| {
            tracing::warn!("long-term memory: no section this step: {e}");
            String::new()
        });
        (text, tokens)
    }

    /// The step's action ran with this result.
    pub fn acted(&mut self, q: &Query, plan: &str, result: &str) {
        if !self.memory.is_empty() {
            self.tracker.acted(q, plan, result);
        }
    }

    /// The episode is over: store the last attempt and, on success, the exemplar.
    pub fn finish(&mut self, success: bool, end: &str, kg: &crate::knowledge::KnowledgeGraph) {
        if !self.memory.is_empty() {
            let events = self.tracker.finish(success, end);
            self.store(events, kg);
        }
    }
}

#[derive(Debug, Clone)]
pub struct PlayOptions {
    pub dry_run: bool,
    /// 0 = no limit.
    pub max_steps: u64,
    pub max_minutes: f64,
    pub max_cost_usd: f64,
    /// Wait after an action before the next capture (`game.settle_ms`).
    pub settle: Duration,
    /// Set by Ctrl-C/SIGTERM, the emergency stop and the window watch.
    pub stop: StopFlag,
}

/// Where frames come from: the game window, or recorded frames played back in order (a full
/// loop with no display, e.g. on a session's `frames/`).
pub enum FrameSource {
    Window(Box<WindowCapture>),
    Files {
        paths: Vec<std::path::PathBuf>,
        next: usize,
    },
}

impl FrameSource {
    /// The images of a folder (a session folder means its `frames/`), in name order.
    pub fn files(dir: &std::path::Path) -> std::io::Result<Self> {
        Ok(FrameSource::Files {
            paths: frame_paths(dir)?,
            next: 0,
        })
    }

    /// The next frame; `None` when recorded frames run out.
    fn next(&mut self) -> Result<Option<(image::RgbImage, WindowInfo)>, CaptureError> {
        match self {
            FrameSource::Window(window) => window.grab().map(Some),
            FrameSource::Files { paths, next } => {
                let Some(path) = paths.get(*next) else {
                    return Ok(None);
                };
                *next += 1;
                let img = read_frame(path)?;
                let info = WindowInfo {
                    id: 0,
                    title: path.display().to_string(),
                    app_name: "recorded frames".into(),
                    x: 0,
                    y: 0,
                    width: img.width(),
                    height: img.height(),
                    minimized: false,
                    focused: true,
                };
                Ok(Some((img, info)))
            }
        }
    }
}

/// The images (.jpg, .jpeg, .png) of a folder, in name order; a session folder means its
/// `frames/`.
pub fn frame_paths(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let frames = dir.join("frames");
    let dir = if frames.is_dir() {
        frames
    } else {
        dir.to_path_buf()
    };
    let mut paths: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| matches!(x.to_ascii_lowercase().as_str(), "jpg" | "jpeg" | "png"))
        })
        .collect();
    paths.sort();
    Ok(paths)
}

/// A recorded frame, refused when it is cut short: the JPEG decoder fills a truncated file's
/// missing rows with grey and reports nothing, and a step played on that is a step on a frame
/// nobody saw.
fn read_frame(path: &std::path::Path) -> Result<image::RgbImage, CaptureError> {
    let bad = |reason: String| CaptureError::Frame {
        path: path.display().to_string(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let jpeg = bytes.starts_with(&[0xFF, 0xD8]);
    // Some writers pad after the end-of-image marker; the marker must still be there.
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    if jpeg && !bytes[..end].ends_with(&[0xFF, 0xD9]) {
        return Err(bad(format!(
            "the JPEG is cut short ({} bytes, no end-of-image marker)",
            bytes.len()
        )));
    }
    image::load_from_memory(&bytes)
        .map(|img| img.to_rgb8())
        .map_err(|e| bad(e.to_string()))
}

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Detector(#[from] DetectorError),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlaySummary {
    pub steps: u64,
    pub end: String,
    pub success: bool,
    pub cost_usd: f64,
}

/// What the live status line shows.
#[derive(Debug, Clone, Default)]
pub struct Status {
    pub step: u64,
    pub last_action: String,
    pub stage_ms: StageMs,
    pub tokens: u64,
    /// Of `tokens`, prompt tokens the endpoint served from its prefix cache.
    pub cached_tokens: u64,
    pub cost_usd: f64,
    pub note: String,
}

// The loop's parts are independent borrows (the caller keeps each); a struct of them would only
// move the list.
#[allow(clippy::too_many_arguments)]
pub fn play(
    parts: &Parts,
    detector: &mut Detector,
    policy: &mut PolicyChoice,
    source: &mut FrameSource,
    options: &PlayOptions,
    recorder: &mut Recorder,
    long_term: &mut LongTerm,
    on_status: &mut dyn FnMut(&Status),
) -> Result<PlaySummary, AgentError> {
    let stop = &options.stop;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| AgentError::Runtime(e.to_string()))?;
    let started = Instant::now();
    let mut memory = MemoryStack::default();
    let mut success = SuccessCheck::default();
    let mut backend: Option<EnigoBackend> = None;
    let mut status = Status::default();
    let mut step: u64 = 0;
    let end = |reason: String, success: bool, status: &Status, step: u64| PlaySummary {
        steps: step,
        end: reason,
        success,
        cost_usd: status.cost_usd,
    };
    // Every way out of the loop, an error too, ends with the session's end record.
    let outcome = (|| -> Result<PlaySummary, AgentError> {
        let summary = loop {
            if let Some(reason) = stop.reason() {
                if reason == StopReason::WindowLost && !options.dry_run {
                    status.note = "paused: the game window is not focused".into();
                    on_status(&status);
                    std::thread::sleep(Duration::from_millis(300));
                    // The watcher sets it again while the window stays unfocused.
                    stop.clear_window_lost();
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
                break end(format!("stopped: {reason}"), false, &status, step);
            }
            if options.max_steps > 0 && step >= options.max_steps {
                break end(
                    format!("step limit ({}) reached", options.max_steps),
                    false,
                    &status,
                    step,
                );
            }
            if options.max_minutes > 0.0
                && started.elapsed().as_secs_f64() / 60.0 >= options.max_minutes
            {
                break end(
                    format!("time limit ({} min) reached", options.max_minutes),
                    false,
                    &status,
                    step,
                );
            }
            if options.max_cost_usd > 0.0 && status.cost_usd >= options.max_cost_usd {
                break end(
                    format!("cost cap (${:.2}) reached", options.max_cost_usd),
                    false,
                    &status,
                    step,
                );
            }

            // Capture.
            let t = Instant::now();
            let (frame, info) = match source.next() {
                Ok(Some(x)) => x,
                Ok(None) => break end("no more recorded frames".into(), false, &status, step),
                Err(CaptureError::Gone(_)) => {
                    break end("the game window disappeared".into(), false, &status, step);
                }
                Err(e) => return Err(e.into()),
            };
            if !options.dry_run && !info.focused {
                status.note = "paused: the game window is not focused".into();
                on_status(&status);
                std::thread::sleep(Duration::from_millis(500));
                continue;
            }
            status.note.clear();
            let mut stage = StageMs {
                capture: ms_since(t),
                ..StageMs::default()
            };
            step += 1;
            // The frame is encoded and written while the step is worked out; the step's line
            // waits for it below.
            let frame = std::sync::Arc::new(frame);
            let pending_frame = recorder.save_frame_in_background(step, frame.clone());

            // Perception and graph.
            let t = Instant::now();
            let (detections, mut perception, times) = pipeline::perceive(detector, &frame, parts)?;
            stage.detect = ms_since(t);
            [stage.letterbox, stage.inference, stage.decode] = times.ms();
            let t = Instant::now();
            let mut graph = pipeline::graph_view(parts, &perception);
            // Success is read off the screen before deciding anything else; a sighting the open
            // inventory refuted is left out of what the policy sees.
            let verdict = success.judge(parts, &graph, perception.frame_w, perception.frame_h);
            if success.drop_refuted(parts, &mut perception) > 0 {
                graph = pipeline::graph_view(parts, &perception);
            }
            stage.graph = ms_since(t);
            let t = Instant::now();
            let query = pipeline::memory_query(parts, &graph);
            let (long_term_text, teacher_tokens) = long_term.step(parts, &query, &runtime, stop);
            status.tokens += teacher_tokens;
            let (prompt, prompt_tokens) =
                pipeline::build_prompt_with(parts, &perception, &graph, &memory, &long_term_text);
            stage.prompt = ms_since(t);

            let t = Instant::now();
            let decision = match verdict.decision(parts, perception.frame_w, perception.frame_h) {
                Some(d) => d,
                None => match policy {
                    PolicyChoice::Planner(p) => {
                        pipeline::planner_decision(parts, p, &perception, &graph)
                    }
                    PolicyChoice::Subgoal(sp) => match until_stopped(
                        &runtime,
                        stop,
                        pipeline::subgoal_decision(
                            parts,
                            sp,
                            &perception,
                            &graph,
                            &memory,
                            &long_term_text,
                        ),
                    ) {
                        Some(Ok(d)) => d,
                        Some(Err(e)) => llm_failure(e),
                        None => Decision {
                            validation: "stopped while waiting for the LLM".into(),
                            cost_usd: Some(0.0),
                            ..Decision::default()
                        },
                    },
                    PolicyChoice::Llm(llm) => match until_stopped(
                        &runtime,
                        stop,
                        pipeline::llm_decision(parts, llm, &prompt, &perception),
                    ) {
                        Some(Ok(d)) => revise(
                            parts,
                            llm,
                            &prompt,
                            &perception,
                            &query,
                            long_term,
                            &runtime,
                            stop,
                            d,
                        ),
                        Some(Err(e)) => llm_failure(e),
                        None => Decision {
                            validation: "stopped while waiting for the LLM".into(),
                            cost_usd: Some(0.0),
                            ..Decision::default()
                        },
                    },
                },
            };
            stage.policy = ms_since(t);
            status.cost_usd += decision.cost_usd.unwrap_or(0.0);
            status.tokens += decision.usage.total();
            status.cached_tokens += decision.usage.cached_tokens;

            let (frame_file, _) = pending_frame.wait()?;
            let record = pipeline::step_record(
                StepHead {
                    step,
                    t: started.elapsed().as_secs_f64(),
                    frame: frame_file,
                    frame_w: frame.width(),
                    frame_h: frame.height(),
                    stage_ms: stage.clone(),
                    success_note: verdict.note(),
                },
                detections,
                &perception,
                &graph,
                (prompt, prompt_tokens),
                &decision,
            );
            // Flushed to disk before anything moves.
            recorder.append(&Line::Step(Box::new(record)))?;

            if decision.done || verdict == Verdict::Obtained {
                break end(
                    "success: the target is in the inventory".into(),
                    true,
                    &status,
                    step,
                );
            }
            let Some(action) = decision.action else {
                status.last_action = format!("(no action: {})", decision.validation);
                on_status(&status);
                continue;
            };

            // Act.
            let t = Instant::now();
            let mut executed = Executed::default();
            let result = if options.dry_run {
                "dry run: nothing sent".to_string()
            } else {
                let rect = WindowRect {
                    x: info.x,
                    y: info.y,
                    w: info.width,
                    h: info.height,
                };
                let b = match backend.as_mut() {
                    Some(b) => {
                        b.set_window(rect);
                        b
                    }
                    None => backend.insert(EnigoBackend::for_camera(rect, &parts.profile.camera)?),
                };
                let result = match execute(b, &action.events, stop, &mut executed) {
                    Ok(()) => "done".to_string(),
                    Err(ExecError::Stopped(r)) => format!("stopped: {r}"),
                    Err(ExecError::Input(e)) => format!("failed: {e}"),
                };
                std::thread::sleep(options.settle);
                result
            };
            stage.act = ms_since(t);
            recorder.append(&Line::Outcome(Outcome {
                step,
                sent: executed.events.clone(),
                released: executed.released.clone(),
                result: result.clone(),
                act_ms: stage.act,
            }))?;
            long_term.acted(&query, &action.call.to_string(), &result);
            memory.push(step, action.call.clone(), &action.reasoning);
            memory.set_outcome(result);
            status.step = step;
            status.last_action = action.call.to_string();
            status.stage_ms = stage;
            on_status(&status);
        };
        Ok(summary)
    })();
    let summary = match outcome {
        Ok(summary) => summary,
        Err(e) => {
            let reason = format!("error: {e}");
            long_term.finish(false, &reason, &parts.kg);
            if let Err(write) = recorder.append(&Line::End {
                reason,
                steps: step,
                cost_usd: status.cost_usd,
            }) {
                tracing::warn!("cannot write the session's end record: {write}");
            }
            return Err(e);
        }
    };
    long_term.finish(summary.success, &summary.end, &parts.kg);
    recorder.append(&Line::End {
        reason: summary.end.clone(),
        steps: summary.steps,
        cost_usd: summary.cost_usd,
    })?;
    Ok(summary)
}

/// MINDSTORES' outcome prediction on the LLM's action: while the experience store predicts it
/// fails, the LLM is asked again with the prediction, at most `memory.max_revisions` times.
/// Every answer's attempts, tokens and cost are kept.
#[allow(clippy::too_many_arguments)]
fn revise(
    parts: &Parts,
    llm: &LlmPolicy,
    prompt: &str,
    perception: &crate::perception::Perception,
    query: &Query,
    long_term: &mut LongTerm,
    runtime: &tokio::runtime::Runtime,
    stop: &StopFlag,
    mut decision: Decision,
) -> Decision {
    for _ in 0..parts.config.memory.max_revisions {
        let Some(plan) = decision.action.as_ref().map(|a| a.call.to_string()) else {
            break;
        };
        let prediction = match long_term.memory.predict(query, &plan) {
            Ok(Some(p)) if !p.success => p,
            Ok(_) => break,
            Err(e) => {
                tracing::warn!("long-term memory: no outcome prediction: {e}");
                break;
            }
        };
        let feedback = prediction.feedback(&plan);
        let revised_prompt = format!("{prompt}\n\n{feedback}");
        let asked = until_stopped(
            runtime,
            stop,
            pipeline::llm_decision(parts, llm, &revised_prompt, perception),
        );
        match asked {
            // Stopped: the first answer stands; the loop ends before it is acted on.
            None => break,
            Some(Ok(mut next)) => {
                let mut attempts = std::mem::take(&mut decision.attempts);
                attempts.append(&mut next.attempts);
                next.attempts = attempts;
                next.usage.add(decision.usage);
                next.cost_usd = match (decision.cost_usd, next.cost_usd) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
                next.reasoning = format!("{feedback}\n{}", next.reasoning);
                if next.action.is_none() {
                    // Keep the first action rather than none.
                    next.action = decision.action.take();
                }
                decision = next;
            }
            Some(Err(e)) => {
                tracing::warn!("revision request failed: {e}");
                break;
            }
        }
    }
    decision
}

/// Runs an LLM request until it ends or a stop is requested (looked at every 50 ms): Ctrl-C or
/// the emergency stop cut a slow request or a retry's back-off at once instead of after it.
/// `None` when stopped. A lost focus is no stop here: the loop pauses on it before acting.
pub fn until_stopped<F: std::future::Future>(
    runtime: &tokio::runtime::Runtime,
    stop: &StopFlag,
    request: F,
) -> Option<F::Output> {
    let stopped = async {
        while matches!(stop.reason(), None | Some(StopReason::WindowLost)) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    runtime.block_on(async {
        tokio::select! {
            out = request => Some(out),
            () = stopped => None,
        }
    })
}

/// An LLM that cannot be reached ends no session by itself: the step records why and the loop
/// goes on (the limits still apply).
fn llm_failure(e: LlmError) -> Decision {
    Decision {
        validation: format!("LLM request failed: {e}"),
        cost_usd: Some(0.0),
        ..Decision::default()
    }
}

/// A fresh session id: UTC date and time plus the task.
pub fn session_id(task: &str) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("{}-{task}", httpdate_compact(secs))
}

/// YYYYMMDD-HHMMSS (UTC) without a date crate.
fn httpdate_compact(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}{month:02}{d:02}-{h:02}{m:02}{s:02}")
}

/// Everything `meta.json` says, given the parts.
pub fn meta(
    parts: &Parts,
    policy: &str,
    dry_run: bool,
    detector_sha: String,
    kg_sha: String,
) -> Meta {
    Meta {
        format_version: super::session::FORMAT_VERSION,
        vistawise_version: env!("CARGO_PKG_VERSION").to_string(),
        started: httpdate::fmt_http_date(std::time::SystemTime::now()),
        task: parts.task.id.clone(),
        profile: parts.task.profile.clone(),
        policy: policy.to_string(),
        dry_run,
        config: parts.config.to_masked_toml(),
        detector: parts.config.detector.model.display().to_string(),
        detector_sha256: detector_sha,
        kg: parts.kg.source.display().to_string(),
        kg_sha256: kg_sha,
        window_title: parts.config.game.window_title.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_sortable_utc_times() {
        assert_eq!(httpdate_compact(0), "19700101-000000");
        // 2026-11-22 13:45:07 UTC
        assert_eq!(httpdate_compact(1_795_355_107), "20261122-134507");
        assert_eq!(httpdate_compact(951_782_400), "20000229-000000");
    }
}
