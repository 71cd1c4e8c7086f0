//! Policy: turning the pooled graph into the next skill call (LLM or planner).

pub mod action;
pub mod constrain;
pub mod llm_client;
pub mod llm_policy;
pub mod memory;
pub mod planner;
pub mod pricing;
pub mod prompt;
pub mod settings;
pub mod subgoal;
pub mod usage_summary;

pub use llm_client::{ChatMessage, ChatOptions, LlmClient, LlmError, Role, Usage};
pub use llm_policy::{Attempt, Choice, LlmPolicy, Turn, ValidAction};
pub use memory::MemoryStack;
pub use pricing::PriceTable;
pub use prompt::{PromptTemplate, PromptValues, TokenCounter};
