//! Policy: turning the pooled graph into the next skill call (LLM or planner).

pub mod action;
pub mod constrain;
mod decide;
mod decision;
mod llm_policy;
mod memory_stack;
mod planner;
pub mod prompt;
pub(crate) mod settings;
mod subgoal;

pub use decide::{Observation, Policy, llm_decision};
pub use decision::{
    Asker, DecideError, Decision, Validation, or_no_action, until_stopped, validate_call,
};
pub use llm_policy::{
    Attempt, Choice, LlmPolicy, LlmSetupError, Turn, ValidAction, validate_answer,
};
pub use memory_stack::MemoryStack;
pub use planner::{ArgToken, DigDepth, PlanStep, Planner, PlannerConfig, View};
pub use prompt::{PromptTemplate, PromptValues, TokenCounter};
pub use subgoal::SubgoalPolicy;
