//! The LLM: a client for OpenAI-compatible chat endpoints, what its answers cost
//! ([`pricing`]), a run's usage in sum ([`usage_summary`]) and how answers are constrained
//! ([`response_format`]). The policy and the long-term memory's teacher both ask through it.

mod client;
mod pricing;
mod response_format;
mod usage_summary;

pub use client::{ChatMessage, ChatOptions, Completion, LlmClient, LlmError, Role, Usage};
pub use pricing::PriceTable;
pub use response_format::{answers_in_json, schema_format};
pub use usage_summary::{Spent, UsageSummary};
