//! `vistawise play`: the agent loop. Take a frame (`capture::source`), the agent's step on it
//! (`step`: detect, embed, pool, prompt, decide), record the step (flushed before anything
//! moves), act (`skills`), tell the agent what the action did.
//! It ends on success (the target in the inventory), on the step/time/cost limits, on the
//! emergency stop or Ctrl-C, always with held input released and the session closed.

use std::time::{Duration, Instant};

use crate::capture::frame::CaptureError;
use crate::capture::windows::WindowInfo;
use crate::capture::{FrameSource, SourcedFrame};
use crate::perception::Detector;
use crate::skills::{
    ActResult, EnigoBackend, Executed, InputError, StopFlag, StopReason, WindowRect, execute,
};

pub use super::end::EndReason;
pub use super::memory_step::LongTerm;
use super::pipeline::{Parts, ms_since};
use super::session::{Line, Meta, Outcome, Recorder, SessionError, StageMs};
use super::step::{Agent, LlmFailure, StepError};
use super::success::Verdict;
use crate::policy::{Asker, Policy};

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

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The agent's step (detection, or the policy's LLM where it fails the step).
    #[error(transparent)]
    Step(#[from] StepError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(String),
    #[error("recorded frames have no game window to send input to: play them with --dry-run")]
    NoWindow,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlaySummary {
    pub steps: u64,
    pub end: EndReason,
    pub cost_usd: f64,
}

impl PlaySummary {
    pub fn success(&self) -> bool {
        self.end.is_success()
    }
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

/// What a play session works with, built by the caller and borrowed for the session.
pub struct Player<'a> {
    pub parts: &'a Parts,
    pub detector: &'a mut Detector,
    pub policy: &'a mut dyn Policy,
    pub source: &'a mut dyn FrameSource,
    pub recorder: &'a mut Recorder,
    pub long_term: &'a mut LongTerm,
}

/// Plays until the task is done, a limit is reached or a stop is asked for. Every way out, an
/// error too, ends with the session's end record.
pub fn play(
    player: Player<'_>,
    options: &PlayOptions,
    on_status: &mut dyn FnMut(&Status),
) -> Result<PlaySummary, AgentError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| AgentError::Runtime(e.to_string()))?;
    let Player {
        parts,
        detector,
        policy,
        source,
        recorder,
        long_term,
    } = player;
    let mut episode = Episode {
        agent: Agent::new(parts, detector, policy, long_term, LlmFailure::NoAction),
        source,
        recorder,
        options,
        runtime,
        started: Instant::now(),
        backend: None,
        status: Status::default(),
        step: 0,
    };
    let outcome = loop {
        match episode.step(on_status) {
            Ok(Flow::Next) => {}
            Ok(Flow::End(reason)) => break Ok(reason),
            Err(e) => break Err(e),
        }
    };
    episode.finish(outcome)
}

/// What a step leaves the loop to do.
enum Flow {
    Next,
    End(EndReason),
}

/// A play session under way: the agent, where its frames come from and its steps go, and what
/// the loop keeps from step to step.
struct Episode<'a, 'o> {
    agent: Agent<'a>,
    source: &'a mut dyn FrameSource,
    recorder: &'a mut Recorder,
    options: &'o PlayOptions,
    runtime: tokio::runtime::Runtime,
    started: Instant,
    /// Opened on the first action (a dry run never opens one).
    backend: Option<EnigoBackend>,
    status: Status,
    step: u64,
}

impl Episode<'_, '_> {
    /// One pass of the loop: capture, the agent's step, record (on disk before anything moves),
    /// act.
    fn step(&mut self, on_status: &mut dyn FnMut(&Status)) -> Result<Flow, AgentError> {
        if let Some(flow) = self.halt(on_status) {
            return Ok(flow);
        }
        let t = Instant::now();
        let SourcedFrame {
            image: frame,
            window,
        } = match self.source.next_frame() {
            Ok(Some(x)) => x,
            Ok(None) => return Ok(Flow::End(EndReason::FramesRanOut)),
            Err(CaptureError::Gone(_)) => return Ok(Flow::End(EndReason::WindowGone)),
            Err(e) => return Err(e.into()),
        };
        if !self.options.dry_run && window.as_ref().is_some_and(|w| !w.focused) {
            self.pause(on_status, Duration::from_millis(500));
            return Ok(Flow::Next);
        }
        self.status.note.clear();
        let capture_ms = ms_since(t);
        self.step += 1;
        // The frame is encoded and written while the step is worked out; the step's line waits
        // for it below.
        let frame = std::sync::Arc::new(frame);
        let pending_frame = self
            .recorder
            .save_frame_in_background(self.step, frame.clone());

        let asker = Asker {
            runtime: &self.runtime,
            stop: &self.options.stop,
        };
        let mut step = self.agent.step(self.step, &frame, &asker)?;
        step.stage_ms.capture = capture_ms;
        self.status.tokens += step.teacher_tokens;
        let decision = &step.decision;
        self.status.cost_usd += decision.cost_usd.unwrap_or(0.0);
        self.status.tokens += decision.usage.total();
        self.status.cached_tokens += decision.usage.cached_tokens;

        let (frame_file, _) = pending_frame.wait()?;
        let record = step.record(frame_file, self.started.elapsed().as_secs_f64());
        // Flushed to disk before anything moves.
        self.recorder.append(&Line::Step(Box::new(record)))?;

        if step.decision.done || step.seen.verdict == Verdict::Obtained {
            return Ok(Flow::End(EndReason::Success));
        }
        if step.seen.verdict == Verdict::Died {
            return Ok(Flow::End(EndReason::Died));
        }
        let Some(action) = &step.decision.action else {
            self.status.last_action = format!("(no action: {})", step.decision.validation);
            on_status(&self.status);
            return Ok(Flow::Next);
        };
        let t = Instant::now();
        let (result, executed) = self.act(window.as_ref(), &action.events)?;
        let act_ms = ms_since(t);
        self.recorder.append(&Line::Outcome(Outcome {
            step: self.step,
            sent: executed.events,
            released: executed.released,
            result: result.clone(),
            act_ms,
        }))?;
        self.agent.acted(&step, Some(&result));
        self.status.step = self.step;
        self.status.last_action = action.call.to_string();
        step.stage_ms.act = act_ms;
        self.status.stage_ms = step.stage_ms;
        on_status(&self.status);
        Ok(Flow::Next)
    }

    /// Before a step: a stop asked for, or a step, time or cost limit reached, ends the session;
    /// a game window that lost the focus pauses it.
    fn halt(&mut self, on_status: &mut dyn FnMut(&Status)) -> Option<Flow> {
        let options = self.options;
        if let Some(reason) = options.stop.reason() {
            if reason == StopReason::WindowLost && !options.dry_run {
                self.pause(on_status, Duration::from_millis(300));
                // The watcher sets it again while the window stays unfocused.
                options.stop.clear_window_lost();
                std::thread::sleep(Duration::from_millis(100));
                return Some(Flow::Next);
            }
            return Some(Flow::End(EndReason::Stopped(reason)));
        }
        if options.max_steps > 0 && self.step >= options.max_steps {
            return Some(Flow::End(EndReason::StepLimit(options.max_steps)));
        }
        if options.max_minutes > 0.0
            && self.started.elapsed().as_secs_f64() / 60.0 >= options.max_minutes
        {
            return Some(Flow::End(EndReason::TimeLimit(options.max_minutes)));
        }
        if options.max_cost_usd > 0.0 && self.status.cost_usd >= options.max_cost_usd {
            return Some(Flow::End(EndReason::CostCap(options.max_cost_usd)));
        }
        None
    }

    fn pause(&mut self, on_status: &mut dyn FnMut(&Status), wait: Duration) {
        self.status.note = "paused: the game window is not focused".into();
        on_status(&self.status);
        std::thread::sleep(wait);
    }

    /// Sends the action's input events to the game window where it is now (nothing in a dry
    /// run), then waits `game.settle_ms` for the game to draw what they changed.
    fn act(
        &mut self,
        window: Option<&WindowInfo>,
        events: &[crate::skills::InputEvent],
    ) -> Result<(ActResult, Executed), AgentError> {
        let mut executed = Executed::default();
        if self.options.dry_run {
            return Ok((ActResult::DryRun, executed));
        }
        let info = window.ok_or(AgentError::NoWindow)?;
        let rect = WindowRect {
            x: info.x,
            y: info.y,
            w: info.width,
            h: info.height,
        };
        let backend = match self.backend.as_mut() {
            Some(b) => {
                b.set_window(rect);
                b
            }
            None => self.backend.insert(EnigoBackend::for_camera(
                rect,
                &self.agent.parts.profile.camera,
            )?),
        };
        let result = ActResult::from(execute(backend, events, &self.options.stop, &mut executed));
        std::thread::sleep(self.options.settle);
        Ok((result, executed))
    }

    /// Stores the episode in the long-term memory and writes the session's end record.
    fn finish(mut self, outcome: Result<EndReason, AgentError>) -> Result<PlaySummary, AgentError> {
        let end = match &outcome {
            Ok(end) => end.clone(),
            Err(e) => EndReason::Error(e.to_string()),
        };
        let parts = self.agent.parts;
        self.agent.long_term().finish(&end, &parts.kg);
        let written = self.recorder.append(&Line::End {
            reason: end.to_string(),
            steps: self.step,
            cost_usd: self.status.cost_usd,
        });
        if let Err(e) = outcome {
            if let Err(write) = written {
                tracing::warn!("cannot write the session's end record: {write}");
            }
            return Err(e);
        }
        written?;
        Ok(PlaySummary {
            steps: self.step,
            end,
            cost_usd: self.status.cost_usd,
        })
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
