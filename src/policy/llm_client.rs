//! Client for OpenAI-compatible chat-completions endpoints (OpenAI, Ollama, vLLM, llama-server).
//!
//! The API key is read from the environment variable named in the config at call time and is
//! never stored in the client's Debug output, logs or errors.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::LlmConfig;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("{url} answered HTTP {status}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
    },
    #[error("{url} answered with something that is not a chat completion: {reason}")]
    BadResponse { url: String, reason: String },
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: Vec<ChatMessage<'a>>,
    max_tokens: u32,
    temperature: f32,
}

#[derive(Serialize)]
struct ChatMessage<'a> {
    role: &'a str,
    content: &'a str,
}

/// The parts of a chat completion we read; unknown fields are ignored.
#[derive(Debug, Deserialize)]
pub struct ChatResponse {
    pub model: Option<String>,
    pub choices: Vec<Choice>,
    pub usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
pub struct Choice {
    pub message: ResponseMessage,
}

#[derive(Debug, Deserialize)]
pub struct ResponseMessage {
    #[serde(default)]
    pub content: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

pub struct LlmClient {
    http: reqwest::Client,
    base_url: String,
    model: String,
    api_key: Option<String>,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field(
                "base_url",
                &crate::config::mask_url_credentials(&self.base_url),
            )
            .field("model", &self.model)
            .field(
                "api_key",
                &crate::config::describe_secret(self.api_key.as_deref()),
            )
            .finish()
    }
}

/// rustls needs a process-wide crypto provider; ring is the cheap one to build.
fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl LlmClient {
    pub fn new(config: &LlmConfig) -> Result<Self, LlmError> {
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.timeout_secs))
            .connect_timeout(Duration::from_secs(config.timeout_secs.min(10)))
            .build()
            .map_err(|e| LlmError::Client(e.to_string()))?;
        Ok(LlmClient {
            http,
            base_url: config.base_url.trim_end_matches('/').to_string(),
            model: config.model.clone(),
            api_key: std::env::var(&config.api_key_env)
                .ok()
                .filter(|k| !k.is_empty()),
        })
    }

    pub fn has_api_key(&self) -> bool {
        self.api_key.is_some()
    }

    fn completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    /// One short completion; used by `doctor` to prove the endpoint and model answer.
    pub async fn ping(&self) -> Result<ChatResponse, LlmError> {
        self.complete("Reply with OK.", 1, 0.0).await
    }

    pub async fn complete(
        &self,
        prompt: &str,
        max_tokens: u32,
        temperature: f32,
    ) -> Result<ChatResponse, LlmError> {
        let url = self.completions_url();
        let shown_url = crate::config::mask_url_credentials(&url);
        let body = ChatRequest {
            model: &self.model,
            messages: vec![ChatMessage {
                role: "user",
                content: prompt,
            }],
            max_tokens,
            temperature,
        };
        let mut request = self.http.post(&url).json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| LlmError::Unreachable {
            url: shown_url.clone(),
            reason: e.without_url().to_string(),
        })?;
        let status = response.status();
        let text = response.text().await.map_err(|e| LlmError::Unreachable {
            url: shown_url.clone(),
            reason: e.without_url().to_string(),
        })?;
        if !status.is_success() {
            return Err(LlmError::Status {
                url: shown_url,
                status: status.as_u16(),
                body: text.chars().take(2000).collect(),
            });
        }
        serde_json::from_str(&text).map_err(|e| LlmError::BadResponse {
            url: shown_url,
            reason: format!(
                "{e}; body starts: {}",
                text.chars().take(300).collect::<String>()
            ),
        })
    }
}
