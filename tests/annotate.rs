//! `vistawise annotate SOURCE` and `vistawise dataset ...` on real frames (the shared
//! minecraft-real dataset, val split), a video made here with ffmpeg, and the fixture detector.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{binary, fixture};
use serde_json::Value;

const MODEL: &str = "tests/fixtures/detector/tiny-raw.onnx";

/// The shared real frames (`../shared` beside the repository, as on the development machines).
fn real_frames() -> PathBuf {
    let dir = support::repo().join("../shared/datasets/minecraft-real/val/images");
    assert!(
        dir.is_dir(),
        "{} is missing: these tests need the shared minecraft-real dataset checked out beside the repository (../shared/datasets/minecraft-real)",
        dir.display()
    );
    dir
}

fn real(name: &str) -> PathBuf {
    let p = real_frames().join(name);
    assert!(
        p.is_file(),
        "{} is missing from the shared dataset",
        p.display()
    );
    p
}

/// Runs the binary; returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = binary()
        .args(args)
        .env("VISTAWISE_ORT_LIB", support::ort_lib())
        .output()
        .expect("run vistawise");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn run_json(args: &[&str]) -> Value {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 0, "vistawise {args:?} failed:\n{stdout}\n{stderr}");
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("JSON summary")
}

fn annotate(source: &Path, dataset: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "annotate",
        source.to_str().expect("utf8"),
        "-o",
        dataset.to_str().expect("utf8"),
        "--model",
        MODEL,
        "--json",
    ];
    args.extend_from_slice(extra);
    run_json(&args)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn parse_label(text: &str) -> Vec<(usize, [f64; 4])> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 5, "YOLO line `{l}`");
            (
                f[0].parse().expect("class"),
                [1, 2, 3, 4].map(|i| f[i].parse::<f64>().expect("number")),
            )
        })
        .collect()
}

fn class_names() -> Vec<String> {
    let meta = read(&fixture("detector/metadata.txt"));
    let line = meta
        .lines()
        .find(|l| l.starts_with("names = "))
        .expect("names");
    vistawise::perception::parse_names(&line["names = ".len()..]).expect("parse")
}

/// Source folder: real frames, a byte copy of one (a duplicate), a re-encoded copy of another (a
/// near-duplicate), and the fixture images (the small detector finds objects there).
fn make_source(dir: &Path) -> PathBuf {
    let src = dir.join("clip");
    std::fs::create_dir_all(&src).expect("mkdir");
    for name in [
        "diamond_ore_014.jpg",
        "diamond_ore_051.jpg",
        "brad_1005_df6c9031b838.jpg",
    ] {
        std::fs::copy(real(name), src.join(name)).expect("copy");
    }
    std::fs::copy(real("diamond_ore_014.jpg"), src.join("x_dup_copy.jpg")).expect("copy");
    image::open(real("diamond_ore_051.jpg"))
        .expect("open")
        .to_rgb8()
        .save_with_format(src.join("x_dup_reencoded.png"), image::ImageFormat::Png)
        .expect("save");
    for name in ["wide_16x9.png", "classic_4x3.png"] {
        std::fs::copy(fixture(&format!("detector/images/{name}")), src.join(name)).expect("copy");
    }
    src
}

/// Every label equals the detector's boxes (from `vistawise detect --json` on the same images),
/// clipped and normalised, and the JSON beside the image holds the same boxes.
fn assert_labels_are_the_detectors(dataset: &Path, names: &[String]) {
    let (code, stdout, stderr) = run(&[
        "detect",
        dataset.join("images").to_str().expect("utf8"),
        "--json",
        "--model",
        MODEL,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let mut total = 0;
    for line in stdout.lines() {
        let report: Value = serde_json::from_str(line).expect("detect json");
        let image = PathBuf::from(report["image"].as_str().expect("image"));
        let (w, h) = (
            report["width"].as_f64().expect("w"),
            report["height"].as_f64().expect("h"),
        );
        let stem = image
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let label = parse_label(&read(&dataset.join("labels").join(format!("{stem}.txt"))));
        let dets = report["detections"].as_array().expect("detections");
        assert_eq!(
            label.len(),
            dets.len(),
            "{stem}: boxes differ from the detector's"
        );
        total += dets.len();
        let json: Value =
            serde_json::from_str(&read(&dataset.join("images").join(format!("{stem}.json"))))
                .expect("annotation json");
        assert_eq!(json["imageWidth"].as_f64(), Some(w));
        assert_eq!(json["imageHeight"].as_f64(), Some(h));
        assert_eq!(
            json["imagePath"].as_str(),
            image.file_name().and_then(|n| n.to_str())
        );
        let shapes = json["shapes"].as_array().expect("shapes");
        assert_eq!(shapes.len(), dets.len());
        for ((d, (class, yolo)), shape) in dets.iter().zip(&label).zip(shapes) {
            let xyxy: Vec<f64> = d["xyxy"]
                .as_array()
                .expect("xyxy")
                .iter()
                .map(|v| v.as_f64().expect("num").clamp(0.0, f64::MAX))
                .collect();
            let (x1, y1, x2, y2) = (xyxy[0], xyxy[1], xyxy[2].min(w), xyxy[3].min(h));
            let want = [
                (x1 + x2) / 2.0 / w,
                (y1 + y2) / 2.0 / h,
                (x2 - x1) / w,
                (y2 - y1) / h,
            ];
            assert_eq!(*class as u64, d["class_id"].as_u64().expect("class"));
            for k in 0..4 {
                assert!(
                    (yolo[k] - want[k]).abs() < 1e-4,
                    "{stem}: label {yolo:?} vs detector {want:?}"
                );
            }
            assert_eq!(shape["label"].as_str(), Some(names[*class].as_str()));
            assert_eq!(shape["shape_type"], "rectangle");
            let pts = shape["points"].as_array().expect("points");
            assert_eq!(pts.len(), 4);
            let p0 = (
                pts[0][0].as_f64().expect("x"),
                pts[0][1].as_f64().expect("y"),
            );
            let p2 = (
                pts[2][0].as_f64().expect("x"),
                pts[2][1].as_f64().expect("y"),
            );
            assert!(
                (p0.0 - x1).abs() <= 0.006 && (p0.1 - y1).abs() <= 0.006,
                "{stem}"
            );
            assert!(
                (p2.0 - x2).abs() <= 0.006 && (p2.1 - y2).abs() <= 0.006,
                "{stem}"
            );
            let score = shape["score"].as_f64().expect("score");
            assert!((score - d["conf"].as_f64().expect("conf")).abs() < 1e-3);
        }
    }
    assert!(
        total > 0,
        "the fixture detector found nothing: the test would prove little"
    );
}

fn file_snapshot(dataset: &Path) -> BTreeMap<PathBuf, (String, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    for sub in ["images", "labels"] {
        for e in std::fs::read_dir(dataset.join(sub)).expect("ls") {
            let p = e.expect("entry").path();
            let meta = std::fs::metadata(&p).expect("meta");
            out.insert(
                p.clone(),
                (
                    format!("{:?}", std::fs::read(&p).expect("read")),
                    meta.modified().expect("mtime"),
                ),
            );
        }
    }
    out
}

#[test]
fn annotate_folder_prelabels_skips_duplicates_and_resumes() {
    let dir = tempfile::tempdir().expect("temp");
    let src = make_source(dir.path());
    let ds = dir.path().join("ds");
    let s = annotate(&src, &ds, &[]);
    assert_eq!(s["source_kind"], "images");
    assert_eq!(s["frames"], 7);
    assert_eq!(s["written"], 5, "{s}");
    assert_eq!(s["duplicates"], 2, "{s}");
    assert!(ds.join("images/clip_diamond_ore_014.jpg").is_file());
    assert!(!ds.join("images/clip_x_dup_copy.jpg").exists());
    assert!(!ds.join("images/clip_x_dup_reencoded.png").exists());
    // The source image is copied as it is, not re-encoded.
    assert_eq!(
        std::fs::read(ds.join("images/clip_diamond_ore_014.jpg")).expect("read"),
        std::fs::read(real("diamond_ore_014.jpg")).expect("read")
    );
    let names = class_names();
    let yaml = vistawise::dataset::yolo::read_data_yaml(&ds.join("data.yaml")).expect("yaml");
    assert_eq!(yaml.names, names);
    assert_labels_are_the_detectors(&ds, &names);

    // A second run has nothing to do and touches nothing.
    let before = file_snapshot(&ds);
    let s = annotate(&src, &ds, &[]);
    assert_eq!(
        (s["written"].as_u64(), s["duplicates"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(s["already_done"], 7);
    assert_eq!(file_snapshot(&ds), before);

    // The text summary says what happened.
    let (code, stdout, _) = run(&[
        "annotate",
        src.to_str().expect("utf8"),
        "-o",
        ds.to_str().expect("utf8"),
        "--model",
        MODEL,
    ]);
    assert_eq!(code, 0);
    assert!(stdout.contains("7 already done"), "{stdout}");
}

#[test]
fn hand_corrected_labels_survive_relabelling_and_import_round_trips() {
    let dir = tempfile::tempdir().expect("temp");
    let src = make_source(dir.path());
    let ds = dir.path().join("ds");
    annotate(&src, &ds, &[]);
    let labels_before: BTreeMap<String, String> = std::fs::read_dir(ds.join("labels"))
        .expect("ls")
        .map(|e| {
            let p = e.expect("entry").path();
            (
                p.file_name().expect("name").to_string_lossy().into_owned(),
                read(&p),
            )
        })
        .collect();

    // Import of untouched JSON reproduces the labels byte for byte.
    let s = run_json(&["dataset", "import", ds.to_str().expect("utf8"), "--json"]);
    assert_eq!(s["files"], 5);
    assert_eq!(s["changed"], 0, "{s}");

    // A person corrects one frame in X-AnyLabeling: a LabelMe-style 2-point box, another class.
    let json_path = ds.join("images/clip_diamond_ore_014.json");
    let mut doc: Value = serde_json::from_str(&read(&json_path)).expect("json");
    doc["shapes"] = serde_json::json!([{
        "label": "diamond_ore", "points": [[100.0, 50.0], [300.0, 250.0]],
        "shape_type": "rectangle", "group_id": null, "flags": {}
    }]);
    std::fs::write(
        &json_path,
        serde_json::to_string_pretty(&doc).expect("json"),
    )
    .expect("write");
    let s = run_json(&["dataset", "import", ds.to_str().expect("utf8"), "--json"]);
    assert_eq!(s["changed"], 1);
    let corrected = read(&ds.join("labels/clip_diamond_ore_014.txt"));
    assert_eq!(corrected, "16 0.208333 0.277778 0.208333 0.370370\n");

    // Re-labelling (e.g. with a new detector) keeps the corrected frame, redoes the rest.
    let s = annotate(&src, &ds, &["--relabel"]);
    assert_eq!(s["relabelled"], 4, "{s}");
    assert_eq!(
        s["corrected_kept"],
        serde_json::json!(["clip_diamond_ore_014"])
    );
    assert_eq!(read(&ds.join("labels/clip_diamond_ore_014.txt")), corrected);
    let kept: Value = serde_json::from_str(&read(&json_path)).expect("json");
    assert_eq!(kept["shapes"].as_array().map(Vec::len), Some(1));
    assert_eq!(kept["shapes"][0]["label"], "diamond_ore");

    // Unless told to overwrite it.
    let s = annotate(&src, &ds, &["--overwrite-corrected"]);
    assert_eq!(s["relabelled"], 5);
    assert_eq!(
        read(&ds.join("labels/clip_diamond_ore_014.txt")),
        labels_before["clip_diamond_ore_014.txt"]
    );

    // Import errors name the file and the field, and write nothing.
    doc["shapes"] = serde_json::json!([{"label": "creeper", "points": [[1, 1], [5, 5]], "shape_type": "rectangle"}]);
    std::fs::write(&json_path, serde_json::to_string(&doc).expect("json")).expect("write");
    let (code, _, stderr) = run(&["dataset", "import", ds.to_str().expect("utf8")]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("clip_diamond_ore_014.json")
            && stderr.contains("shapes[0].label")
            && stderr.contains("creeper"),
        "{stderr}"
    );
}

/// A video of three real frames, each shown for 2 s at 10 fps, made with ffmpeg.
fn make_video(dir: &Path) -> PathBuf {
    let frames = dir.join("vframes");
    std::fs::create_dir_all(&frames).expect("mkdir");
    for (i, name) in [
        "diamond_ore_022.jpg",
        "diamond_ore_068.jpg",
        "diamond_ore_100.jpg",
    ]
    .iter()
    .enumerate()
    {
        std::fs::copy(real(name), frames.join(format!("{i:02}.jpg"))).expect("copy");
    }
    let video = dir.join("my clip.mp4");
    let out = Command::new("ffmpeg")
        .args([
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-framerate",
            "0.5",
            "-i",
        ])
        .arg(frames.join("%02d.jpg"))
        .args([
            "-r", "10", "-c:v", "mpeg4", "-q:v", "3", "-pix_fmt", "yuv420p",
        ])
        .arg(&video)
        .output()
        .expect("ffmpeg is not installed: run scripts/setup.sh --with-x (apt-get install ffmpeg)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    video
}

#[test]
fn video_frames_are_sampled_deduplicated_and_grouped_by_scene() {
    let dir = tempfile::tempdir().expect("temp");
    let video = make_video(dir.path());
    let ds = dir.path().join("ds");
    let s = annotate(&video, &ds, &["--every", "0.5"]);
    assert_eq!(s["source_kind"], "video");
    // 6 s sampled every 0.5 s: 12 frames, 3 distinct pictures.
    assert!(s["frames"].as_u64().expect("frames") >= 10, "{s}");
    assert_eq!(s["written"], 3, "{s}");
    assert_eq!(
        s["duplicates"].as_u64(),
        Some(s["frames"].as_u64().expect("n") - 3)
    );
    assert!(ds.join("images/my_clip_000001.jpg").is_file());
    assert!(ds.join("labels/my_clip_000001.txt").is_file());
    assert!(
        !ds.join(".annotate-cache").exists(),
        "extracted frames are removed after the run"
    );
    // Three scenes -> three groups in the manifest.
    let groups: BTreeSet<String> = read(&ds.join("annotate.jsonl"))
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == "frame")
        .map(|v| v["group"].as_str().expect("group").to_string())
        .collect();
    assert_eq!(groups.len(), 3, "{groups:?}");
    assert_labels_are_the_detectors(&ds, &class_names());
    // Resume: nothing new.
    let s = annotate(&video, &ds, &["--every", "0.5"]);
    assert_eq!(s["written"], 0);
    assert_eq!(s["already_done"], s["frames"]);

    // Scene-change sampling alone takes one frame per picture.
    let ds2 = dir.path().join("ds2");
    let s = annotate(&video, &ds2, &["--every", "0", "--scene", "0.1"]);
    assert_eq!(s["frames"], 3, "{s}");
    assert_eq!(s["written"], 3);
}

#[test]
fn session_folders_are_a_source() {
    let dir = tempfile::tempdir().expect("temp");
    let session = dir.path().join("20261123-101500-log");
    std::fs::create_dir_all(session.join("frames")).expect("mkdir");
    for (i, name) in ["diamond_ore_107.jpg", "diamond_ore_116.jpg"]
        .iter()
        .enumerate()
    {
        std::fs::copy(real(name), session.join(format!("frames/{:06}.jpg", i + 1))).expect("copy");
    }
    std::fs::write(
        session.join("session.jsonl"),
        "{\"kind\":\"end\",\"reason\":\"test\",\"steps\":2,\"cost_usd\":0}\n",
    )
    .expect("write");
    let ds = dir.path().join("ds");
    let s = annotate(&session, &ds, &[]);
    assert_eq!(s["source_kind"], "session");
    assert_eq!(s["written"], 2);
    assert!(ds.join("labels/20261123-101500-log_000001.txt").is_file());
    assert!(ds.join("images/20261123-101500-log_000002.json").is_file());
}

#[test]
fn annotate_takes_exactly_one_of_source_and_auto() {
    let (code, _, stderr) = run(&["annotate", "-o", "/tmp/never-written"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("needs SOURCE"), "{stderr}");
    let (code, _, stderr) = run(&[
        "annotate",
        "frames/",
        "--auto",
        "minetest",
        "-o",
        "/tmp/never-written",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
    let (code, _, stderr) = run(&[
        "annotate",
        "/nonexistent/frames",
        "-o",
        "/tmp/never-written",
        "--model",
        MODEL,
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("/nonexistent/frames"), "{stderr}");
    assert!(!Path::new("/tmp/never-written/annotate.jsonl").exists());
}

/// A flat dataset written by hand: `names`, and per image (name, size, label lines).
fn hand_dataset(root: &Path, names: &[&str], images: &[(&str, (u32, u32), &str)]) {
    std::fs::create_dir_all(root.join("images")).expect("mkdir");
    std::fs::create_dir_all(root.join("labels")).expect("mkdir");
    let mut yaml = "path: .\ntrain: images\nval: images\nnames:\n".to_string();
    for (i, n) in names.iter().enumerate() {
        yaml += &format!("  {i}: {n}\n");
    }
    std::fs::write(root.join("data.yaml"), yaml).expect("yaml");
    for (name, (w, h), label) in images {
        image::RgbImage::from_pixel(*w, *h, image::Rgb([90, 120, 60]))
            .save(root.join(format!("images/{name}.png")))
            .expect("save");
        std::fs::write(root.join(format!("labels/{name}.txt")), label).expect("label");
    }
}

fn split_csv(out: &Path) -> BTreeMap<String, (String, String)> {
    read(&out.join("split.csv"))
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), (f[1].to_string(), f[2].to_string()))
        })
        .collect()
}

#[test]
fn split_is_deterministic_by_seed_and_keeps_groups_whole() {
    let dir = tempfile::tempdir().expect("temp");
    // 10 sources of 4 frames each (names `srcN_00000K`, as annotate writes them).
    let images: Vec<(String, (u32, u32), &str)> = (0..10)
        .flat_map(|s| {
            (1..=4).map(move |k| (format!("src{s}_{k:06}"), (32, 24), "0 0.5 0.5 0.2 0.2\n"))
        })
        .collect();
    let refs: Vec<(&str, (u32, u32), &str)> = images
        .iter()
        .map(|(n, s, l)| (n.as_str(), *s, *l))
        .collect();
    let ds = dir.path().join("ds");
    hand_dataset(&ds, &["trunk"], &refs);
    let split = |out: &str, seed: &str| {
        let out = dir.path().join(out);
        let s = run_json(&[
            "dataset",
            "split",
            ds.to_str().expect("utf8"),
            "-o",
            out.to_str().expect("utf8"),
            "--seed",
            seed,
            "--group-by",
            "source",
            "--json",
        ]);
        (s, split_csv(&out), out)
    };
    let (s1, a, out1) = split("a", "1");
    let (_, b, _) = split("b", "1");
    let (_, c, _) = split("c", "2");
    assert_eq!(a, b, "same seed, same split");
    assert_ne!(a, c, "another seed, another split");
    assert_eq!(
        (s1["train"].as_u64(), s1["val"].as_u64()),
        (Some(36), Some(4)),
        "{s1}"
    );
    assert_eq!(s1["groups"], 10);
    let mut split_of_group: BTreeMap<&str, &str> = BTreeMap::new();
    for (split, group) in a.values() {
        let prev = split_of_group.insert(group, split);
        assert!(
            prev.is_none_or(|p| p == split),
            "group {group} straddles splits"
        );
    }
    // The output is a YOLO dataset `vistawise eval` and Ultralytics read.
    let yaml = vistawise::dataset::yolo::read_data_yaml(&out1.join("data.yaml")).expect("yaml");
    assert_eq!(yaml.names, vec!["trunk"]);
    let val = vistawise::dataset::yolo::open_split(&out1, "val").expect("val");
    assert_eq!(val.samples.len(), 4);
    assert!(val.samples.iter().all(|s| s.label.is_file()));
    // Output folders are never overwritten.
    let (code, _, stderr) = run(&[
        "dataset",
        "split",
        ds.to_str().expect("utf8"),
        "-o",
        out1.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("not empty"), "{stderr}");
}

#[test]
fn split_groups_annotated_frames_by_recorded_scene() {
    let dir = tempfile::tempdir().expect("temp");
    let video = make_video(dir.path());
    let ds = dir.path().join("ds");
    annotate(&video, &ds, &["--every", "0.5", "--keep-duplicates"]);
    let out = dir.path().join("split");
    let s = run_json(&[
        "dataset",
        "split",
        ds.to_str().expect("utf8"),
        "-o",
        out.to_str().expect("utf8"),
        "--val",
        "0.3",
        "--json",
    ]);
    assert_eq!(s["groups"], 3, "{s}");
    let csv = split_csv(&out);
    let mut split_of_group: BTreeMap<&str, &str> = BTreeMap::new();
    for (split, group) in csv.values() {
        assert!(group.starts_with("my_clip/"), "{group}");
        let prev = split_of_group.insert(group, split);
        assert!(
            prev.is_none_or(|p| p == split),
            "scene {group} straddles splits"
        );
    }
    assert!(s["val"].as_u64().expect("val") > 0);
}

#[test]
fn merge_reconciles_class_lists_by_name() {
    let dir = tempfile::tempdir().expect("temp");
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    hand_dataset(
        &a,
        &["trunk", "water"],
        &[("f1", (40, 20), "1 0.5 0.5 0.5 0.5\n0 0.25 0.25 0.1 0.1\n")],
    );
    hand_dataset(
        &b,
        &["water", "lava"],
        &[
            ("f1", (40, 20), "0 0.5 0.5 0.2 0.2\n1 0.1 0.1 0.1 0.1\n"),
            ("g", (40, 20), ""),
        ],
    );
    let out = dir.path().join("m");
    let s = run_json(&[
        "dataset",
        "merge",
        a.to_str().expect("utf8"),
        b.to_str().expect("utf8"),
        "-o",
        out.to_str().expect("utf8"),
        "--json",
    ]);
    assert_eq!(s["classes"], serde_json::json!(["trunk", "water", "lava"]));
    assert_eq!(s["images"], 3);
    assert_eq!(s["renamed"], 1);
    assert_eq!(
        read(&out.join("labels/f1.txt")),
        "1 0.500000 0.500000 0.500000 0.500000\n0 0.250000 0.250000 0.100000 0.100000\n"
    );
    assert_eq!(
        read(&out.join("labels/b_f1.txt")),
        "1 0.500000 0.500000 0.200000 0.200000\n2 0.100000 0.100000 0.100000 0.100000\n"
    );
    assert_eq!(read(&out.join("labels/g.txt")), "");
    let yaml = vistawise::dataset::yolo::read_data_yaml(&out.join("data.yaml")).expect("yaml");
    assert_eq!(yaml.names, vec!["trunk", "water", "lava"]);

    // A fixed class list: an input class outside it is an error naming the input.
    let out2 = dir.path().join("m2");
    let (code, _, stderr) = run(&[
        "dataset",
        "merge",
        a.to_str().expect("utf8"),
        b.to_str().expect("utf8"),
        "-o",
        out2.to_str().expect("utf8"),
        "--classes",
        a.join("data.yaml").to_str().expect("utf8"),
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("lava") && stderr.contains("b/data.yaml"),
        "{stderr}"
    );
}

#[test]
fn stats_count_classes_and_draw_the_histogram() {
    let dir = tempfile::tempdir().expect("temp");
    let ds = dir.path().join("ds");
    // Box sides in pixels on 200x100 images: 20x10 (sqrt 14.1 -> 8-16), 100x50 (70.7 -> 64-128),
    // 4x2 (2.8 -> 0-8).
    hand_dataset(
        &ds,
        &["trunk", "water", "lava"],
        &[
            ("a", (200, 100), "0 0.5 0.5 0.1 0.1\n0 0.2 0.2 0.5 0.5\n"),
            ("b", (200, 100), "2 0.5 0.5 0.02 0.02\n0 0.5 0.5 0.1 0.1\n"),
            ("c", (200, 100), ""),
        ],
    );
    let png = dir.path().join("chart.png");
    let s = run_json(&[
        "dataset",
        "stats",
        ds.to_str().expect("utf8"),
        "--png",
        png.to_str().expect("utf8"),
        "--json",
    ]);
    assert_eq!(s["images"], 3);
    assert_eq!(s["images_without_boxes"], 1);
    assert_eq!(s["boxes"], 4);
    assert_eq!(
        s["per_class"][0],
        serde_json::json!({"class": "trunk", "boxes": 3, "images": 2})
    );
    assert_eq!(s["per_class"][1]["boxes"], 0);
    assert_eq!(
        s["per_class"][2],
        serde_json::json!({"class": "lava", "boxes": 1, "images": 1})
    );
    assert_eq!(
        s["size_histogram"],
        serde_json::json!([1, 2, 0, 0, 1, 0, 0, 0])
    );
    let chart = image::open(&png).expect("the chart is a PNG");
    assert!(chart.width() >= 400 && chart.height() >= 200);
    // Default location and the text form.
    let (code, stdout, _) = run(&["dataset", "stats", ds.to_str().expect("utf8")]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("trunk") && stdout.contains("4 boxes"),
        "{stdout}"
    );
    assert!(ds.join("stats.png").is_file());
}
