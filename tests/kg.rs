//! `vistawise kg` on the shipped graph, a broken graph, and real detector output.

mod support;

use support::binary;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = binary()
        .args(args)
        .env("VISTAWISE_ORT_LIB", support::ort_lib())
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn shipped_graph_checks_and_every_task_is_reachable_uncut() {
    let (code, out, err) = run(&["kg", "check"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kg/minecraft.toml: ok"), "{out}");
    assert!(
        out.contains("12 minecraft tasks reachable from Player"),
        "{out}"
    );
    assert!(
        !out.contains("was cut"),
        "default limits must not cut the Minecraft graph: {out}"
    );
}

#[test]
fn broken_graph_reports_every_problem_with_its_line() {
    let dir = tempfile::tempdir().expect("temp");
    let kg = dir.path().join("broken.toml");
    std::fs::write(
        &kg,
        "[[node]]\nname = \"Player\"\n[[edge]]\nfrom = \"Player\"\nrelation = \"smelts\"\nto = \"Iron\"\n",
    )
    .expect("write");
    let (code, _out, err) = run(&["kg", "check", "--kg", kg.to_str().expect("utf8")]);
    assert_ne!(code, 0);
    assert!(
        err.contains("broken.toml:5: unknown relation \"smelts\""),
        "{err}"
    );
    assert!(err.contains("broken.toml:6: edge names \"Iron\""), "{err}");
}

#[test]
fn pooling_uses_real_detections_and_prints_status_lines() {
    // Detections of a fixture frame by the fixture model, as `detect --json` writes them.
    let (code, json, err) = run(&[
        "detect",
        "tests/fixtures/detector/images/wide_16x9.png",
        "--model",
        "tests/fixtures/detector/tiny-raw.onnx",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let dir = tempfile::tempdir().expect("temp");
    let det = dir.path().join("frame.json");
    std::fs::write(&det, json).expect("write");
    let det = det.to_str().expect("utf8");
    // The frame shows a trunk, a log icon and diamond ore; the wooden-pickaxe task keeps the
    // seen trunk and log (on its paths) and drops diamond ore (not on them).
    let (code, out, err) = run(&[
        "kg",
        "pool",
        "--task",
        "wooden_pickaxe",
        "--detections",
        det,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Trunk outputs Log."), "{out}");
    assert!(out.contains("inventory status: Log: 1 slot at ("), "{out}");
    assert!(out.contains("environment status: Trunk at ("), "{out}");
    assert!(!out.contains("Diamond"), "{out}");
    let (code, dot, _) = run(&[
        "kg",
        "pool",
        "--task",
        "diamond",
        "--detections",
        det,
        "--dot",
    ]);
    assert_eq!(code, 0);
    assert!(dot.starts_with("digraph kg {"), "{dot}");
    assert!(
        dot.contains("\"Diamond Ore\" [color=\"#1f77b4\", penwidth=2, style=\"rounded,filled\""),
        "{dot}"
    );
}

#[test]
fn unknown_task_lists_the_known_ones() {
    let (code, _out, err) = run(&["kg", "pool", "--task", "netherite"]);
    assert_ne!(code, 0);
    assert!(err.contains("known: log, planks, stick"), "{err}");
}
