//! One agent step: perceive -> graph -> success check -> memory -> prompt -> decide, over one
//! frame, returning everything the step saw, asked and decided as a typed [`Step`]. `play`,
//! `replay` and the bench are drivers around it: they bring the frame (a window, a recorded
//! session), record the step and act on (or compare) its decision, then tell the agent what
//! the action did ([`Agent::acted`]).

use std::time::Instant;

use image::RgbImage;

use super::memory_step::{LongTerm, revise};
use super::pipeline::{self, Parts, ms_since};
use super::see::{self, Seen};
use super::session::{StageMs, StepRecord};
use super::success::SuccessCheck;
use crate::longterm::Query;
use crate::perception::{Detector, DetectorError};
use crate::policy::{Asker, DecideError, Decision, MemoryStack, Observation, Policy, or_no_action};
use crate::skills::ActResult;
use crate::skills::gui_scale::GuiScaleTracker;

/// What the agent does when its policy's LLM fails or a stop cuts the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlmFailure {
    /// The step decides no action and says why (play: an unreachable LLM ends no session by
    /// itself; the limits still apply).
    NoAction,
    /// The step fails with the error (replay: there is no one to retry for).
    Error,
}

#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error(transparent)]
    Detector(#[from] DetectorError),
    #[error(transparent)]
    Decide(#[from] DecideError),
}

/// What one step saw, asked and decided, with its stage times.
pub struct Step {
    /// The step's number in its session (1 = first).
    pub number: u64,
    /// Detections, their reading, the pooled graph and the success check's verdict.
    pub seen: Seen,
    /// What the long-term memory was asked about this step.
    pub query: Query,
    pub prompt: String,
    pub prompt_tokens: usize,
    pub decision: Decision,
    /// Detection (with the detector's own letterbox, inference and decode), graph, prompt and
    /// policy; the driver adds capture and act.
    pub stage_ms: StageMs,
    /// Tokens the long-term memory's teacher spent this step.
    pub teacher_tokens: u64,
}

impl Step {
    /// The step's session line; `frame` is the frame's file in the session folder and `t` the
    /// seconds since the session started.
    pub fn record(&self, frame: String, t: f64) -> StepRecord {
        let Seen {
            detections,
            perception,
            graph,
            verdict,
            ..
        } = &self.seen;
        let decision = &self.decision;
        StepRecord {
            step: self.number,
            t,
            frame,
            frame_w: perception.frame_w,
            frame_h: perception.frame_h,
            detections: detections.clone(),
            perception: perception.clone(),
            knowledge: graph.text.knowledge.clone(),
            inventory: graph.text.inventory.clone(),
            environment: graph.text.environment.clone(),
            prompt: self.prompt.clone(),
            prompt_tokens: self.prompt_tokens,
            attempts: decision.attempts.clone(),
            reasoning: decision.reasoning.clone(),
            action: decision.action.as_ref().map(|a| a.call.clone()),
            validation: decision.validation.clone(),
            events: decision
                .action
                .as_ref()
                .map(|a| a.events.clone())
                .unwrap_or_default(),
            usage: decision.usage,
            cost_usd: decision.cost_usd,
            stage_ms: self.stage_ms.clone(),
            success_note: verdict.note(),
        }
    }
}

/// The agent: its fixed parts, its policy, and what it keeps from step to step (the LIFO memory
/// stack, the success check's state, the long-term memory).
pub struct Agent<'a> {
    pub parts: &'a Parts,
    detector: &'a mut Detector,
    policy: &'a mut dyn Policy,
    long_term: &'a mut LongTerm,
    /// The LIFO stack of this episode's decisions.
    memory: MemoryStack,
    success: SuccessCheck,
    /// The GUI scale read off the frames so far (kept while a frame hides the HUD).
    gui_scale: GuiScaleTracker,
    llm_failure: LlmFailure,
}

impl<'a> Agent<'a> {
    pub fn new(
        parts: &'a Parts,
        detector: &'a mut Detector,
        policy: &'a mut dyn Policy,
        long_term: &'a mut LongTerm,
        llm_failure: LlmFailure,
    ) -> Self {
        Agent {
            parts,
            detector,
            policy,
            long_term,
            memory: MemoryStack::default(),
            success: SuccessCheck::default(),
            gui_scale: GuiScaleTracker::default(),
            llm_failure,
        }
    }

    /// The detector (the bench times its bare run between steps).
    pub fn detector(&mut self) -> &mut Detector {
        self.detector
    }

    /// The long-term memory (the episode's end is stored through it).
    pub fn long_term(&mut self) -> &mut LongTerm {
        self.long_term
    }

    /// Step `number` on `frame`: detection, graph view and success check, the long-term
    /// memory's step (its teacher asked where the sub-goal has no how-to), the prompt, and the
    /// decision (the success check's own where it looks in the inventory, else the policy's,
    /// revised by MINDSTORES' outcome prediction where the policy allows it).
    pub fn step(
        &mut self,
        number: u64,
        frame: &RgbImage,
        asker: &Asker<'_>,
    ) -> Result<Step, StepError> {
        let Agent {
            parts,
            detector,
            policy,
            long_term,
            memory,
            success,
            gui_scale,
            llm_failure,
        } = self;
        let parts = *parts;
        let mut stage_ms = StageMs::default();
        let seen = see::see(parts, detector, success, gui_scale, frame)?;
        stage_ms.detect = seen.detect_ms;
        [stage_ms.letterbox, stage_ms.inference, stage_ms.decode] = seen.detector_ms;
        stage_ms.graph = seen.graph_ms;

        let t = Instant::now();
        let query = pipeline::memory_query(parts, &seen.perception, &seen.graph);
        let (long_term_text, teacher_tokens) =
            long_term.step(parts, &query, asker.runtime, asker.stop);
        let values = pipeline::prompt_values(
            parts,
            &seen.perception,
            &seen.graph,
            memory,
            &long_term_text,
        );
        let (prompt, prompt_tokens) = pipeline::render_prompt(parts, &values);
        stage_ms.prompt = ms_since(t);

        let t = Instant::now();
        let layout = pipeline::layout(parts, &seen.perception);
        let (w, h) = (seen.perception.frame_w, seen.perception.frame_h);
        let expand = pipeline::expand_context(parts, &layout, w, h);
        let obs = Observation {
            step: number,
            kg: &parts.kg,
            target: parts.target,
            perception: &seen.perception,
            visual: &seen.graph.visual,
            pooled: &seen.graph.pooled,
            layout: &layout,
            expand: &expand,
            skills: &parts.profile.skills,
            llm: &parts.config.llm,
            template: &parts.template,
            counter: &parts.counter,
            values: &values,
            prompt: &prompt,
        };
        let decision = match seen.verdict.decision(parts, obs.perception) {
            Some(d) if !policy.decides_checked_steps() => d,
            _ => ask_policy(
                &mut **policy,
                parts,
                long_term,
                *llm_failure,
                &obs,
                &query,
                asker,
            )?,
        };
        stage_ms.policy = ms_since(t);
        Ok(Step {
            number,
            seen,
            query,
            prompt,
            prompt_tokens,
            decision,
            stage_ms,
            teacher_tokens,
        })
    }

    /// The step's action ran (or, replayed, had run) with `result` (`None`: no outcome is
    /// known): the memory stack and the long-term memory learn of it.
    pub fn acted(&mut self, step: &Step, result: Option<&ActResult>) {
        let Some(action) = &step.decision.action else {
            return;
        };
        if let Some(result) = result {
            self.long_term
                .acted(&step.query, &action.call.to_string(), result);
        }
        self.memory
            .push(step.number, action.call.clone(), &action.reasoning);
        if let Some(result) = result {
            self.memory.set_outcome(result.to_string());
        }
    }
}

/// The policy's decision, revised by MINDSTORES' outcome prediction where the policy allows it.
fn ask_policy(
    policy: &mut dyn Policy,
    parts: &Parts,
    long_term: &mut LongTerm,
    llm_failure: LlmFailure,
    obs: &Observation<'_>,
    query: &Query,
    asker: &Asker<'_>,
) -> Result<Decision, StepError> {
    let first = match (policy.decide(obs, asker), llm_failure) {
        (Err(e), LlmFailure::Error) => return Err(e.into()),
        (decided, _) => or_no_action(decided),
    };
    if !policy.revisable() {
        return Ok(first);
    }
    Ok(revise(policy, parts, obs, asker, query, long_term, first))
}
