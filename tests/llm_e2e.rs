//! Opt-in end-to-end test against a real model: llama.cpp's llama-server with SmolLM2-135M
//! (`bash scripts/llama-server.sh build` first, ~15 min on 2 cores). Run with
//! `LLM_E2E=1 cargo test --test tests llm_e2e -- --ignored --nocapture`. It is `#[ignore]`d so a normal
//! run reports it as ignored rather than passed.

use crate::support;

use std::process::Command;
use std::time::Instant;

#[test]
#[ignore = "needs LLM_E2E=1 and a built llama-server (scripts/llama-server.sh build)"]
fn every_structured_answer_of_a_real_model_is_a_valid_action() {
    assert_eq!(
        std::env::var("LLM_E2E").as_deref(),
        Ok("1"),
        "set LLM_E2E=1 to run this test"
    );
    let repo = support::repo();
    let port = "8097";
    let start = Command::new("bash")
        .args(["scripts/llama-server.sh", "start", "--port", port])
        .current_dir(&repo)
        .status()
        .expect("llama-server.sh");
    assert!(start.success(), "llama-server did not start");
    let frame = support::fixture("llm/frame-wide_16x9.json");
    let mut results = Vec::new();
    for (task, constrain) in [
        ("log", "grammar"),
        ("planks", "grammar"),
        ("wooden_pickaxe", "grammar"),
        ("log", "json_schema"),
        ("planks", "json_schema"),
        ("wooden_pickaxe", "json_schema"),
    ] {
        let started = Instant::now();
        let out = support::binary()
            .args(["policy", "ask", "--task", task, "--json"])
            .arg("--detections")
            .arg(&frame)
            .env(
                "VISTAWISE_LLM__BASE_URL",
                format!("http://127.0.0.1:{port}/v1"),
            )
            .env("VISTAWISE_LLM__MODEL", "smollm2-135m")
            .env("VISTAWISE_LLM__OUTPUT_MODE", "structured")
            .env("VISTAWISE_LLM__CONSTRAIN", constrain)
            .env("VISTAWISE_LLM__MAX_TOKENS", "96")
            .env("VISTAWISE_LLM__TIMEOUT_SECS", "120")
            .output()
            .expect("vistawise");
        let took = started.elapsed();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        eprintln!(
            "{task} / {constrain}: exit {:?} in {took:.1?}",
            out.status.code()
        );
        results.push((task, constrain, out.status.code(), stdout, took));
    }
    let _ = Command::new("bash")
        .args(["scripts/llama-server.sh", "stop"])
        .current_dir(&repo)
        .status();
    for (task, constrain, code, stdout, _) in &results {
        // Exit 0: a validated action; 3: no valid action after the re-asks (the model failed,
        // which the constraint must prevent). Anything else is a crash or a transport error.
        assert_eq!(*code, Some(0), "{task} / {constrain}: {stdout}");
        let turn: serde_json::Value = serde_json::from_str(stdout).expect("json");
        assert!(turn["action"]["call"]["skill"].is_string(), "{stdout}");
    }
}
