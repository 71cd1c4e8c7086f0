//! `[llm]` of the config: the endpoint, the model and how its answers are asked for.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::validate::check;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputMode {
    Text,
    Structured,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmConfig {
    pub base_url: String,
    pub model: String,
    pub api_key_env: String,
    pub timeout_secs: u64,
    pub max_retries: u32,
    pub output_mode: OutputMode,
    pub temperature: f32,
    pub max_tokens: u32,
    pub retry_backoff_ms: u64,
    pub max_invalid_answers: u32,
    pub constrain: Constrain,
    /// Structured mode: the longest `reasoning` the schema or grammar lets the model write
    /// (0: unbounded). A small model's reasoning string can loop to `max_tokens`.
    pub reasoning_max_chars: u32,
    /// The sub-goal policy asks the LLM again after this many steps on one goal without it
    /// (0: never; the goal may be out of reach where the player is).
    pub subgoal_max_steps: u32,
    pub prompt_template: PathBuf,
    pub prices: PathBuf,
}

/// How structured mode constrains the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Constrain {
    /// OpenAI-style `response_format` with a JSON schema (OpenAI, vLLM, Ollama, llama-server).
    JsonSchema,
    /// llama.cpp's `grammar` field with a GBNF grammar (text answers ending in `Action: ...`).
    Grammar,
}

impl LlmConfig {
    pub(crate) fn validate(&self) -> Result<(), (String, String)> {
        let l = self;
        check(
            l.base_url.starts_with("http://") || l.base_url.starts_with("https://"),
            "llm.base_url",
            "must start with http:// or https://",
        )?;
        check(!l.model.trim().is_empty(), "llm.model", "must not be empty")?;
        check(
            !l.api_key_env.is_empty()
                && l.api_key_env
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "llm.api_key_env",
            "must be an environment variable NAME (letters, digits, '_'), not the key itself",
        )?;
        check(
            (1..=3600).contains(&l.timeout_secs),
            "llm.timeout_secs",
            "must be 1-3600",
        )?;
        check(l.max_retries <= 20, "llm.max_retries", "must be 0-20")?;
        check(
            l.retry_backoff_ms <= 60_000,
            "llm.retry_backoff_ms",
            "must be 0-60000",
        )?;
        check(
            l.max_invalid_answers <= 10,
            "llm.max_invalid_answers",
            "must be 0-10",
        )?;
        check(
            l.reasoning_max_chars <= 20_000,
            "llm.reasoning_max_chars",
            "must be 0-20000 (0: unbounded)",
        )?;
        check(
            l.subgoal_max_steps <= 10_000,
            "llm.subgoal_max_steps",
            "must be 0-10000 (0: never ask again before the goal is got)",
        )?;
        check(
            (0.0..=2.0).contains(&l.temperature),
            "llm.temperature",
            "must be 0-2",
        )?;
        check(
            (1..=32_768).contains(&l.max_tokens),
            "llm.max_tokens",
            "must be 1-32768",
        )?;
        Ok(())
    }
}
