//! Replaying a recorded session: re-run perception, graph and prompt on the recorded frames
//! with today's detector, graph, prompt settings and policy, and say step by step where the new
//! run differs from the recorded one.

use serde::Serialize;

use super::memory_step::LongTerm;
use super::pipeline::Parts;
use super::session::{Session, Validation};
use super::step::{Agent, LlmFailure, StepError};
use crate::llm::Usage;
use crate::perception::iou;
use crate::perception::{Detection, Detector};
use crate::policy::{Asker, Policy};
use crate::skills::{SkillCall, StopFlag};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepDiff {
    pub step: u64,
    /// Empty when the detections match (same classes, boxes overlapping by IoU >= 0.5).
    pub detections: Vec<String>,
    pub knowledge_changed: bool,
    pub status_changed: bool,
    /// The first differing prompt line, if any.
    pub prompt: Option<String>,
    pub recorded_action: Option<SkillCall>,
    pub replayed_action: Option<SkillCall>,
    pub replayed_validation: Validation,
    /// The replayed decision's tokens (prompt, cached, completion) and cost: zero for the
    /// recorded answers and the planner.
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    /// Seconds the replayed policy took to decide (in the LLM summary, not in each diff: a
    /// replay of recorded answers prints the same report every time).
    #[serde(skip)]
    pub policy_s: f64,
}

impl StepDiff {
    pub fn decision_changed(&self) -> bool {
        self.recorded_action != self.replayed_action
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The agent's step (detection, or the policy's LLM where it fails the step).
    #[error(transparent)]
    Step(#[from] StepError),
    #[error(transparent)]
    Session(#[from] super::session::SessionError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(String),
}

/// Detections only in one of the runs: "+ trunk (x, y)" new, "- log_icon (x, y)" gone.
pub fn compare_detections(recorded: &[Detection], replayed: &[Detection]) -> Vec<String> {
    let mut used = vec![false; replayed.len()];
    let mut diffs = Vec::new();
    let centre = |d: &Detection| {
        format!(
            "({:.0}, {:.0})",
            (d.xyxy[0] + d.xyxy[2]) / 2.0,
            (d.xyxy[1] + d.xyxy[3]) / 2.0
        )
    };
    for r in recorded {
        let found = replayed
            .iter()
            .enumerate()
            .position(|(i, n)| !used[i] && n.class == r.class && iou(&n.xyxy, &r.xyxy) >= 0.5);
        match found {
            Some(i) => used[i] = true,
            None => diffs.push(format!("- {} {}", r.class, centre(r))),
        }
    }
    for (i, n) in replayed.iter().enumerate() {
        if !used[i] {
            diffs.push(format!("+ {} {}", n.class, centre(n)));
        }
    }
    diffs
}

fn first_difference(a: &str, b: &str) -> Option<String> {
    if a == b {
        return None;
    }
    let (mut la, mut lb) = (a.lines(), b.lines());
    let mut n = 0;
    loop {
        n += 1;
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                return Some(format!(
                    "line {n}: recorded {:?}, now {:?}",
                    x.unwrap_or("<end>"),
                    y.unwrap_or("<end>")
                ));
            }
        }
    }
}

/// Replays every step; `on_step` sees each difference as it is found.
pub fn replay(
    parts: &Parts,
    detector: &mut Detector,
    session: &Session,
    policy: &mut dyn Policy,
    on_step: &mut dyn FnMut(&StepDiff),
) -> Result<Vec<StepDiff>, ReplayError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ReplayError::Runtime(e.to_string()))?;
    let never = StopFlag::default();
    let asker = Asker {
        runtime: &runtime,
        stop: &never,
    };
    let mut long_term = LongTerm::disabled(&parts.config.memory);
    // The same step as `play`, its success check included, so a replay with another detector
    // or policy ends (or looks in the inventory) where a live run would.
    let mut agent = Agent::new(parts, detector, policy, &mut long_term, LlmFailure::Error);
    let mut diffs = Vec::new();
    for recorded in &session.steps {
        let frame = session.frame(recorded)?;
        let step = agent.step(recorded.step, &frame, &asker)?;
        let graph = &step.seen.graph;
        let decision = &step.decision;
        let diff = StepDiff {
            step: recorded.step,
            detections: compare_detections(&recorded.detections, &step.seen.detections),
            knowledge_changed: graph.text.knowledge != recorded.knowledge,
            status_changed: graph.text.inventory != recorded.inventory
                || graph.text.environment != recorded.environment,
            prompt: first_difference(&recorded.prompt, &step.prompt),
            recorded_action: recorded.action.clone(),
            replayed_action: decision.action.as_ref().map(|a| a.call.clone()),
            replayed_validation: decision.validation.clone(),
            usage: decision.usage,
            cost_usd: decision.cost_usd,
            policy_s: step.stage_ms.policy / 1e3,
        };
        agent.acted(&step, session.outcome(recorded.step).map(|o| &o.result));
        on_step(&diff);
        diffs.push(diff);
    }
    Ok(diffs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn det(class: &str, xyxy: [f32; 4]) -> Detection {
        Detection {
            class_id: 0,
            class: class.into(),
            conf: 0.9,
            xyxy,
        }
    }

    #[test]
    fn detections_match_by_class_and_overlap() {
        let a = [
            det("trunk", [0.0, 0.0, 10.0, 10.0]),
            det("log_icon", [50.0, 50.0, 60.0, 60.0]),
        ];
        let b = [
            det("trunk", [1.0, 1.0, 11.0, 11.0]),
            det("lava", [50.0, 50.0, 60.0, 60.0]),
        ];
        assert_eq!(
            compare_detections(&a, &b),
            ["- log_icon (55, 55)", "+ lava (55, 55)"]
        );
        assert!(compare_detections(&a, &a).is_empty());
    }

    #[test]
    fn prompt_differences_name_the_line() {
        assert_eq!(first_difference("a\nb", "a\nb"), None);
        assert_eq!(
            first_difference("a\nb", "a\nc"),
            Some("line 2: recorded \"b\", now \"c\"".into())
        );
    }
}
