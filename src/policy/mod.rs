//! Policy: turning the pooled graph into the next skill call (LLM or planner).

pub mod llm_client;
