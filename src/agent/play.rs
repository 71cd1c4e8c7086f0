//! `vistawise play`: the agent loop. Take a frame (`capture::source`), detect, embed, pool,
//! prompt (`pipeline`), ask the policy (`decide`), record the step (flushed before anything
//! moves), act (`skills`), remember.
//! It ends on success (the target in the inventory), on the step/time/cost limits, on the
//! emergency stop or Ctrl-C, always with held input released and the session closed.

use std::time::{Duration, Instant};

use crate::capture::frame::CaptureError;
use crate::capture::source::{FrameSource, SourcedFrame};
use crate::capture::windows::WindowInfo;
use crate::longterm::{LongTermMemory, Query, Tracker, TrackerEvent, episode, howto};
use crate::perception::{Detector, DetectorError};
use crate::policy::{LlmClient, MemoryStack};
use crate::skills::{
    ActResult, EnigoBackend, Executed, InputError, StopFlag, StopReason, WindowRect, execute,
};

use super::decide::{self, Asker, DecideError, Observation, Policy, until_stopped};
use super::pipeline::{self, Decision, Parts, Seen, StepHead, ms_since};
use super::session::{Line, Meta, Outcome, Recorder, SessionError, StageMs};
use super::success::{SuccessCheck, Verdict};

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
            let asked = until_stopped(
                runtime,
                stop,
                howto::ask(teacher, &parts.config.llm, kg, item),
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
    pub fn acted(&mut self, q: &Query, plan: &str, result: &ActResult) {
        if !self.memory.is_empty() {
            self.tracker.acted(q, plan, result);
        }
    }

    /// The episode is over: store the last attempt and, on success, the exemplar.
    pub fn finish(&mut self, end: &EndReason, kg: &crate::knowledge::KnowledgeGraph) {
        if !self.memory.is_empty() {
            let events = self.tracker.finish(end.is_success(), &end.to_string());
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

/// Why a play session ended; the session's end record holds its text.
#[derive(Debug, Clone, PartialEq)]
pub enum EndReason {
    /// The task's target is in the inventory.
    Success,
    Stopped(StopReason),
    StepLimit(u64),
    /// Minutes.
    TimeLimit(f64),
    /// US dollars.
    CostCap(f64),
    /// Played on recorded frames, and they ran out.
    FramesRanOut,
    WindowGone,
    /// An error ended the loop (the error itself is returned too).
    Error(String),
}

impl EndReason {
    pub fn is_success(&self) -> bool {
        *self == EndReason::Success
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EndReason::Success => f.write_str("success: the target is in the inventory"),
            EndReason::Stopped(why) => write!(f, "stopped: {why}"),
            EndReason::StepLimit(n) => write!(f, "step limit ({n}) reached"),
            EndReason::TimeLimit(min) => write!(f, "time limit ({min} min) reached"),
            EndReason::CostCap(usd) => write!(f, "cost cap (${usd:.2}) reached"),
            EndReason::FramesRanOut => f.write_str("no more recorded frames"),
            EndReason::WindowGone => f.write_str("the game window disappeared"),
            EndReason::Error(e) => write!(f, "error: {e}"),
        }
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
    let mut episode = Episode {
        player,
        options,
        runtime,
        started: Instant::now(),
        memory: MemoryStack::default(),
        success: SuccessCheck::default(),
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

/// A play session under way: the parts, and what the loop keeps from step to step.
struct Episode<'a, 'o> {
    player: Player<'a>,
    options: &'o PlayOptions,
    runtime: tokio::runtime::Runtime,
    started: Instant,
    /// The LIFO stack of this episode's decisions.
    memory: MemoryStack,
    success: SuccessCheck,
    /// Opened on the first action (a dry run never opens one).
    backend: Option<EnigoBackend>,
    status: Status,
    step: u64,
}

impl Episode<'_, '_> {
    /// One pass of the loop: capture, see, decide, record (on disk before anything moves), act.
    fn step(&mut self, on_status: &mut dyn FnMut(&Status)) -> Result<Flow, AgentError> {
        if let Some(flow) = self.halt(on_status) {
            return Ok(flow);
        }
        let t = Instant::now();
        let SourcedFrame {
            image: frame,
            window,
        } = match self.player.source.next_frame() {
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
        let mut stage = StageMs {
            capture: ms_since(t),
            ..StageMs::default()
        };
        self.step += 1;
        // The frame is encoded and written while the step is worked out; the step's line waits
        // for it below.
        let frame = std::sync::Arc::new(frame);
        let pending_frame = self
            .player
            .recorder
            .save_frame_in_background(self.step, frame.clone());

        let seen = self.see(&frame, &mut stage)?;
        let (query, prompt, decision) = self.think(&seen, &mut stage);

        let (frame_file, _) = pending_frame.wait()?;
        let head = StepHead {
            step: self.step,
            t: self.started.elapsed().as_secs_f64(),
            frame: frame_file,
            frame_w: frame.width(),
            frame_h: frame.height(),
            stage_ms: stage.clone(),
            success_note: seen.verdict.note(),
        };
        let verdict = seen.verdict;
        let record = pipeline::step_record(
            head,
            seen.detections,
            &seen.perception,
            &seen.graph,
            prompt,
            &decision,
        );
        // Flushed to disk before anything moves.
        self.player.recorder.append(&Line::Step(Box::new(record)))?;

        if decision.done || verdict == Verdict::Obtained {
            return Ok(Flow::End(EndReason::Success));
        }
        let Some(action) = decision.action else {
            self.status.last_action = format!("(no action: {})", decision.validation);
            on_status(&self.status);
            return Ok(Flow::Next);
        };
        let t = Instant::now();
        let (result, executed) = self.act(window.as_ref(), &action.events)?;
        stage.act = ms_since(t);
        self.after_act(&query, &action, result, executed, stage)?;
        on_status(&self.status);
        Ok(Flow::Next)
    }

    /// The long-term memory's step (its teacher asked where the sub-goal has no how-to), the
    /// prompt, and the decision; the stage times and the status's tokens and cost.
    fn think(&mut self, seen: &Seen, stage: &mut StageMs) -> (Query, (String, usize), Decision) {
        let t = Instant::now();
        let parts = self.player.parts;
        let query = pipeline::memory_query(parts, &seen.perception, &seen.graph);
        let (long_term_text, teacher_tokens) =
            self.player
                .long_term
                .step(parts, &query, &self.runtime, &self.options.stop);
        self.status.tokens += teacher_tokens;
        let prompt = pipeline::build_prompt_with(
            parts,
            &seen.perception,
            &seen.graph,
            &self.memory,
            &long_term_text,
        );
        stage.prompt = ms_since(t);

        let t = Instant::now();
        let decision = self.decide(seen, &prompt.0, &query, &long_term_text);
        stage.policy = ms_since(t);
        self.status.cost_usd += decision.cost_usd.unwrap_or(0.0);
        self.status.tokens += decision.usage.total();
        self.status.cached_tokens += decision.usage.cached_tokens;
        (query, prompt, decision)
    }

    /// After an action: its outcome recorded, told to the memories and the status.
    fn after_act(
        &mut self,
        query: &Query,
        action: &crate::policy::ValidAction,
        result: ActResult,
        executed: Executed,
        stage: StageMs,
    ) -> Result<(), AgentError> {
        self.player.recorder.append(&Line::Outcome(Outcome {
            step: self.step,
            sent: executed.events,
            released: executed.released,
            result: result.clone(),
            act_ms: stage.act,
        }))?;
        self.player
            .long_term
            .acted(query, &action.call.to_string(), &result);
        self.memory
            .push(self.step, action.call.clone(), &action.reasoning);
        self.memory.set_outcome(result.to_string());
        self.status.step = self.step;
        self.status.last_action = action.call.to_string();
        self.status.stage_ms = stage;
        Ok(())
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

    /// Detection, the graph view and the success check ([`pipeline::see`]), timed.
    fn see(&mut self, frame: &image::RgbImage, stage: &mut StageMs) -> Result<Seen, AgentError> {
        let seen = pipeline::see(
            self.player.parts,
            self.player.detector,
            &mut self.success,
            frame,
        )?;
        stage.detect = seen.detect_ms;
        [stage.letterbox, stage.inference, stage.decode] = seen.detector_ms;
        stage.graph = seen.graph_ms;
        Ok(seen)
    }

    /// The step's decision: the success check's own (the inventory opened to look), else the
    /// policy's. An LLM that fails or is stopped while asked yields a decision with no action.
    fn decide(
        &mut self,
        seen: &Seen,
        prompt: &str,
        query: &Query,
        long_term_text: &str,
    ) -> Decision {
        let Episode {
            player,
            runtime,
            options,
            memory,
            step,
            ..
        } = self;
        let parts = player.parts;
        let (perception, graph) = (&seen.perception, &seen.graph);
        if let Some(d) = seen
            .verdict
            .decision(parts, perception.frame_w, perception.frame_h)
        {
            return d;
        }
        let obs = Observation {
            parts,
            step: *step,
            perception,
            graph,
            memory,
            long_term: long_term_text,
            prompt,
        };
        let asker = Asker {
            runtime,
            stop: &options.stop,
        };
        let first = decide::or_no_action(player.policy.decide(&obs, &asker));
        if !player.policy.revisable() {
            return first;
        }
        revise(
            &mut *player.policy,
            &obs,
            &asker,
            query,
            player.long_term,
            first,
        )
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
                &self.player.parts.profile.camera,
            )?),
        };
        let result = ActResult::from(execute(backend, events, &self.options.stop, &mut executed));
        std::thread::sleep(self.options.settle);
        Ok((result, executed))
    }

    /// Stores the episode in the long-term memory and writes the session's end record.
    fn finish(self, outcome: Result<EndReason, AgentError>) -> Result<PlaySummary, AgentError> {
        let end = match &outcome {
            Ok(end) => end.clone(),
            Err(e) => EndReason::Error(e.to_string()),
        };
        self.player.long_term.finish(&end, &self.player.parts.kg);
        let written = self.player.recorder.append(&Line::End {
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

/// MINDSTORES' outcome prediction on the LLM's action: while the experience store predicts it
/// fails, the LLM is asked again with the prediction, at most `memory.max_revisions` times.
/// Every answer's attempts, tokens and cost are kept.
fn revise(
    policy: &mut dyn Policy,
    obs: &Observation<'_>,
    asker: &Asker<'_>,
    query: &Query,
    long_term: &mut LongTerm,
    mut decision: Decision,
) -> Decision {
    for _ in 0..obs.parts.config.memory.max_revisions {
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
        let revised_prompt = format!("{}\n\n{feedback}", obs.prompt);
        let revised = Observation {
            prompt: &revised_prompt,
            ..*obs
        };
        match policy.decide(&revised, asker) {
            // Stopped: the first answer stands; the loop ends before it is acted on.
            Err(DecideError::Stopped) => break,
            Ok(mut next) => {
                let mut attempts = std::mem::take(&mut decision.attempts);
                attempts.append(&mut next.attempts);
                next.attempts = attempts;
                next.add_spent(decision.usage, decision.cost_usd);
                next.reasoning = format!("{feedback}\n{}", next.reasoning);
                if next.action.is_none() {
                    // Keep the first action rather than none.
                    next.action = decision.action.take();
                }
                decision = next;
            }
            Err(DecideError::Llm(e)) => {
                tracing::warn!("revision request failed: {e}");
                break;
            }
        }
    }
    decision
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
