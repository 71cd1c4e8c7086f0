//! The Rust detector reproduces Ultralytics' own `predict` on the same ONNX files: same classes,
//! IoU > 0.95 per box, confidence within 1e-3. The references were written by Ultralytics
//! (tools/fixtures/make_detector_fixture.py), never by this code.

use crate::support;

use serde::Deserialize;
use vistawise::perception::iou;
use vistawise::perception::{DetectOptions, Detector};

#[derive(Deserialize)]
struct Reference {
    model: String,
    conf: f32,
    iou: f32,
    imgsz: Vec<usize>,
    images: Vec<RefImage>,
}

#[derive(Deserialize)]
struct RefImage {
    file: String,
    width: u32,
    height: u32,
    boxes: Vec<RefBox>,
}

#[derive(Deserialize)]
struct RefBox {
    class_id: usize,
    class: String,
    conf: f32,
    xyxy: [f32; 4],
}

fn load_reference(name: &str) -> Reference {
    let path = support::fixture(&format!("detector/{name}"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn check_against_reference(reference_file: &str) {
    support::init_ort();
    let reference = load_reference(reference_file);
    let model_path = support::fixture(&format!("detector/{}", reference.model));
    let mut detector = Detector::load(&model_path, 1).expect("load fixture model");
    let info = detector.info().clone();
    assert_eq!(info.class_names.len(), 23);
    assert_eq!(info.class_names[0], "trunk");
    assert_eq!(info.class_names[22], "bedrock");
    let imgsz = match reference.imgsz.as_slice() {
        [n] => (*n, *n),
        [h, w] => (*h, *w),
        other => panic!("bad imgsz {other:?}"),
    };
    assert_eq!((info.input_h, info.input_w), imgsz);

    let opts = DetectOptions {
        confidence: reference.conf,
        iou: reference.iou,
        max_detections: 300,
        multi_label: false,
        clip_boxes: true,
    };
    let mut aspects = Vec::new();
    let mut compared = 0;
    let (mut worst_iou, mut worst_conf) = (1.0f32, 0.0f32);
    for image in &reference.images {
        let frame = image::open(support::fixture(&format!("detector/{}", image.file)))
            .expect("fixture image")
            .to_rgb8();
        assert_eq!((frame.width(), frame.height()), (image.width, image.height));
        aspects.push(image.width as f32 / image.height as f32);
        let (found, _) = detector.detect(&frame, &opts).expect("detect");
        assert_eq!(
            found.len(),
            image.boxes.len(),
            "{}: Rust found {:?}, Ultralytics {:?}",
            image.file,
            found.iter().map(|d| (&d.class, d.conf)).collect::<Vec<_>>(),
            image
                .boxes
                .iter()
                .map(|b| (&b.class, b.conf))
                .collect::<Vec<_>>()
        );
        let mut used = vec![false; found.len()];
        for want in &image.boxes {
            let best = found
                .iter()
                .enumerate()
                .filter(|(i, d)| !used[*i] && d.class_id == want.class_id)
                .map(|(i, d)| (i, iou(&d.xyxy, &want.xyxy)))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            let (i, overlap) = best.unwrap_or_else(|| {
                panic!("{}: no {} box in the Rust output", image.file, want.class)
            });
            used[i] = true;
            let got = &found[i];
            assert_eq!(got.class, want.class);
            assert!(
                overlap > 0.95,
                "{}: {} box {:?} vs reference {:?} (IoU {overlap})",
                image.file,
                want.class,
                got.xyxy,
                want.xyxy
            );
            assert!(
                (got.conf - want.conf).abs() < 1e-3,
                "{}: {} conf {} vs reference {}",
                image.file,
                want.class,
                got.conf,
                want.conf
            );
            worst_iou = worst_iou.min(overlap);
            worst_conf = worst_conf.max((got.conf - want.conf).abs());
            compared += 1;
        }
    }
    assert!(compared >= 3, "the reference must contain boxes to compare");
    eprintln!(
        "{reference_file}: {compared} boxes, worst IoU {worst_iou:.5}, worst conf difference {worst_conf:.2e}"
    );
    // Letterboxing is exercised for 16:9, 4:3 and portrait frames.
    for (want, name) in [
        (16.0 / 9.0, "16:9"),
        (4.0 / 3.0, "4:3"),
        (9.0 / 16.0, "portrait"),
    ] {
        assert!(
            aspects.iter().any(|a| (a - want).abs() < 0.02),
            "no {name} fixture image"
        );
    }
}

#[test]
fn raw_output_model_matches_ultralytics_predict() {
    check_against_reference("reference-raw.json");
}

#[test]
fn end_to_end_model_matches_ultralytics_predict() {
    check_against_reference("reference-e2e.json");
}

#[test]
fn dynamic_size_model_matches_ultralytics_predict() {
    // Ultralytics' predict gives a dynamic-size model the smallest stride-multiple rectangle
    // (LetterBox auto=True); the confidences only match if the Rust side feeds the same input.
    check_against_reference("reference-dyn.json");
    support::init_ort();
    let dynamic = Detector::load(&support::fixture("detector/tiny-dyn.onnx"), 1).expect("dyn");
    assert!(dynamic.info().dynamic_input);
    assert_eq!(dynamic.info().output_form, "raw [1, 4+nc, N]");
    let inputs: Vec<(u32, u32)> = [(640, 360), (640, 480), (360, 640), (500, 333)]
        .into_iter()
        .map(|(w, h)| {
            let lb = dynamic.letterbox_for(w, h);
            (lb.dst_w, lb.dst_h)
        })
        .collect();
    assert_eq!(inputs, [(320, 192), (320, 256), (192, 320), (320, 224)]);
    let fixed = Detector::load(&support::fixture("detector/tiny-raw.onnx"), 1).expect("raw");
    assert!(!fixed.info().dynamic_input);
    let lb = fixed.letterbox_for(360, 640);
    assert_eq!(
        (lb.dst_w, lb.dst_h),
        (320, 192),
        "a fixed model always gets its own size"
    );
}

#[test]
fn model_metadata_gives_names_size_and_form() {
    support::init_ort();
    let raw = Detector::load(&support::fixture("detector/tiny-raw.onnx"), 1).expect("raw");
    assert!(
        raw.info().output_form.starts_with("raw"),
        "{}",
        raw.info().output_form
    );
    assert_eq!((raw.info().input_h, raw.info().input_w), (192, 320));
    assert_eq!(raw.info().stride, Some(32));
    let e2e = Detector::load(&support::fixture("detector/tiny-e2e.onnx"), 1).expect("e2e");
    assert!(
        e2e.info().output_form.starts_with("end-to-end"),
        "{}",
        e2e.info().output_form
    );
}

#[test]
fn a_file_that_is_not_a_model_is_a_clear_error() {
    support::init_ort();
    let dir = tempfile::tempdir().expect("temp");
    let bogus = dir.path().join("bogus.onnx");
    std::fs::write(&bogus, b"not an onnx file").expect("write");
    let err = Detector::load(&bogus, 1).err().expect("must fail");
    let text = err.to_string();
    assert!(
        text.contains("bogus.onnx") && text.contains("not a loadable ONNX model"),
        "{text}"
    );
}
