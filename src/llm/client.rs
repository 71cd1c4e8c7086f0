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
    messages: &'a [ChatMessage],
    max_tokens: u32,
    temperature: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<&'a serde_json::Value>,
    /// llama.cpp's GBNF constraint (other servers ignore or reject unknown fields).
    #[serde(skip_serializing_if = "Option::is_none")]
    grammar: Option<&'a str>,
}

/// Who a chat message is from, as OpenAI-compatible endpoints name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

impl ChatMessage {
    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::User,
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What to ask: the conversation, and how the answer is constrained.
#[derive(Debug, Clone, Default)]
pub struct ChatOptions {
    pub max_tokens: u32,
    pub temperature: f32,
    pub response_format: Option<serde_json::Value>,
    pub grammar: Option<String>,
}

/// The parts of a chat completion we read; unknown fields are ignored.
#[derive(Debug, Deserialize)]
pub struct ChatResponse {
    pub model: Option<String>,
    pub choices: Vec<Choice>,
    usage: Option<ReportedUsage>,
    /// llama.cpp's own figures, beside (or, in older servers, instead of) `usage`'s details.
    timings: Option<Timings>,
}

impl ChatResponse {
    /// The tokens the endpoint reported, with the prompt tokens it took from its prefix cache:
    /// OpenAI and vLLM say so in `usage.prompt_tokens_details.cached_tokens`, llama.cpp in
    /// `timings.cache_n`. `None` when the endpoint reported no usage.
    pub fn usage(&self) -> Option<Usage> {
        let u = self.usage.as_ref()?;
        let cached = u
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .or_else(|| self.timings.as_ref().and_then(|t| t.cache_n))
            .unwrap_or(0);
        Some(Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            // A cache larger than the prompt is a server's miscount, not a discount.
            cached_tokens: cached.min(u.prompt_tokens),
            estimated: false,
        })
    }

    /// The text of the first choice ("" when there is none).
    pub fn text(&self) -> String {
        self.choices
            .first()
            .and_then(|c| c.message.content.clone())
            .unwrap_or_default()
    }
}

/// `usage` as OpenAI-compatible endpoints write it.
#[derive(Debug, Deserialize)]
struct ReportedUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Debug, Deserialize)]
struct PromptTokensDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

/// llama-server's `timings`: `cache_n` prompt tokens came from the KV cache.
#[derive(Debug, Deserialize)]
struct Timings {
    #[serde(default)]
    cache_n: Option<u64>,
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

/// Tokens of one or more requests, as recorded per step.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct Usage {
    /// Every prompt token, cached ones included.
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of `prompt_tokens`, those the endpoint took from its prefix cache (billed at the cached
    /// price, not recomputed); 0 when the endpoint does not say.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
    /// Some of these tokens were counted by the agent (o200k_base) because the endpoint reported
    /// no `usage`: the cost cap must not go blind on such an endpoint.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Adds another request's tokens (an `estimated` part makes the sum estimated).
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
        self.estimated |= other.estimated;
    }

    /// Prompt tokens the endpoint had to compute.
    pub fn uncached_prompt_tokens(&self) -> u64 {
        self.prompt_tokens.saturating_sub(self.cached_tokens)
    }

    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }
}

pub struct LlmClient {
    http: reqwest::Client,
    base_url: String,
    model: String,
    api_key: Option<String>,
    max_retries: u32,
    backoff: Duration,
    /// When set, every exchange is written there as `exchange-NNN.json` (request body without
    /// the key, status, response body) for replay in tests.
    record_dir: Option<std::path::PathBuf>,
    recorded: std::sync::atomic::AtomicUsize,
}

/// A chat completion and what it took to get it.
#[derive(Debug)]
pub struct Completion {
    pub response: ChatResponse,
    /// HTTP attempts made (1 = no retry).
    pub attempts: u32,
}

/// Longest wait a Retry-After header can impose.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

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
        let api_key = std::env::var(&config.api_key_env)
            .ok()
            .filter(|k| !k.is_empty());
        // reqwest sends the URL's user:password as Basic auth beside the Bearer key: two
        // Authorization headers, and the endpoint picks one.
        if api_key.is_some()
            && reqwest::Url::parse(&config.base_url)
                .is_ok_and(|u| !u.username().is_empty() || u.password().is_some())
        {
            return Err(LlmError::Client(format!(
                "llm.base_url ({}) holds a user:password@ and {} holds a key: give the key \
                 in one place only",
                crate::config::mask_url_credentials(&config.base_url),
                config.api_key_env
            )));
        }
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.timeout_secs))
            .connect_timeout(Duration::from_secs(config.timeout_secs.min(10)))
            .build()
            .map_err(|e| LlmError::Client(e.to_string()))?;
        Ok(LlmClient {
            http,
            base_url: config.base_url.trim_end_matches('/').to_string(),
            model: config.model.clone(),
            api_key,
            max_retries: config.max_retries,
            backoff: Duration::from_millis(config.retry_backoff_ms),
            record_dir: None,
            recorded: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// Records every exchange into `dir` (created if missing).
    pub fn record_to(mut self, dir: &std::path::Path) -> Result<Self, LlmError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| LlmError::Client(format!("cannot create {}: {e}", dir.display())))?;
        self.record_dir = Some(dir.to_path_buf());
        Ok(self)
    }

    fn record(&self, request: &ChatRequest, status: u16, body: &str) {
        let Some(dir) = &self.record_dir else {
            return;
        };
        let n = self
            .recorded
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let response: serde_json::Value =
            serde_json::from_str(body).unwrap_or_else(|_| serde_json::Value::String(body.into()));
        let record = serde_json::json!({
            "request": request,
            "status": status,
            "response": response,
        });
        let path = dir.join(format!("exchange-{:03}.json", n + 1));
        let text = serde_json::to_string_pretty(&record).unwrap_or_default();
        if let Err(e) = std::fs::write(&path, text) {
            tracing::warn!("cannot record the LLM exchange to {}: {e}", path.display());
        }
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// A response with the configured key replaced: an error page that echoes the request's
    /// Authorization header must not carry the key into errors, sessions or recordings.
    fn mask_key(&self, text: String) -> String {
        match &self.api_key {
            Some(key) if text.contains(key.as_str()) => text.replace(key.as_str(), "****"),
            _ => text,
        }
    }

    pub fn has_api_key(&self) -> bool {
        self.api_key.is_some()
    }

    fn completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    /// One short completion; used by `doctor` to prove the endpoint and model answer.
    pub async fn ping(&self) -> Result<ChatResponse, LlmError> {
        let options = ChatOptions {
            max_tokens: 1,
            ..ChatOptions::default()
        };
        Ok(self
            .chat(&[ChatMessage::user("Reply with OK.")], &options)
            .await?
            .response)
    }

    /// A chat completion, retried with exponential backoff on time-outs, connection errors,
    /// HTTP 429 and 5xx (a Retry-After header sets the wait). Other errors return at once with
    /// the server's error body.
    pub async fn chat(
        &self,
        messages: &[ChatMessage],
        options: &ChatOptions,
    ) -> Result<Completion, LlmError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.chat_once(messages, options).await {
                Ok(response) => {
                    return Ok(Completion {
                        response,
                        attempts: attempt,
                    });
                }
                Err((err, retry_after)) => {
                    let retryable = match &err {
                        LlmError::Unreachable { .. } => true,
                        LlmError::Status { status, .. } => *status == 429 || *status >= 500,
                        _ => false,
                    };
                    if !retryable || attempt > self.max_retries {
                        return Err(err);
                    }
                    let backoff = self.backoff.saturating_mul(1 << (attempt - 1).min(16));
                    let wait = retry_after.unwrap_or(backoff).min(MAX_RETRY_AFTER);
                    tracing::warn!(
                        "LLM request failed ({err}); retry {attempt}/{} in {:.1} s",
                        self.max_retries,
                        wait.as_secs_f64()
                    );
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    async fn chat_once(
        &self,
        messages: &[ChatMessage],
        options: &ChatOptions,
    ) -> Result<ChatResponse, (LlmError, Option<Duration>)> {
        let url = self.completions_url();
        let shown_url = crate::config::mask_url_credentials(&url);
        let body = ChatRequest {
            model: &self.model,
            messages,
            max_tokens: options.max_tokens,
            temperature: options.temperature,
            response_format: options.response_format.as_ref(),
            grammar: options.grammar.as_deref(),
        };
        let mut request = self.http.post(&url).json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let unreachable = |e: reqwest::Error| {
            (
                LlmError::Unreachable {
                    url: shown_url.clone(),
                    reason: e.without_url().to_string(),
                },
                None,
            )
        };
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = self.mask_key(response.text().await.map_err(unreachable)?);
        self.record(&body, status.as_u16(), &text);
        if !status.is_success() {
            return Err((
                LlmError::Status {
                    url: shown_url,
                    status: status.as_u16(),
                    body: text.chars().take(2000).collect(),
                },
                retry_after,
            ));
        }
        serde_json::from_str(&text).map_err(|e| {
            (
                LlmError::BadResponse {
                    url: shown_url,
                    reason: format!(
                        "{e}; body starts: {}",
                        text.chars().take(300).collect::<String>()
                    ),
                },
                None,
            )
        })
    }
}

/// Retry-After: delay-seconds or an HTTP date, never more than [`MAX_RETRY_AFTER`] (a header
/// such as `1e300` must neither panic the conversion nor hold the agent).
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0)
            .then(|| Duration::from_secs_f64(secs.min(MAX_RETRY_AFTER.as_secs_f64())));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO)
            .min(MAX_RETRY_AFTER),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_go_over_the_wire_as_the_endpoints_name_them() {
        let sent = serde_json::to_value([ChatMessage::user("hi"), ChatMessage::assistant("ok")])
            .expect("json");
        assert_eq!(
            sent,
            serde_json::json!([
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "ok"}
            ])
        );
        let read: ChatMessage =
            serde_json::from_str(r#"{"role": "system", "content": "be brief"}"#).expect("read");
        assert_eq!(read.role, Role::System);
        assert!(serde_json::from_str::<ChatMessage>(r#"{"role": "tool", "content": ""}"#).is_err());
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("nan"), None);
        for huge in ["1e300", "99999999999999999999", "inf"] {
            let wait = parse_retry_after(huge);
            assert!(
                wait.is_none() || wait == Some(MAX_RETRY_AFTER),
                "{huge}: {wait:?}"
            );
        }
        assert_eq!(parse_retry_after("1e300"), Some(MAX_RETRY_AFTER));
        assert_eq!(
            parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT"),
            Some(MAX_RETRY_AFTER)
        );
    }
}
