//! The binary's behaviour on configuration and set-up errors.

mod support;

use std::io::Write;

use support::binary;

fn run(cmd: &mut std::process::Command) -> (i32, String, String) {
    let out = cmd.output().expect("run vistawise");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn config_show_prints_effective_values_with_origins_and_masks_secrets() {
    let (code, out, err) = run(binary()
        .args(["config", "show", "--origins", "--set", "detector.iou=0.6"])
        .env("VISTAWISE_DETECTOR__CONFIDENCE", "0.4")
        .env(
            "VISTAWISE_LLM__BASE_URL",
            "https://bob:hunter2@llm.local/v1",
        )
        .env("OPENAI_API_KEY", "sk-very-secret-key"));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("confidence = 0.4"), "{out}");
    assert!(out.contains("iou = 0.6"), "{out}");
    assert!(
        out.contains("environment variable VISTAWISE_DETECTOR__CONFIDENCE"),
        "{out}"
    );
    assert!(
        out.contains("command-line flag --set detector.iou=0.6"),
        "{out}"
    );
    assert!(out.contains("set (hidden)"), "{out}");
    assert!(!out.contains("hunter2"), "{out}");
    assert!(!out.contains("sk-very-secret-key"), "{out}");
    // Every section of config/default.toml is shown.
    for section in [
        "[game]",
        "[detector]",
        "[onnxruntime]",
        "[llm]",
        "[memory]",
        "[pooling]",
        "[safety]",
        "[session]",
    ] {
        assert!(out.contains(section), "{section} missing:\n{out}");
    }
}

#[test]
fn broken_config_file_is_reported_with_file_line_and_key() {
    let mut f = tempfile::Builder::new()
        .suffix(".toml")
        .tempfile()
        .expect("temp");
    writeln!(f, "[detector]\nthreads = 2\nk_w = -3.0").expect("write");
    let (code, _out, err) = run(binary().args(["config", "show", "--config"]).arg(f.path()));
    assert_ne!(code, 0);
    let path = f.path().display().to_string();
    assert!(err.contains(&format!("{path}:3")), "{err}");
    assert!(err.contains("detector.k_w"), "{err}");
}

#[test]
fn unknown_env_key_names_the_variable() {
    let (code, _out, err) = run(binary()
        .args(["config", "show"])
        .env("VISTAWISE_DETECTOR__CONFIDENSE", "0.4"));
    assert_ne!(code, 0);
    assert!(err.contains("VISTAWISE_DETECTOR__CONFIDENSE"), "{err}");
}

#[test]
fn missing_onnx_runtime_says_how_to_install_it() {
    let (code, _out, err) = run(binary()
        .args(["detect", "tests/fixtures/detector/images/wide_16x9.png"])
        .env("VISTAWISE_ORT_LIB", "/nonexistent/libonnxruntime.so.1.31.1"));
    assert_ne!(code, 0);
    assert!(
        err.contains("/nonexistent/libonnxruntime.so.1.31.1"),
        "{err}"
    );
    assert!(
        err.contains("pip install --no-deps --target .ort onnxruntime==1.31.1"),
        "{err}"
    );
}

#[test]
fn missing_detector_file_is_named() {
    let (code, _out, err) = run(binary()
        .args([
            "detect",
            "tests/fixtures/detector/images/wide_16x9.png",
            "--model",
            "models/nope.onnx",
        ])
        .env("VISTAWISE_ORT_LIB", support::ort_lib()));
    assert_ne!(code, 0);
    assert!(err.contains("models/nope.onnx"), "{err}");
}
