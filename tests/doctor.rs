//! `vistawise doctor` against real parts: Xvfb + jwm with a real X11 window, ONNX Runtime with a
//! real detector file, and an HTTP server speaking the chat-completions protocol.

use crate::support;

use crate::support::{TestWindow, XServer, binary};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A chat completion as OpenAI-compatible servers send it (shape from llama-server/OpenAI).
const COMPLETION: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1763800000,
"model":"smollm2-135m","choices":[{"index":0,"message":{"role":"assistant","content":"OK"},
"finish_reason":"length"}],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13},
"system_fingerprint":"b1-unknown","timings":{"predicted_n":1}}"#;

struct Run {
    code: i32,
    out: String,
}

fn doctor(display: Option<&str>, llm_url: &str, extra: &[&str]) -> Run {
    let mut cmd = binary();
    cmd.args(["doctor", "--model", "tests/fixtures/detector/tiny-e2e.onnx"])
        .args(extra)
        .env("VISTAWISE_ORT_LIB", support::ort_lib())
        .env("VISTAWISE_GAME__WINDOW_TITLE", "Minecraft")
        .env("VISTAWISE_LLM__BASE_URL", llm_url)
        .env("VISTAWISE_LLM__API_KEY_ENV", "VW_TEST_KEY")
        .env("VW_TEST_KEY", "sk-test-123");
    match display {
        Some(d) => cmd.env("DISPLAY", d),
        None => cmd.env_remove("DISPLAY"),
    };
    let out = cmd.output().expect("run doctor");
    Run {
        code: out.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr),
    }
}

async fn llm_server(status: u16, body: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-test-123"))
        .respond_with(
            ResponseTemplate::new(status).set_body_raw(body.to_string(), "application/json"),
        )
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn all_checks_pass_with_runtime_detector_window_and_endpoint() {
    let x = XServer::start(1280, 720);
    let _game = TestWindow::open(&x.display, "Minecraft 1.20.1 - Singleplayer", 854, 480);
    let llm = llm_server(200, COMPLETION).await;
    let run = doctor(Some(&x.display), &format!("{}/v1", llm.uri()), &[]);
    assert_eq!(run.code, 0, "{}", run.out);
    assert!(
        run.out.contains("[ ok ] onnxruntime") && run.out.contains("(1.31.1)"),
        "{}",
        run.out
    );
    assert!(
        run.out.contains("[ ok ] detector") && run.out.contains("23 classes"),
        "{}",
        run.out
    );
    assert!(run.out.contains("[ ok ] display"), "{}", run.out);
    assert!(
        run.out
            .contains("[ ok ] game window  \"Minecraft 1.20.1 - Singleplayer\"")
            && run.out.contains("854x480"),
        "{}",
        run.out
    );
    assert!(
        run.out.contains("[ ok ] llm") && run.out.contains("smollm2-135m"),
        "{}",
        run.out
    );
    // The request really reached the server, once.
    assert_eq!(llm.received_requests().await.map(|r| r.len()), Some(1));
    assert!(!run.out.contains("sk-test-123"));
}

#[tokio::test]
async fn missing_window_and_refused_key_fail_with_fixes() {
    let x = XServer::start(1280, 720);
    let _other = TestWindow::open(&x.display, "Some Editor", 400, 300);
    let llm = llm_server(401, r#"{"error":{"message":"Incorrect API key provided"}}"#).await;
    let run = doctor(Some(&x.display), &format!("{}/v1", llm.uri()), &[]);
    assert_eq!(run.code, 1, "{}", run.out);
    assert!(run.out.contains("[FAIL] game window"), "{}", run.out);
    assert!(
        run.out.contains("\"Some Editor\""),
        "visible windows listed: {}",
        run.out
    );
    assert!(
        run.out.contains("[FAIL] llm") && run.out.contains("HTTP 401"),
        "{}",
        run.out
    );
    assert!(
        run.out.contains("Incorrect API key provided"),
        "error body shown: {}",
        run.out
    );
    assert!(run.out.contains("export VW_TEST_KEY="), "{}", run.out);
    assert!(run.out.contains("2 check(s) failed"), "{}", run.out);
}

#[test]
fn no_display_and_unreachable_endpoint_are_reported_and_skips_honoured() {
    let run = doctor(None, "http://127.0.0.1:9/v1", &["--skip-window"]);
    assert_eq!(run.code, 1, "{}", run.out);
    assert!(
        run.out.contains("[FAIL] display") && run.out.contains("DISPLAY is not set"),
        "{}",
        run.out
    );
    assert!(run.out.contains("[skip] game window"), "{}", run.out);
    assert!(
        run.out.contains("[FAIL] llm") && run.out.contains("start the LLM server"),
        "{}",
        run.out
    );
    let skipped = doctor(
        None,
        "http://127.0.0.1:9/v1",
        &["--skip-window", "--skip-llm"],
    );
    assert!(skipped.out.contains("[skip] llm"), "{}", skipped.out);
    assert!(skipped.out.contains("1 check(s) failed"), "{}", skipped.out);
}
