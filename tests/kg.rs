//! `vistawise kg` on the shipped graph, a broken graph, and real detector output.

use crate::support;

use crate::support::binary;

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
        out.contains("13 minecraft tasks reachable from Player"),
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

#[test]
fn retrieval_evaluation_reproduces_the_papers_ordering_on_our_cases() {
    let minilm = support::minilm_dir();
    let (code, out, err) = run(&[
        "kg",
        "eval",
        "kg/eval/minecraft-cases.toml",
        "--json",
        "--similarity-threshold",
        "0.4",
        "--embedding-model",
        minilm.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(v["cases"].as_u64().expect("cases") >= 30);
    let rate = |method: &str, key: &str| {
        v["rates"]
            .as_array()
            .expect("rates")
            .iter()
            .find(|r| r["method"] == method)
            .and_then(|r| r[key].as_f64())
            .unwrap_or_else(|| panic!("{method} {key} missing: {out}"))
    };
    // Figure 4: PSP->EMP retrieves less redundant information than PSP or EMP alone...
    assert!(rate("PSP->EMP", "fpr") < rate("PSP", "fpr"), "{out}");
    assert!(rate("PSP->EMP", "fpr") < rate("EMP", "fpr"), "{out}");
    // ...and misses far less than EMP->PSP, which breaks the paths before searching them.
    assert!(rate("PSP->EMP", "fnr") < rate("EMP->PSP", "fnr"), "{out}");
    // PSP alone keeps every path: nothing labelled is missed.
    assert_eq!(rate("PSP", "fnr"), 0.0, "{out}");
    // The similarity baseline (MiniLM over node names) does worse on both counts: the graph's
    // names carry too little text for it, which is why the paper pools instead.
    assert!(
        rate("similarity@0.4", "fpr") > rate("PSP->EMP", "fpr"),
        "{out}"
    );
    assert!(
        rate("similarity@0.4", "fnr") > rate("PSP->EMP", "fnr"),
        "{out}"
    );
}

#[test]
fn a_case_naming_an_edge_that_does_not_exist_is_rejected_with_its_line() {
    let dir = tempfile::tempdir().expect("temp");
    let cases = dir.path().join("cases.toml");
    std::fs::write(
        &cases,
        "[[case]]\nid = \"x\"\ntask = \"planks\"\nnodes = [\"Player\", \"Planks\"]\n\
         edges = [[\"Player\", \"can mine\", \"Planks\"]]\n",
    )
    .expect("write");
    let (code, _out, err) = run(&[
        "kg",
        "eval",
        cases.to_str().expect("utf8"),
        "--no-similarity",
    ]);
    assert_ne!(code, 0);
    assert!(
        err.contains(
            "cases.toml:1: case x: edge \"Player\" can mine \"Planks\" is not in the graph"
        ),
        "{err}"
    );
}
