//! What a policy decides in one step ([`Decision`]), why a step has no action
//! ([`Validation`], the text a session records), and how an LLM-backed policy's requests are
//! run until they end or a stop is asked for ([`Asker`]).

use std::future::Future;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::llm_policy::{Attempt, ValidAction};
use crate::llm::{LlmError, Usage};
use crate::skills::{ExpandContext, SkillCall, SkillLibrary, StopFlag, StopReason, plan};

/// What a policy decided in one step.
#[derive(Debug, Clone, Default)]
pub struct Decision {
    pub action: Option<ValidAction>,
    pub attempts: Vec<Attempt>,
    pub reasoning: String,
    /// "valid" or why there is no action.
    pub validation: Validation,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    /// The planner found the target in the inventory.
    pub done: bool,
}

impl Decision {
    /// No action, and why (nothing asked, nothing spent).
    pub fn no_action(validation: Validation) -> Self {
        Decision {
            validation,
            cost_usd: Some(0.0),
            ..Decision::default()
        }
    }

    /// The target is in the inventory: the episode is won.
    pub fn done() -> Self {
        Decision {
            done: true,
            ..Decision::no_action(Validation::Done)
        }
    }

    /// Adds what another request for this step spent (a cost unknown on either side is unknown).
    pub fn add_spent(&mut self, usage: Usage, cost_usd: Option<f64>) {
        self.usage.add(usage);
        self.cost_usd = match (self.cost_usd, cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
}

/// Validates a call the way every policy's calls are validated: it must expand into input
/// events on this window (`ctx`) with the skill library's definitions.
pub fn validate_call(
    skills: &SkillLibrary,
    ctx: &ExpandContext<'_>,
    call: SkillCall,
    reasoning: String,
) -> Decision {
    match plan(skills, &call, ctx) {
        Ok(events) => Decision {
            action: Some(ValidAction {
                call,
                events,
                reasoning: reasoning.clone(),
            }),
            reasoning,
            validation: Validation::Valid,
            cost_usd: Some(0.0),
            ..Decision::default()
        },
        Err(e) => Decision {
            reasoning,
            validation: Validation::Refused(e.to_string()),
            cost_usd: Some(0.0),
            ..Decision::default()
        },
    }
}

/// What came of a step's decision: a valid action, the target got, or why there is no action.
/// A session stores it as the text `Display` gives, and reads that text back.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum Validation {
    /// An action that expands into input events on this window.
    Valid,
    /// The target is in the inventory: nothing left to do.
    Done,
    /// The planner sees no way on.
    PlannerStuck(String),
    /// The sub-goal policy has no goal to work toward (what became of the last one, if any).
    NoGoal(Option<String>),
    /// The LLM could not be reached (the loop goes on; the limits still apply).
    LlmFailed(String),
    /// A stop came while the LLM was asked.
    Stopped,
    /// Replay: none of the recorded answers validates against today's skill library.
    NoValidRecordedAnswer,
    /// The LLM gave no answer.
    #[default]
    NoAnswer,
    /// The answer or the call was refused: why.
    Refused(String),
    /// The game showed its death screen: nothing is decided, the session ends.
    Died,
}

const NO_GOAL: &str = "no goal to work toward (";
const DIED: &str = "the player died";

impl Validation {
    pub fn is_valid(&self) -> bool {
        *self == Validation::Valid
    }
}

impl std::fmt::Display for Validation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Validation::Valid => f.write_str("valid"),
            Validation::Done => f.write_str("done"),
            Validation::PlannerStuck(why) => write!(f, "planner stuck: {why}"),
            Validation::NoGoal(Some(last)) => write!(f, "{NO_GOAL}{last})"),
            Validation::NoGoal(None) => f.write_str("no goal named"),
            Validation::LlmFailed(e) => write!(f, "LLM request failed: {e}"),
            Validation::Stopped => f.write_str("stopped while waiting for the LLM"),
            Validation::NoValidRecordedAnswer => f.write_str("no recorded answer is valid now"),
            Validation::NoAnswer => f.write_str("no answer"),
            Validation::Refused(why) => f.write_str(why),
            Validation::Died => f.write_str(DIED),
        }
    }
}

impl From<Validation> for String {
    fn from(v: Validation) -> String {
        v.to_string()
    }
}

impl From<String> for Validation {
    /// The session text back; any other text is a refusal's reason.
    fn from(s: String) -> Validation {
        match s.as_str() {
            "valid" => return Validation::Valid,
            "done" => return Validation::Done,
            "no goal named" => return Validation::NoGoal(None),
            "stopped while waiting for the LLM" => return Validation::Stopped,
            "no recorded answer is valid now" => return Validation::NoValidRecordedAnswer,
            "no answer" => return Validation::NoAnswer,
            DIED => return Validation::Died,
            _ => {}
        }
        if let Some(why) = s.strip_prefix("planner stuck: ") {
            Validation::PlannerStuck(why.to_string())
        } else if let Some(last) = s.strip_prefix(NO_GOAL).and_then(|r| r.strip_suffix(')')) {
            Validation::NoGoal(Some(last.to_string()))
        } else if let Some(e) = s.strip_prefix("LLM request failed: ") {
            Validation::LlmFailed(e.to_string())
        } else {
            Validation::Refused(s)
        }
    }
}

/// Runs the requests of an LLM-backed policy until they end or a stop is asked for.
pub struct Asker<'a> {
    pub runtime: &'a tokio::runtime::Runtime,
    pub stop: &'a StopFlag,
}

impl Asker<'_> {
    pub fn ask<T>(
        &self,
        request: impl Future<Output = Result<T, LlmError>>,
    ) -> Result<T, DecideError> {
        match until_stopped(self.runtime, self.stop, request) {
            Some(answer) => Ok(answer?),
            None => Err(DecideError::Stopped),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error("stopped while asking the LLM")]
    Stopped,
}

/// A policy's decision, or one with no action that says why there is none: an LLM that cannot
/// be reached ends no session by itself (the step records why and the loop goes on; the
/// limits still apply).
pub fn or_no_action(decided: Result<Decision, DecideError>) -> Decision {
    match decided {
        Ok(d) => d,
        Err(DecideError::Stopped) => Decision::no_action(Validation::Stopped),
        Err(DecideError::Llm(e)) => Decision::no_action(Validation::LlmFailed(e.to_string())),
    }
}

/// Runs an LLM request until it ends or a stop is requested (looked at every 50 ms): Ctrl-C or
/// the emergency stop cut a slow request or a retry's back-off at once instead of after it.
/// `None` when stopped. A lost focus is no stop here: the loop pauses on it before acting.
pub fn until_stopped<F: Future>(
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
