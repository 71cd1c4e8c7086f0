//! Policy: turning the pooled graph into the next skill call (LLM or planner).

pub mod action;
pub mod constrain;
mod decide;
mod decision;
pub mod llm_policy;
pub mod memory;
pub mod planner;
pub mod prompt;
pub(crate) mod settings;
pub mod subgoal;

pub use decide::{Observation, Policy, llm_decision};
pub use decision::{
    Asker, DecideError, Decision, Validation, or_no_action, until_stopped, validate_call,
};
pub use llm_policy::{Attempt, Choice, LlmPolicy, LlmSetupError, Turn, ValidAction};
pub use memory::MemoryStack;
pub use prompt::{PromptTemplate, PromptValues, TokenCounter};
