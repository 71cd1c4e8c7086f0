//! The binary's behaviour on configuration and set-up errors.

use crate::support;

use std::io::Write;

use crate::support::binary;

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

/// `--root` reads the project's files whatever the working directory: the same skill library,
/// the game profile's settings, and the config's data paths under the root.
#[test]
fn the_root_flag_reads_the_project_from_any_working_directory() {
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let repo = support::repo();
    let list = |cmd: &mut std::process::Command| {
        let (code, out, err) =
            run(cmd.args(["--game", "minecraft-web", "skills", "list", "--json"]));
        assert_eq!(code, 0, "{err}");
        out
    };
    let here = list(&mut binary());
    let there = list(
        binary()
            .current_dir(elsewhere.path())
            .arg("--root")
            .arg(&repo),
    );
    assert!(here.contains("mine_log"), "{here}");
    assert_eq!(here, there);
    // Without the root, another folder has no such profile, and the error names the file.
    let (code, _, err) = run(binary().current_dir(elsewhere.path()).args([
        "--game",
        "minecraft-web",
        "skills",
        "list",
    ]));
    assert_ne!(code, 0);
    assert!(err.contains("config/games/minecraft-web.toml"), "{err}");
    // The config's data paths are read under the root.
    let (code, out, err) = run(binary()
        .current_dir(elsewhere.path())
        .env("VISTAWISE_ROOT", &repo)
        .args(["--game", "minecraft-web", "config", "show"]));
    assert_eq!(code, 0, "{err}");
    let model = out
        .lines()
        .find_map(|l| l.strip_prefix("model = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("detector.model in config show");
    assert!(std::path::Path::new(model).starts_with(&repo), "{model}");
    assert!(std::path::Path::new(model).is_file(), "{model}");
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

/// `vistawise detect --json` over the fixture images with `model` (and `extra` arguments):
/// the exit code, each image's `input` [w, h] in file-name order, and stderr.
fn detect_inputs(model: &str, extra: &[&str]) -> (i32, Vec<[u64; 2]>, String) {
    let (code, out, err) = run(binary()
        .args([
            "detect",
            "tests/fixtures/detector/images",
            "--json",
            "--model",
            model,
        ])
        .args(extra)
        .env("VISTAWISE_ORT_LIB", support::ort_lib()));
    let mut inputs: Vec<(String, [u64; 2])> = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json line");
            let input = v["input"].as_array().expect("input");
            (
                v["image"].as_str().expect("image").to_string(),
                [input[0].as_u64().expect("w"), input[1].as_u64().expect("h")],
            )
        })
        .collect();
    inputs.sort();
    (code, inputs.into_iter().map(|(_, i)| i).collect(), err)
}

/// The confidences `vistawise detect --json` finds on one fixture image with `extra` flags.
fn detect_confidences(extra: &[&str]) -> Vec<f64> {
    let (code, out, err) = run(binary()
        .args([
            "detect",
            "tests/fixtures/detector/images/classic_4x3.png",
            "--json",
            "--model",
            "tests/fixtures/detector/tiny-raw.onnx",
        ])
        .args(extra)
        .env("VISTAWISE_ORT_LIB", support::ort_lib()));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one json line");
    v["detections"]
        .as_array()
        .expect("detections")
        .iter()
        .map(|d| d["conf"].as_f64().expect("conf"))
        .collect()
}

#[test]
fn detect_conf_and_iou_flags_reach_the_detector() {
    // --conf drops what is below it; --iou is the NMS overlap: a looser one keeps more of the
    // overlapping boxes this image has at low confidence, a stricter one fewer.
    let low = detect_confidences(&["--conf", "0.05"]);
    let high = detect_confidences(&["--conf", "0.9"]);
    assert!(low.iter().all(|&c| c >= 0.05), "{low:?}");
    assert!(high.iter().all(|&c| c >= 0.9), "{high:?}");
    assert!(
        !high.is_empty() && high.len() < low.len(),
        "{low:?} {high:?}"
    );
    let loose = detect_confidences(&["--conf", "0.05", "--iou", "0.9"]);
    let strict = detect_confidences(&["--conf", "0.05", "--iou", "0.1"]);
    assert!(loose.len() > low.len(), "{loose:?} {low:?}");
    assert!(strict.len() < low.len(), "{strict:?} {low:?}");
}

// The fixture images in file-name order: classic_4x3 (640x480), odd_500x333, portrait
// (360x640), wide_16x9 (640x360).

#[test]
fn detect_json_names_the_input_each_frame_got() {
    // A fixed model gets its own input for every frame; a dynamic-size one the smallest
    // stride-multiple rectangle for each frame's shape.
    for (model, want) in [
        ("tests/fixtures/detector/tiny-raw.onnx", [[320, 192]; 4]),
        (
            "tests/fixtures/detector/tiny-dyn.onnx",
            [[320, 256], [320, 224], [192, 320], [320, 192]],
        ),
    ] {
        let (code, got, err) = detect_inputs(model, &[]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(got, want, "{model}");
    }
}

#[test]
fn gui_input_px_shrinks_frames_whose_gui_is_drawn_larger_than_the_detector_learnt() {
    // The frames show no hotbar: the vanilla rule's scale. 640x480 is drawn at 2, so 0.5 input
    // px per GUI px caps the input at 640 * 0.5 / 2 = 160; 500x333 at 1: 250, rounded up to
    // 256; the portrait and the 640x360 frame at 1: 320, the model's own size.
    let (code, got, err) = detect_inputs(
        "tests/fixtures/detector/tiny-dyn.onnx",
        &["--set", "detector.gui_input_px=0.5"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(got, [[160, 128], [256, 192], [192, 320], [320, 192]]);
}

#[test]
fn detector_input_size_caps_a_dynamic_model_and_a_fixed_one_refuses_it() {
    let set = |size: &str| format!("detector.input_size={size}");
    // 640x480 -> 160x120 -> 160x128; 500x333 -> 160x107 -> 160x128; 360x640 -> 90x160 ->
    // 96x160; 640x360 -> 160x90 -> 160x96.
    let (code, got, err) = detect_inputs(
        "tests/fixtures/detector/tiny-dyn.onnx",
        &["--set", &set("160")],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(got, [[160, 128], [160, 128], [96, 160], [160, 96]]);

    let (code, _, err) = detect_inputs(
        "tests/fixtures/detector/tiny-raw.onnx",
        &["--set", &set("160")],
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("tiny-raw.onnx")
            && err.contains("needs a model exported with a dynamic input size"),
        "{err}"
    );
    let (code, _, err) = detect_inputs(
        "tests/fixtures/detector/tiny-dyn.onnx",
        &["--set", &set("100")],
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("detector.input_size") && err.contains("multiple of 32"),
        "{err}"
    );
}

#[test]
fn the_planner_says_what_a_target_needs_from_the_world_from_nothing() {
    // From an empty bag: a stone pickaxe is 3 logs (the table's 4 planks, the wooden pickaxe's
    // 3, 2 for the sticks of both pickaxes: 9 of 12) and 3 cobblestone.
    let (code, out, err) = run(binary().current_dir(support::repo()).args([
        "--game",
        "minecraft-web",
        "policy",
        "plan",
        "--task",
        "stone_pickaxe",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Stone Pickaxe needs from the world in all: Log x3, Cobblestone x3"),
        "{out}"
    );
}
