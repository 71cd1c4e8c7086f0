//! The LLM client and the validate-and-re-ask loop against a real local HTTP server (wiremock)
//! serving answers recorded from a real model: SmolLM2-135M-Instruct under llama.cpp's
//! llama-server (`bash scripts/llama-server.sh`, recorded with `vistawise policy ask
//! --record-llm`; see tests/fixtures/llm/README.md).

use crate::support;

use std::time::{Duration, Instant};

use serde_json::Value;
use vistawise::config::{Config, GuiScale, OutputMode};
use vistawise::game::GameProfile;
use vistawise::llm::{ChatMessage, ChatOptions, LlmClient, LlmError, PriceTable};
use vistawise::policy::LlmPolicy;
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
        assert!(done.response.usage().is_some());
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
    let ctx = profile.expand_context(&layout, 1280, 720);
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
    let ctx = profile.expand_context(&layout, 1280, 720);
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

#[test]
fn a_huge_retry_after_is_capped_instead_of_panicking() {
    let rt = runtime();
    rt.block_on(async {
        for huge in ["1e300", "99999999999999999999"] {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", huge))
                .mount(&server)
                .await;
            let mut c = config(&server, "VW_TEST_NO_KEY");
            // No retry: the header is read, the error comes back at once.
            c.max_retries = 0;
            let client = LlmClient::new(&c).expect("client");
            match client.chat(&hello(), &ChatOptions::default()).await {
                Err(LlmError::Status { status: 429, .. }) => {}
                other => panic!("Retry-After {huge}: {other:?}"),
            }
        }
    });
}

#[test]
fn an_error_body_that_echoes_the_key_is_masked_in_the_error_and_the_recording() {
    let rt = runtime();
    let secret = "sk-echo-5f3a9c0e1b7d";
    // SAFETY: only this test reads this variable.
    unsafe { std::env::set_var("VW_TEST_LLM_KEY_ECHO", secret) };
    let dir = tempfile::tempdir().expect("temp");
    let err = rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(401).set_body_string(format!(
                "{{\"error\": \"bad key\", \"headers\": {{\"Authorization\": \"Bearer {secret}\"}}}}"
            )))
            .mount(&server)
            .await;
        let client = LlmClient::new(&config(&server, "VW_TEST_LLM_KEY_ECHO"))
            .expect("client")
            .record_to(dir.path())
            .expect("record");
        client
            .chat(&hello(), &ChatOptions::default())
            .await
            .expect_err("401")
    });
    let shown = err.to_string();
    assert!(shown.contains("Bearer ****"), "{shown}");
    assert!(!shown.contains(secret), "{shown}");
    let recorded = std::fs::read_to_string(dir.path().join("exchange-001.json")).expect("record");
    assert!(!recorded.contains(secret), "{recorded}");
}

#[test]
fn a_base_url_with_credentials_beside_a_key_is_refused() {
    // SAFETY: only this test reads this variable.
    unsafe { std::env::set_var("VW_TEST_LLM_KEY_URL", "sk-url-test") };
    let mut c = Config::builtin().llm;
    c.base_url = "http://alice:hunter2@127.0.0.1:9/v1".into();
    c.api_key_env = "VW_TEST_LLM_KEY_URL".into();
    let err = LlmClient::new(&c).expect_err("two Authorization headers");
    let shown = err.to_string();
    assert!(shown.contains("user:password"), "{shown}");
    assert!(!shown.contains("hunter2"), "{shown}");
    // Without a key the URL's credentials are the only ones: allowed.
    c.api_key_env = "VW_TEST_NO_KEY".into();
    LlmClient::new(&c).expect("credentials in the URL alone");
}

#[test]
fn an_endpoint_that_reports_no_usage_is_counted_by_the_agent_and_priced() {
    let profile = GameProfile::load(&support::repo(), "minecraft").expect("profile");
    let layout = profile.gui.layout(1280, 720, GuiScale::Auto);
    let ctx = profile.expand_context(&layout, 1280, 720);
    let prices = PriceTable::load(&support::repo().join("config/prices.toml")).expect("prices");
    let counter = vistawise::policy::TokenCounter::o200k().expect("tokenizer");
    let rt = runtime();
    rt.block_on(async {
        let server = MockServer::start().await;
        let mut answer = recorded("grammar/exchange-001.json");
        answer
            .as_object_mut()
            .expect("object")
            .remove("usage")
            .expect("the recording has usage");
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(answer))
            .mount(&server)
            .await;
        let policy = priced_text_policy(&server, prices);
        let prompt = "Obtain a log. ".repeat(50);
        let mut turn = policy
            .decide(&prompt, &profile.skills, &ctx)
            .await
            .expect("turn");
        assert_eq!(turn.usage.prompt_tokens, 0, "nothing reported");
        assert_eq!(turn.cost_usd, Some(0.0));
        policy.count_unreported(&mut turn, &counter);
        assert!(turn.usage.estimated);
        assert!(turn.usage.prompt_tokens >= counter.count(&prompt) as u64);
        assert!(turn.usage.completion_tokens > 0);
        assert!(turn.cost_usd.expect("gpt-4o has a price") > 0.0, "{turn:?}");
        // The step record says the tokens are the agent's count.
        let written = serde_json::to_value(turn.usage).expect("json");
        assert_eq!(written["estimated"], true);
    });
}

#[test]
fn a_stop_cuts_a_slow_request_and_a_retry_back_off_at_once() {
    use vistawise::policy::until_stopped;
    use vistawise::skills::{StopFlag, StopReason};
    let rt = runtime();
    let (server, slow_uri) = rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/slow/v1/chat/completions"))
            .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(60)))
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/busy/v1/chat/completions"))
            .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "100"))
            .mount(&server)
            .await;
        let uri = server.uri();
        (server, uri)
    });
    for route in ["slow", "busy"] {
        let mut c = Config::builtin().llm;
        c.base_url = format!("{slow_uri}/{route}/v1");
        c.api_key_env = "VW_TEST_NO_KEY".into();
        c.timeout_secs = 90;
        c.max_retries = 3;
        let client = LlmClient::new(&c).expect("client");
        let stop = StopFlag::default();
        let pressed = stop.clone();
        let ctrl_c = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            pressed.request(StopReason::Interrupted);
        });
        let started = Instant::now();
        let out = until_stopped(&rt, &stop, client.chat(&hello(), &ChatOptions::default()));
        ctrl_c.join().expect("thread");
        assert!(out.is_none(), "{route}: the request was not cut: {out:?}");
        // The request alone would take 60 s (slow) or 300 s of back-off (busy).
        assert!(started.elapsed() < Duration::from_secs(20), "{route}");
    }
    drop(server);
}

/// A hostile endpoint: every kind of bad answer a server or model can give, in turn.
struct Hostile(std::sync::atomic::AtomicUsize);

const HOSTILE_KINDS: usize = 16;

fn completion_with(content: Value) -> Value {
    serde_json::json!({
        "model": "fuzz",
        "choices": [{"message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}
    })
}

impl wiremock::Respond for Hostile {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let ok =
            |content: Value| ResponseTemplate::new(200).set_body_json(completion_with(content));
        match n % HOSTILE_KINDS {
            0 => ResponseTemplate::new(200)
                .set_body_string("<html><body>502 Bad Gateway</body></html>"),
            1 => ok(Value::String(format!(
                "{n}\u{0}\u{202e}Action: 🪓(\u{ff14})"
            ))),
            2 => ok(Value::String("Action: fly_away(1)".into())),
            3 => ok(Value::String(
                [
                    "Action: mine_log(nan)",
                    "Action: mine_log(inf)",
                    "Action: mine_log(1e309)",
                ][n % 3]
                    .into(),
            )),
            4 => ok(Value::String("Action: turn(99999, -99999)".into())),
            5 => ok(Value::String("x".repeat(100_000))),
            6 => ResponseTemplate::new(429).insert_header("Retry-After", "1e300"),
            7 => ResponseTemplate::new([500, 503][n % 2]).set_body_string("overloaded"),
            8 => ResponseTemplate::new(200).set_body_json(serde_json::json!({"choices": []})),
            9 => ok(Value::Null),
            10 => ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "choices": [{"message": {"content": "Action: mine_log(2)"}}],
                "usage": {"prompt_tokens": -5, "completion_tokens": 1e30}
            })),
            11 => ok(Value::String("Action: mine_log(-3)".into())),
            12 => ok(Value::String("Action: craft_stick(1e9, 5)".into())),
            13 => ResponseTemplate::new(200).set_body_string("{\"choices\": [{\"message\": "),
            14 if n % 64 == 14 => ResponseTemplate::new(200)
                .set_delay(Duration::from_secs(3))
                .set_body_json(completion_with(Value::String("Action: mine_log(2)".into()))),
            _ => ok(Value::String(format!(
                "The trunk is near.\nAction: mine_log({})",
                1 + n % 5
            ))),
        }
    }
}

#[test]
fn a_hostile_endpoint_never_gets_an_invalid_action_through() {
    let profile = GameProfile::load(&support::repo(), "minecraft").expect("profile");
    let layout = profile.gui.layout(1280, 720, GuiScale::Auto);
    let ctx = profile.expand_context(&layout, 1280, 720);
    let rt = runtime();
    let (mut actions, mut refused, mut transport) = (0, 0, 0);
    rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(Hostile(Default::default()))
            .mount(&server)
            .await;
        let mut c = config(&server, "VW_TEST_NO_KEY");
        c.output_mode = OutputMode::Text;
        c.max_retries = 0;
        c.max_invalid_answers = 2;
        let policy = LlmPolicy::new(
            LlmClient::new(&c).expect("client"),
            PriceTable::default(),
            &c,
        );
        for _ in 0..300 {
            match policy.decide("Obtain a log.", &profile.skills, &ctx).await {
                Ok(turn) => {
                    for a in &turn.attempts {
                        let text = serde_json::to_string(a).expect("serialise");
                        let back: vistawise::policy::Attempt =
                            serde_json::from_str(&text).expect("an attempt reads back");
                        assert_eq!(&back, a);
                    }
                    match &turn.action {
                        Some(action) => {
                            actions += 1;
                            // Only the well-formed mine_log answers are valid.
                            assert_eq!(action.call.skill, "mine_log", "{turn:?}");
                            let d = action.call.args[0].value;
                            assert!((1.0..=5.0).contains(&d), "{action:?}");
                        }
                        None => refused += 1,
                    }
                }
                Err(_) => transport += 1,
            }
        }
    });
    // Every kind came up and each outcome happened: the run exercised all three ways.
    assert!(
        actions > 0 && refused > 0 && transport > 0,
        "{actions} {refused} {transport}"
    );
}

#[test]
fn cached_prompt_tokens_are_read_from_usage_or_llama_timings_and_priced_as_cached() {
    // The recorded llama-server answer says 1862 of its 1905 prompt tokens came from the
    // prefix cache, in `usage.prompt_tokens_details` and again in `timings.cache_n`.
    let profile = GameProfile::load(&support::repo(), "minecraft").expect("profile");
    let layout = profile.gui.layout(1280, 720, GuiScale::Auto);
    let ctx = profile.expand_context(&layout, 1280, 720);
    let prices = PriceTable::load(&support::repo().join("config/prices.toml")).expect("prices");
    let full = recorded("grammar/exchange-001.json");
    let mut timings_only = full.clone();
    timings_only["usage"]
        .as_object_mut()
        .expect("usage")
        .remove("prompt_tokens_details");
    let mut details_only = full.clone();
    details_only
        .as_object_mut()
        .expect("object")
        .remove("timings");
    let mut neither = details_only.clone();
    neither["usage"]
        .as_object_mut()
        .expect("usage")
        .remove("prompt_tokens_details");
    let rt = runtime();
    for (body, cached) in [
        (full, 1862),
        (timings_only, 1862),
        (details_only, 1862),
        (neither, 0),
    ] {
        rt.block_on(async {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(ResponseTemplate::new(200).set_body_json(body))
                .mount(&server)
                .await;
            let mut c = config(&server, "VW_TEST_NO_KEY");
            c.model = "gpt-4o-mini".into();
            c.output_mode = OutputMode::Text;
            let policy = LlmPolicy::new(LlmClient::new(&c).expect("client"), prices.clone(), &c);
            let turn = policy
                .decide("Obtain a log.", &profile.skills, &ctx)
                .await
                .expect("turn");
            assert_eq!(turn.usage.prompt_tokens, 1905);
            assert_eq!(turn.usage.cached_tokens, cached);
            // gpt-4o-mini: $0.15 per million input tokens, $0.075 cached, $0.60 output.
            let uncached = (1905 - cached) as f64;
            let want = (uncached * 0.15 + cached as f64 * 0.075 + 32.0 * 0.60) / 1e6;
            let cost = turn.cost_usd.expect("priced");
            assert!((cost - want).abs() < 1e-12, "{cost} != {want}");
            // The step record keeps the cached count (and leaves it out when there is none).
            let written = serde_json::to_value(turn.usage).expect("json");
            assert_eq!(
                written.get("cached_tokens").is_some(),
                cached > 0,
                "{written}"
            );
        });
    }
}

/// Answers the n-th request with the n-th text, as llama.cpp would, with usage whose prompt
/// after the first comes 90% from the cache.
struct Scripted(Vec<String>, std::sync::atomic::AtomicUsize);

impl wiremock::Respond for Scripted {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let text = self.0.get(n).cloned().unwrap_or_default();
        let cached = if n == 0 { 0 } else { 900 };
        ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "model": "scripted",
            "choices": [{"message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 20,
                      "prompt_tokens_details": {"cached_tokens": cached}}
        }))
    }
}

/// A local endpoint answering the chat requests with `answers` in turn ([`Scripted`]).
/// A text-mode policy on `server` for a model with a price (gpt-4o), without an API key.
fn priced_text_policy(server: &MockServer, prices: PriceTable) -> LlmPolicy {
    let mut c = config(server, "VW_TEST_NO_KEY");
    c.model = "gpt-4o-2024-08-06".into();
    c.output_mode = OutputMode::Text;
    LlmPolicy::new(LlmClient::new(&c).expect("client"), prices, &c)
}

fn scripted_server(rt: &tokio::runtime::Runtime, answers: Vec<String>) -> MockServer {
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(Scripted(answers, Default::default()))
            .mount(&server),
    );
    server
}

#[test]
fn policy_eval_scores_answers_against_the_accepted_calls_of_the_committed_cases() {
    // The committed cases of the client's log task: the recorded calls, once right, once the
    // same skill off target, once a skill that does not exist, the rest right again.
    let file = support::fixture("policy-eval/minecraft-web/log-seed1001.jsonl");
    let cases = vistawise::agent::decision_bench::CaseFile::load(&file).expect("cases");
    let n = cases.cases.len();
    assert!(n >= 3, "the log cases hold {n} steps");
    let as_text = |c: &vistawise::skills::SkillCall| {
        let args: Vec<String> = c.args.iter().map(|a| a.value.to_string()).collect();
        format!("Thinking.\nAction: {}({})", c.skill, args.join(", "))
    };
    let mut answers: Vec<String> = cases.cases.iter().map(|c| as_text(&c.recorded)).collect();
    // The second case's skill with its first argument moved to a value of the skill's range
    // that no accepted call takes.
    let library = GameProfile::load(&support::repo(), "minecraft-web")
        .expect("profile")
        .skills;
    let second = &cases.cases[1];
    let skill = library.get(&second.recorded.skill).expect("skill");
    let param = skill
        .params
        .first()
        .expect("the second call takes arguments");
    let (lo, hi) = (param.min.unwrap_or(0.0), param.max.unwrap_or(1279.0));
    let values: Vec<f64> = second.recorded.args.iter().map(|a| a.value).collect();
    let moved = (0..=100)
        .map(|i| (lo + (hi - lo) * f64::from(i) / 100.0).round())
        .find(|&v| {
            let mut tried = values.clone();
            tried[0] = v;
            (lo..=hi).contains(&v) && !second.accept.iter().any(|a| a.accepts(&skill.name, &tried))
        })
        .expect("a value no accepted call takes");
    let mut off = second.recorded.clone();
    off.args[0].value = moved;
    answers[1] = as_text(&off);
    answers[2] = "Action: fly_to_the_tree(1)".into();
    let rt = runtime();
    let server = scripted_server(&rt, answers);
    let results = tempfile::tempdir().expect("tmp");
    let results_file = results.path().join("results.jsonl");
    let out = support::binary()
        .args(["--game", "minecraft-web"])
        .args(["--set", &format!("llm.base_url={}/v1", server.uri())])
        .args([
            "--set",
            "llm.model=gpt-4o-mini",
            "--set",
            "llm.api_key_env=VW_TEST_NO_KEY",
        ])
        .args([
            "--set",
            "llm.output_mode=text",
            "--set",
            "llm.max_invalid_answers=0",
        ])
        .args(["policy", "eval", "--json", "--results"])
        .arg(&results_file)
        .arg(&file)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&text).expect("json");
    let all = &v["overall"];
    assert_eq!(all["cases"], n);
    assert_eq!(all["valid"], n - 1, "{all}");
    assert_eq!(all["same_skill"], n - 1, "{all}");
    assert_eq!(all["agrees"], n - 2, "{all}");
    assert!(
        all["invalid_reasons"][0][0]
            .as_str()
            .is_some_and(|r| r.contains("fly_to_the_tree")),
        "{all}"
    );
    // Tokens: every case asked once; after the first, 90% of the prompt came from the cache.
    let spent = &all["spent"];
    assert_eq!(spent["usage"]["prompt_tokens"], 1000 * n);
    assert_eq!(spent["usage"]["cached_tokens"], 900 * (n - 1));
    assert_eq!(spent["after_first"]["cached_tokens"], 900 * (n - 1));
    assert!(
        spent["cost_usd"].as_f64().is_some_and(|c| c > 0.0),
        "{spent}"
    );
    // Each case's answer was written as it came.
    let lines = std::fs::read_to_string(&results_file).expect("results");
    assert_eq!(lines.lines().count(), n);
    let second: Value = serde_json::from_str(lines.lines().nth(1).expect("line")).expect("json");
    assert_eq!(second["same_skill"], true);
    assert_eq!(second["agrees"], false);
    // Cases of another game are refused with the command that fits.
    let out = support::binary()
        .args(["--game", "minetest", "policy", "eval"])
        .arg(&file)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--game minecraft-web policy eval"), "{err}");
}

/// `play --policy subgoal` over the detector fixture frames (dry run) against a scripted
/// endpoint: the session's lines.
fn play_subgoal(answers: Vec<String>, steps: &str) -> (Vec<Value>, usize) {
    let (lines, requests) = play_subgoal_with(answers, steps, &[]);
    (lines, requests.len())
}

/// The same with more `--set KEY=VALUE`s; the bodies of the requests the endpoint received.
fn play_subgoal_with(answers: Vec<String>, steps: &str, sets: &[&str]) -> (Vec<Value>, Vec<Value>) {
    let rt = runtime();
    let server = scripted_server(&rt, answers);
    let sessions = tempfile::tempdir().expect("tmp");
    let out = support::binary()
        .args(["--set", &format!("llm.base_url={}/v1", server.uri())])
        .args([
            "--set",
            "llm.model=local-test",
            "--set",
            "llm.api_key_env=VW_TEST_NO_KEY",
        ])
        .args([
            "--set",
            "llm.output_mode=text",
            "--set",
            "llm.max_invalid_answers=1",
        ])
        .args(sets.iter().flat_map(|s| ["--set", s]))
        .args([
            "play",
            "--task",
            "planks",
            "--policy",
            "subgoal",
            "--dry-run",
        ])
        .args(["--max-steps", steps, "--session-id", "s", "--frames"])
        .arg(support::fixture("detector/images"))
        .env_remove("DISPLAY")
        .env("VISTAWISE_ORT_LIB", support::ort_lib())
        .env(
            "VISTAWISE_DETECTOR__MODEL",
            "tests/fixtures/detector/tiny-raw.onnx",
        )
        .env("VISTAWISE_SESSION__DIR", sessions.path())
        .output()
        .expect("run");
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(sessions.path().join("s/session.jsonl")).expect("session");
    let lines = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    let requests = rt
        .block_on(server.received_requests())
        .expect("recording")
        .iter()
        .filter_map(|r| serde_json::from_slice(&r.body).ok())
        .collect();
    (lines, requests)
}

#[test]
fn a_subgoal_not_got_within_its_steps_is_put_to_the_llm_again_with_what_became_of_it() {
    // Planks are not got on these frames; after 2 steps toward them the LLM is asked again,
    // told why, and names them again.
    let (lines, requests) = play_subgoal_with(
        vec!["Goal: Planks".into(), "Goal: Planks".into()],
        "4",
        &["llm.subgoal_max_steps=2"],
    );
    let steps: Vec<&Value> = lines.iter().filter(|v| v["kind"] == "step").collect();
    let reasons: Vec<&str> = steps
        .iter()
        .filter_map(|s| s["reasoning"].as_str())
        .collect();
    assert_eq!(requests.len(), 2, "{reasons:?}");
    assert!(reasons[0].starts_with("goal Planks (asked"), "{reasons:?}");
    assert!(reasons[1].starts_with("goal Planks:"), "{reasons:?}");
    assert!(reasons[2].starts_with("goal Planks (asked"), "{reasons:?}");
    assert!(reasons[3].starts_with("goal Planks:"), "{reasons:?}");
    let question = requests[1].to_string();
    assert!(
        question.contains(
            "The last goal: the controller took 2 steps toward Planks without getting it."
        ),
        "{question}"
    );
    assert!(!requests[0].to_string().contains("The last goal"));
}

#[test]
fn the_subgoal_policy_asks_for_an_item_once_and_the_planner_works_toward_it() {
    // The LLM names the planks (in its own words); the planner then acts every step without
    // asking again until they are obtained.
    let (lines, requests) = play_subgoal(vec!["A log makes planks.\nGoal: **planks**".into()], "3");
    let steps: Vec<&Value> = lines.iter().filter(|v| v["kind"] == "step").collect();
    assert_eq!(steps.len(), 3);
    assert_eq!(requests, 1, "asked once for three steps");
    for s in &steps {
        assert_eq!(s["validation"], "valid", "{s}");
        assert!(
            s["reasoning"]
                .as_str()
                .is_some_and(|r| r.starts_with("goal Planks")),
            "{s}"
        );
    }
    assert_eq!(
        steps[0]["attempts"][0]["answer"],
        "A log makes planks.\nGoal: **planks**"
    );
    assert_eq!(steps[0]["usage"]["prompt_tokens"], 1000);
    // The question listed the items the planner can obtain, in the skill library's place.
    assert!(
        steps[0]["prompt"].is_string(),
        "the step keeps the action prompt"
    );

    // An item that is not an option is sent back once (max_invalid_answers = 1), then the step
    // has no action and the next step asks again.
    let (lines, requests) = play_subgoal(
        vec![
            "Goal: Diamond".into(),
            "Goal: a tree".into(),
            "Goal: Planks".into(),
        ],
        "2",
    );
    let steps: Vec<&Value> = lines.iter().filter(|v| v["kind"] == "step").collect();
    assert_eq!(requests, 3);
    assert_eq!(steps[0]["validation"], "no goal named", "{}", steps[0]);
    let rejected = steps[0]["attempts"][0]["rejected"]
        .as_str()
        .unwrap_or_default();
    assert!(rejected.contains("\"Diamond\" is not one of"), "{rejected}");
    assert!(steps[0]["action"].is_null());
    assert_eq!(steps[1]["validation"], "valid", "{}", steps[1]);
}

#[test]
fn a_subgoal_question_whose_endpoint_reports_no_usage_is_counted_and_priced() {
    let prices = PriceTable::load(&support::repo().join("config/prices.toml")).expect("prices");
    let counter = vistawise::policy::TokenCounter::o200k().expect("tokenizer");
    let rt = runtime();
    rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "choices": [{"message": {"role": "assistant", "content": "Goal: Log"}}]
            })))
            .mount(&server)
            .await;
        let policy = priced_text_policy(&server, prices);
        let prompt = "Obtain a log. ".repeat(50);
        let mut choice = policy
            .choose(&prompt, &["Log".to_string(), "Planks".to_string()])
            .await
            .expect("choice");
        assert_eq!(choice.goal.as_deref(), Some("Log"));
        assert_eq!(choice.usage.prompt_tokens, 0, "nothing reported");
        policy.count_unreported_choice(&mut choice, &counter);
        // The cost cap is not blind: the agent's own count, priced.
        assert!(choice.usage.estimated);
        assert!(choice.usage.prompt_tokens >= counter.count(&prompt) as u64);
        assert!(
            choice.cost_usd.expect("gpt-4o has a price") > 0.0,
            "{choice:?}"
        );
    });
}
