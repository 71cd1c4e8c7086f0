//! Policy: turning the pooled graph into the next skill call (LLM or planner).

pub mod action;
pub mod constrain;
pub mod llm_policy;
pub mod memory;
pub mod planner;
pub mod prompt;
pub(crate) mod settings;
pub mod subgoal;

pub use llm_policy::{Attempt, Choice, LlmPolicy, LlmSetupError, Turn, ValidAction};
pub use memory::MemoryStack;
pub use prompt::{PromptTemplate, PromptValues, TokenCounter};
