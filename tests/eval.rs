//! `vistawise eval` on real files: a dataset written from the fixture images' drawn ground truth.

use crate::support;

use std::path::Path;

use crate::support::binary;
use serde_json::Value;

/// Writes a YOLO dataset (`val/images`, `val/labels`, `data.yaml`) from the fixture images and
/// the boxes the generator drew on them.
fn dataset_from_fixture_truth(dir: &Path, names: &[String]) {
    let reference: Value = serde_json::from_str(
        &std::fs::read_to_string(support::fixture("detector/reference-raw.json")).expect("read"),
    )
    .expect("json");
    let images = dir.join("val/images");
    let labels = dir.join("val/labels");
    std::fs::create_dir_all(&images).expect("mkdir");
    std::fs::create_dir_all(&labels).expect("mkdir");
    for img in reference["images"].as_array().expect("images") {
        let file = img["file"].as_str().expect("file");
        let (w, h) = (
            img["width"].as_f64().expect("w"),
            img["height"].as_f64().expect("h"),
        );
        let name = Path::new(file).file_name().expect("name");
        std::fs::copy(
            support::fixture(&format!("detector/{file}")),
            images.join(name),
        )
        .expect("copy");
        let mut text = String::new();
        for b in img["truth"].as_array().expect("truth") {
            let xyxy: Vec<f64> = b["xyxy"]
                .as_array()
                .expect("xyxy")
                .iter()
                .map(|v| v.as_f64().expect("num"))
                .collect();
            text += &format!(
                "{} {:.6} {:.6} {:.6} {:.6}\n",
                b["class_id"],
                (xyxy[0] + xyxy[2]) / 2.0 / w,
                (xyxy[1] + xyxy[3]) / 2.0 / h,
                (xyxy[2] - xyxy[0]) / w,
                (xyxy[3] - xyxy[1]) / h
            );
        }
        std::fs::write(labels.join(name).with_extension("txt"), text).expect("label");
    }
    let mut yaml = "path: .\nval: val/images\nnames:\n".to_string();
    for (i, n) in names.iter().enumerate() {
        yaml += &format!("  {i}: {n}\n");
    }
    std::fs::write(dir.join("data.yaml"), yaml).expect("yaml");
}

fn class_names() -> Vec<String> {
    let meta = std::fs::read_to_string(support::fixture("detector/metadata.txt")).expect("meta");
    let line = meta
        .lines()
        .find(|l| l.starts_with("names = "))
        .expect("names");
    vistawise::perception::parse_names(&line["names = ".len()..]).expect("parse")
}

/// Runs `vistawise eval MODEL DATASET EXTRA...` with the test ONNX Runtime.
fn run_eval(model: &str, dataset: &Path, extra: &[&str]) -> std::process::Output {
    binary()
        .args(["eval", model])
        .arg(dataset)
        .args(extra)
        .env("VISTAWISE_ORT_LIB", support::ort_lib())
        .output()
        .expect("run eval")
}

fn eval_json(model: &str, dataset: &Path, extra: &[&str]) -> Value {
    let out = run_eval(
        model,
        dataset,
        &[&["--split", "val", "--json"], extra].concat(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json report")
}

/// Runs `eval` expecting it to fail; returns what it printed on stderr.
fn eval_failure(model: &str, dataset: &Path, extra: &[&str]) -> String {
    let out = run_eval(model, dataset, extra);
    assert!(!out.status.success(), "eval {extra:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn every_drawn_object_found_gives_ap50_one_per_class() {
    let dir = tempfile::tempdir().expect("temp");
    dataset_from_fixture_truth(dir.path(), &class_names());
    let report = eval_json("tests/fixtures/detector/tiny-raw.onnx", dir.path(), &[]);
    assert_eq!(report["images"], 4);
    let classes = report["classes"].as_array().expect("classes");
    let found: Vec<&str> = classes
        .iter()
        .map(|c| c["class"].as_str().expect("name"))
        .collect();
    assert_eq!(found, vec!["trunk", "log_icon", "diamond_ore"]);
    for c in classes {
        // The fixture model finds each drawn object (IoU 0.92-0.99 with the drawing) above any
        // false positive of its class, so precision is 1 at every recall level.
        assert!(
            (c["ap50"].as_f64().expect("ap50") - 1.0).abs() < 1e-9,
            "{c}"
        );
        assert_eq!(c["recall"].as_f64(), Some(1.0), "{c}");
        assert!(
            c["ap50_95"].as_f64().expect("ap") < 1.0,
            "boxes are not pixel-exact: {c}"
        );
    }
    assert_eq!(report["model_sha256"].as_str().map(str::len), Some(64));
    // Confusion: the diagonal holds every instance (no class mix-ups).
    let confusion = report["confusion"].as_array().expect("confusion");
    for (id, c) in [(0usize, &classes[0]), (1, &classes[1]), (16, &classes[2])] {
        assert_eq!(confusion[id][id], c["instances"], "class {id}");
    }
}

#[test]
fn a_dynamic_size_model_is_evaluated_too() {
    // The same weights exported with a dynamic input: each image gets its own rectangle
    // (320x192 for 16:9, 192x320 portrait, ...) and still every drawn object is found first.
    let dir = tempfile::tempdir().expect("temp");
    dataset_from_fixture_truth(dir.path(), &class_names());
    let report = eval_json("tests/fixtures/detector/tiny-dyn.onnx", dir.path(), &[]);
    assert_eq!(report["images"], 4);
    let classes = report["classes"].as_array().expect("classes");
    assert_eq!(classes.len(), 3);
    for c in classes {
        assert!(
            (c["ap50"].as_f64().expect("ap50") - 1.0).abs() < 1e-9,
            "{c}"
        );
    }
}

#[test]
fn only_keeps_the_images_whose_name_matches() {
    let dir = tempfile::tempdir().expect("temp");
    dataset_from_fixture_truth(dir.path(), &class_names());
    let model = "tests/fixtures/detector/tiny-raw.onnx";
    let report = eval_json(
        model,
        dir.path(),
        &["--only", "wide_*", "--only", "portrait.png"],
    );
    assert_eq!(report["images"], 2);
    assert_eq!(
        report["only"],
        serde_json::json!(["wide_*", "portrait.png"])
    );
    // wide_16x9 and portrait each hold one trunk, one diamond_ore and one log_icon.
    for c in report["classes"].as_array().expect("classes") {
        assert_eq!(c["instances"], 2, "{c}");
    }
    // Without --only the key is absent from the report.
    assert!(eval_json(model, dir.path(), &[]).get("only").is_none());

    let err = eval_failure(model, dir.path(), &["--only", "nothing_*"]);
    assert!(
        err.contains("no image of the 4") && err.contains("nothing_*"),
        "{err}"
    );
    let err = eval_failure(model, dir.path(), &["--only", "[wide"]);
    assert!(err.contains("--only \"[wide\" is not a glob"), "{err}");
}

#[test]
fn errors_name_a_dropped_label_as_background_and_an_invented_one_as_missed() {
    let dir = tempfile::tempdir().expect("temp");
    dataset_from_fixture_truth(dir.path(), &class_names());
    let model = "tests/fixtures/detector/tiny-raw.onnx";
    let errors = |name: &str| -> Value {
        let out = dir.path().join(name);
        eval_json(
            model,
            dir.path(),
            &["--errors", &out.to_string_lossy(), "--errors-sheet", "2"],
        );
        serde_json::from_str(&std::fs::read_to_string(out.join("errors.json")).expect("read"))
            .expect("errors.json")
    };
    let before = errors("before");
    let fps_before = before["false_positives"].as_array().expect("fps").len();
    assert_eq!(
        before["misses"],
        serde_json::json!([]),
        "every drawn object is found"
    );

    // wide_16x9 (640x360): drop its trunk label (drawn at x 188-225, y 26-142; the model still
    // finds it) and label a diamond_ore where nothing is drawn (x 10-50, y 300-340).
    let label = dir.path().join("val/labels/wide_16x9.txt");
    let text = std::fs::read_to_string(&label).expect("read");
    let mut lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("0 "), "the trunk is the first line");
    lines.remove(0);
    lines.push("16 0.046875 0.888889 0.0625 0.111111");
    std::fs::write(&label, lines.join("\n") + "\n").expect("write");

    let after = errors("after");
    let fps = after["false_positives"].as_array().expect("fps");
    assert_eq!(fps.len(), fps_before + 1, "{after}");
    let trunk: Vec<&Value> = fps
        .iter()
        .filter(|f| {
            f["class"] == "trunk"
                && f["image"]
                    .as_str()
                    .is_some_and(|i| i.ends_with("wide_16x9.png"))
        })
        .collect();
    assert_eq!(trunk.len(), 1, "{fps:?}");
    assert_eq!(trunk[0]["kind"], "background");
    let x1 = trunk[0]["xyxy"][0].as_f64().expect("x1");
    assert!(
        (x1 - 188.0).abs() < 8.0,
        "the box of the dropped label: {}",
        trunk[0]
    );
    let misses = after["misses"].as_array().expect("misses");
    assert_eq!(misses.len(), 1, "{misses:?}");
    assert_eq!(misses[0]["class"], "diamond_ore");
    assert_eq!(misses[0]["best_iou"], 0.0);
    assert_eq!(after["counts"]["diamond_ore"]["misses"], 1);
    // Ranks follow confidence, most confident first.
    let confs: Vec<f64> = fps
        .iter()
        .map(|f| f["conf"].as_f64().expect("conf"))
        .collect();
    assert!(confs.windows(2).all(|w| w[0] >= w[1]), "{confs:?}");

    // The contact sheets: at most 2 crops of 200 px in a row of 6 columns.
    let sheet = image::open(dir.path().join("after/false_positives.png")).expect("png");
    assert_eq!((sheet.width(), sheet.height()), (6 * 202 - 2, 200));
    let sheet = image::open(dir.path().join("after/misses.png")).expect("png");
    assert_eq!(sheet.height(), 200);

    // --errors-class keeps one class's records (the matching still sees every class).
    let out = dir.path().join("diamond");
    eval_json(
        model,
        dir.path(),
        &[
            "--errors",
            &out.to_string_lossy(),
            "--errors-class",
            "diamond_ore",
        ],
    );
    let only: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("errors.json")).expect("read"))
            .expect("errors.json");
    assert_eq!(only["classes"], serde_json::json!(["diamond_ore"]));
    assert!(
        only["false_positives"]
            .as_array()
            .expect("fps")
            .iter()
            .all(|f| f["class"] == "diamond_ore"),
        "{only}"
    );
    assert_eq!(only["misses"].as_array().map(Vec::len), Some(1));
    let x = dir.path().join("x");
    let err = eval_failure(
        model,
        dir.path(),
        &["--errors", &x.to_string_lossy(), "--errors-class", "tree"],
    );
    assert!(
        err.contains("--errors-class \"tree\" is not a class of the model")
            && err.contains("trunk"),
        "{err}"
    );

    // A file where the folder should be: a clear error naming it.
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "x").expect("write");
    let err = eval_failure(model, dir.path(), &["--errors", &blocker.to_string_lossy()]);
    assert!(
        err.contains("cannot create the errors folder") && err.contains("a-file"),
        "{err}"
    );
}

#[test]
fn bootstrap_intervals_hold_the_point_values_and_follow_the_seed() {
    let dir = tempfile::tempdir().expect("temp");
    dataset_from_fixture_truth(dir.path(), &class_names());
    let model = "tests/fixtures/detector/tiny-raw.onnx";
    // Drop wide_16x9's trunk label: the model's confident trunk there becomes a false positive,
    // so trunk AP50 is under 1 on the whole set and 1 on a resample without that image.
    let label = dir.path().join("val/labels/wide_16x9.txt");
    let text = std::fs::read_to_string(&label).expect("read");
    assert!(text.starts_with("0 "), "the trunk is the first line");
    let rest: Vec<&str> = text.lines().skip(1).collect();
    std::fs::write(&label, rest.join("\n") + "\n").expect("write");

    let args = ["--bootstrap", "300", "--bootstrap-seed", "5"];
    let report = eval_json(model, dir.path(), &args);
    let boot = &report["bootstrap"];
    assert_eq!(boot["resamples"], 300);
    assert_eq!(boot["seed"], 5);
    assert_eq!(boot["level"], 0.95);
    let classes = report["classes"].as_array().expect("classes");
    let intervals = boot["classes"].as_array().expect("interval classes");
    assert_eq!(intervals.len(), classes.len());
    let num = |v: &Value| v.as_f64().expect("number");
    for (c, i) in classes.iter().zip(intervals) {
        assert_eq!(c["class_id"], i["class_id"]);
        for key in ["ap50", "ap50_95"] {
            let (low, high) = (num(&i[key]["low"]), num(&i[key]["high"]));
            assert!(
                low <= num(&c[key]) + 1e-12 && num(&c[key]) <= high + 1e-12,
                "{c} {i}"
            );
        }
    }
    let trunk = (&classes[0], &intervals[0]);
    assert_eq!(trunk.0["class"], "trunk");
    assert!(num(&trunk.0["ap50"]) < 1.0, "{}", trunk.0);
    assert_eq!(num(&trunk.1["ap50"]["high"]), 1.0, "{}", trunk.1);
    assert!(
        num(&trunk.1["ap50"]["low"]) < num(&trunk.0["ap50"]),
        "{}",
        trunk.1
    );
    // The same seed, the same intervals; another seed draws other resamples.
    assert_eq!(eval_json(model, dir.path(), &args)["bootstrap"], *boot);
    let other = eval_json(
        model,
        dir.path(),
        &["--bootstrap", "300", "--bootstrap-seed", "6"],
    );
    assert_ne!(other["bootstrap"], *boot);
    // Without the flag the report has no bootstrap key.
    assert!(eval_json(model, dir.path(), &[]).get("bootstrap").is_none());

    // The table shows each interval beside its AP.
    let out = run_eval(model, dir.path(), &args);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && table.contains("AP50 95% CI"),
        "{table}"
    );
    let trunk_row = table
        .lines()
        .find(|l| l.starts_with("trunk "))
        .expect("trunk row");
    assert!(trunk_row.contains("-1.000"), "{trunk_row}");
    assert!(table.contains("percentile bootstrap over the images, 300 resamples, seed 5"));

    let err = eval_failure(model, dir.path(), &["--bootstrap", "1"]);
    assert!(err.contains("--bootstrap"), "{err}");
    let err = eval_failure(model, dir.path(), &["--bootstrap-seed", "3"]);
    assert!(err.contains("--bootstrap"), "{err}");
}

#[test]
fn compare_gives_paired_differences_zero_for_the_same_model() {
    let dir = tempfile::tempdir().expect("temp");
    dataset_from_fixture_truth(dir.path(), &class_names());
    let model = "tests/fixtures/detector/tiny-raw.onnx";
    let boot = ["--bootstrap", "200"];
    let num = |v: &Value| v.as_f64().expect("number");

    // The same file twice: every difference and every interval is exactly 0.
    let same = eval_json(
        model,
        dir.path(),
        &[&boot[..], &["--compare", model]].concat(),
    );
    let compare = &same["compare"];
    assert_eq!(compare["model_sha256"], same["model_sha256"]);
    assert_eq!(compare["report"]["classes"], same["classes"]);
    for i in compare["difference"]["classes"]
        .as_array()
        .expect("classes")
    {
        assert_eq!(
            (num(&i["ap50"]["low"]), num(&i["ap50"]["high"])),
            (0.0, 0.0),
            "{i}"
        );
    }

    // The dynamic-size export of the same weights sees other input sizes: its boxes differ a
    // little, so AP50-95 may differ; each interval holds the whole set's difference.
    let other = "tests/fixtures/detector/tiny-dyn.onnx";
    let r = eval_json(
        model,
        dir.path(),
        &[&boot[..], &["--compare", other]].concat(),
    );
    let theirs = r["compare"]["report"]["classes"]
        .as_array()
        .expect("classes");
    let diffs = r["compare"]["difference"]["classes"]
        .as_array()
        .expect("classes");
    let mine = r["classes"].as_array().expect("classes");
    assert_eq!((mine.len(), theirs.len(), diffs.len()), (3, 3, 3));
    let mut moved = false;
    for ((m, t), d) in mine.iter().zip(theirs).zip(diffs) {
        for key in ["ap50", "ap50_95"] {
            let diff = num(&t[key]) - num(&m[key]);
            let (low, high) = (num(&d[key]["low"]), num(&d[key]["high"]));
            assert!(
                low <= diff + 1e-12 && diff <= high + 1e-12,
                "{key}: {diff} {d}"
            );
            moved |= diff != 0.0;
        }
    }
    assert!(
        moved,
        "the two exports give the same APs: the test compares nothing"
    );

    let out = run_eval(
        model,
        dir.path(),
        &["--bootstrap", "200", "--compare", other],
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        table.contains("tiny-dyn.onnx minus tests/fixtures/detector/tiny-raw.onnx: AP differences"),
        "{table}"
    );

    let err = eval_failure(model, dir.path(), &["--compare", other]);
    assert!(err.contains("--bootstrap"), "{err}");
}

#[test]
fn broken_label_line_is_named_with_file_and_line() {
    let dir = tempfile::tempdir().expect("temp");
    dataset_from_fixture_truth(dir.path(), &class_names());
    let label = dir.path().join("val/labels/portrait.txt");
    let text = std::fs::read_to_string(&label).expect("read") + "0 0.5 0.5\n";
    let lines = text.lines().count();
    std::fs::write(&label, text).expect("write");
    let err = eval_failure(
        "tests/fixtures/detector/tiny-raw.onnx",
        dir.path(),
        &["--split", "val"],
    );
    assert!(err.contains(&format!("portrait.txt:{lines}")), "{err}");
}

#[test]
fn dataset_classes_must_match_the_model() {
    let dir = tempfile::tempdir().expect("temp");
    let mut names = class_names();
    names.swap(0, 1);
    dataset_from_fixture_truth(dir.path(), &names);
    let err = eval_failure("tests/fixtures/detector/tiny-raw.onnx", dir.path(), &[]);
    assert!(err.contains("do not match the model"), "{err}");
}

#[test]
fn agrees_with_ultralytics_val_within_0_01() {
    // tests/fixtures/detector/evalset/ultralytics-val-raw.json was written by Ultralytics' own
    // `val` (tools/detector/val_reference.py) on the same ONNX and images.
    let reference: Value = serde_json::from_str(
        &std::fs::read_to_string(support::fixture(
            "detector/evalset/ultralytics-val-raw.json",
        ))
        .expect("read"),
    )
    .expect("json");
    let report = eval_json(
        "tests/fixtures/detector/tiny-raw.onnx",
        &support::fixture("detector/evalset"),
        &["--ap-method", "ultralytics"],
    );
    let ours = report["classes"].as_array().expect("classes");
    let theirs: Vec<&Value> = reference["per_class"]
        .as_array()
        .expect("per_class")
        .iter()
        .filter(|c| c["instances"].as_u64() > Some(0))
        .collect();
    assert_eq!(ours.len(), theirs.len());
    assert!(ours.len() >= 3);
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o["class_id"], t["id"]);
        assert_eq!(o["instances"], t["instances"]);
        for (ok, tk) in [("ap50", "ap50"), ("ap50_95", "ap50_95")] {
            let (a, b) = (
                o[ok].as_f64().expect("ours"),
                t[tk].as_f64().expect("theirs"),
            );
            assert!(
                (a - b).abs() < 0.01,
                "{} {ok}: ours {a:.4}, Ultralytics {b:.4}",
                o["class"]
            );
        }
        // The set is hard on purpose: AP is mid-range, where differences would show.
        assert!(o["ap50"].as_f64().expect("ap") < 0.9, "{o}");
    }
    for (ok, tk) in [("map50", "mAP50"), ("map50_95", "mAP50-95")] {
        let (a, b) = (
            report[ok].as_f64().expect("ours"),
            reference["totals"][tk].as_f64().expect("theirs"),
        );
        assert!(
            (a - b).abs() < 0.01,
            "{ok}: ours {a:.4}, Ultralytics {b:.4}"
        );
    }
}
