//! The LLM client and the validate-and-re-ask loop against a real local HTTP server (wiremock)
//! serving answers recorded from a real model: SmolLM2-135M-Instruct under llama.cpp's
//! llama-server (`bash scripts/llama-server.sh`, recorded with `vistawise policy ask
//! --record-llm`; see tests/fixtures/llm/README.md).

mod support;

use std::time::{Duration, Instant};

use serde_json::Value;
use vistawise::config::{Config, GuiScale, OutputMode};
use vistawise::policy::{ChatMessage, ChatOptions, LlmClient, LlmError, LlmPolicy, PriceTable};
use vistawise::skills::{ExpandContext, GameProfile};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// A response body recorded from the real model.
fn recorded(name: &str) -> Value {
    let text = std::fs::read_to_string(support::fixture(&format!("llm/{name}"))).expect("fixture");
    let v: Value = serde_json::from_str(&text).expect("json");
    v["response"].clone()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn config(server: &MockServer, key_env: &str) -> vistawise::config::LlmConfig {
    let mut c = Config::builtin().llm;
    c.base_url = format!("{}/v1", server.uri());
    c.model = "smollm2-135m".into();
    c.api_key_env = key_env.into();
    c.retry_backoff_ms = 50;
    c.max_retries = 3;
    c.timeout_secs = 1;
    c
}

fn hello() -> Vec<ChatMessage> {
    vec![ChatMessage::user("Say hi.")]
}

#[test]
fn rate_limits_and_server_errors_are_retried_honouring_retry_after() {
    let rt = runtime();
    rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(
                ResponseTemplate::new(429)
                    .insert_header("Retry-After", "1")
                    .set_body_string("{\"error\": {\"message\": \"slow down\"}}"),
            )
            .up_to_n_times(1)
            .with_priority(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
            .up_to_n_times(1)
            .with_priority(2)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(recorded("text/exchange-001.json")),
            )
            .with_priority(3)
            .mount(&server)
            .await;
        let client = LlmClient::new(&config(&server, "VW_TEST_NO_KEY")).expect("client");
        let started = Instant::now();
        let done = client
            .chat(
                &hello(),
                &ChatOptions {
                    max_tokens: 8,
                    ..ChatOptions::default()
                },
            )
            .await
            .expect("third attempt succeeds");
        assert_eq!(done.attempts, 3);
        // The 429 asked for 1 s; the backoff alone would have waited 50 ms.
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        assert!(done.response.usage.is_some());
        assert_eq!(
            server.received_requests().await.expect("recording").len(),
            3
        );
    });
}

#[test]
fn client_errors_stop_at_once_and_show_the_body() {
    let rt = runtime();
    rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(400)
                    .set_body_string("{\"error\": {\"message\": \"model 'nope' not found\"}}"),
            )
            .mount(&server)
            .await;
        let client = LlmClient::new(&config(&server, "VW_TEST_NO_KEY")).expect("client");
        let err = client
            .chat(&hello(), &ChatOptions::default())
            .await
            .expect_err("400");
        let text = err.to_string();
        assert!(
            matches!(err, LlmError::Status { status: 400, .. }),
            "{text}"
        );
        assert!(text.contains("model 'nope' not found"), "{text}");
        assert_eq!(
            server.received_requests().await.expect("recording").len(),
            1
        );
    });
}

#[test]
fn time_outs_are_retried_then_reported() {
    let rt = runtime();
    rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(recorded("text/exchange-001.json"))
                    .set_delay(Duration::from_secs(3)),
            )
            .mount(&server)
            .await;
        let mut c = config(&server, "VW_TEST_NO_KEY");
        c.max_retries = 1;
        let client = LlmClient::new(&c).expect("client");
        let err = client
            .chat(&hello(), &ChatOptions::default())
            .await
            .expect_err("times out");
        assert!(matches!(err, LlmError::Unreachable { .. }), "{err}");
        assert_eq!(
            server.received_requests().await.expect("recording").len(),
            2
        );
    });
}

#[test]
fn the_key_is_sent_as_bearer_but_never_recorded_or_printed() {
    let rt = runtime();
    let secret = "sk-test-0123456789abcdef";
    // SAFETY: this test binary's tests do not read this variable concurrently.
    unsafe { std::env::set_var("VW_TEST_LLM_KEY", secret) };
    let dir = tempfile::tempdir().expect("temp");
    rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(header("authorization", format!("Bearer {secret}").as_str()))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(recorded("text/exchange-001.json")),
            )
            .mount(&server)
            .await;
        let client = LlmClient::new(&config(&server, "VW_TEST_LLM_KEY"))
            .expect("client")
            .record_to(dir.path())
            .expect("record");
        assert!(!format!("{client:?}").contains(secret));
        client
            .chat(&hello(), &ChatOptions::default())
            .await
            .expect("authorised");
    });
    let recorded = std::fs::read_to_string(dir.path().join("exchange-001.json")).expect("record");
    assert!(recorded.contains("\"Say hi.\""), "{recorded}");
    assert!(!recorded.contains(secret));
}

/// Serves recorded answers in order, one per request.
struct Replay(Vec<Value>, std::sync::atomic::AtomicUsize);

impl wiremock::Respond for Replay {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let i = self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        ResponseTemplate::new(200).set_body_json(&self.0[i.min(self.0.len() - 1)])
    }
}

#[test]
fn an_invalid_answer_goes_back_with_the_reason_and_the_valid_one_is_taken() {
    let profile = GameProfile::load(&support::repo(), "minecraft").expect("profile");
    let layout = profile.gui.layout(1280, 720, GuiScale::Auto);
    let ctx = ExpandContext {
        window_w: 1280,
        window_h: 720,
        keys: &profile.keys,
        slots: &layout,
        camera: profile.camera,
    };
    let prices = PriceTable::load(&support::repo().join("config/prices.toml")).expect("prices");
    let rt = runtime();
    rt.block_on(async {
        let server = MockServer::start().await;
        // The real model's text answer has no action; its grammar-constrained one is valid.
        let answers = vec![
            recorded("text/exchange-001.json"),
            recorded("grammar/exchange-001.json"),
        ];
        Mock::given(method("POST"))
            .respond_with(Replay(answers, Default::default()))
            .mount(&server)
            .await;
        let mut c = config(&server, "VW_TEST_NO_KEY");
        c.output_mode = OutputMode::Text;
        c.max_invalid_answers = 2;
        let policy = LlmPolicy::new(LlmClient::new(&c).expect("client"), prices, &c);
        let turn = policy
            .decide("Obtain a log.", &profile.skills, &ctx)
            .await
            .expect("turn");
        assert_eq!(turn.attempts.len(), 2, "{turn:?}");
        let reason = turn.attempts[0].rejected.clone().expect("first rejected");
        let action = turn.action.expect("second valid");
        assert!(profile.skills.get(&action.call.skill).is_some());
        assert!(turn.usage.prompt_tokens > 0 && turn.usage.completion_tokens > 0);
        assert_eq!(turn.cost_usd, Some(0.0), "local model: free");
        // The second request carried the first answer and the reason back to the model.
        let requests = server.received_requests().await.expect("recording");
        let second: Value = serde_json::from_slice(&requests[1].body).expect("json");
        let messages = second["messages"].as_array().expect("messages");
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[1]["role"], "assistant");
        assert!(
            messages[2]["content"]
                .as_str()
                .expect("text")
                .contains(&reason),
            "{messages:?}"
        );
    });
}

#[test]
fn structured_mode_sends_the_schema_and_takes_the_json_answer() {
    let profile = GameProfile::load(&support::repo(), "minecraft").expect("profile");
    let layout = profile.gui.layout(1280, 720, GuiScale::Auto);
    let ctx = ExpandContext {
        window_w: 1280,
        window_h: 720,
        keys: &profile.keys,
        slots: &layout,
        camera: profile.camera,
    };
    let rt = runtime();
    rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(recorded("json_schema/exchange-001.json")),
            )
            .mount(&server)
            .await;
        let mut c = config(&server, "VW_TEST_NO_KEY");
        c.output_mode = OutputMode::Structured;
        c.constrain = vistawise::config::Constrain::JsonSchema;
        let policy = LlmPolicy::new(
            LlmClient::new(&c).expect("client"),
            PriceTable::default(),
            &c,
        );
        let turn = policy
            .decide("Obtain a log.", &profile.skills, &ctx)
            .await
            .expect("turn");
        let action = turn.action.expect("valid");
        assert_eq!(action.call.skill, "dig_vertical_mine_tunnels");
        assert_eq!(turn.cost_usd, None, "no price table: unknown cost");
        let requests = server.received_requests().await.expect("recording");
        let body: Value = serde_json::from_slice(&requests[0].body).expect("json");
        let alternatives = body["response_format"]["json_schema"]["schema"]["anyOf"]
            .as_array()
            .expect("anyOf");
        assert_eq!(alternatives.len(), profile.skills.skills.len());
        assert!(body.get("grammar").is_none());
    });
}
