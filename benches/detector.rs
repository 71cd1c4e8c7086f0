//! Detector stages on a 1280x720 frame at one thread: pre-process (letterbox), inference,
//! post-process (decode + NMS + mapping back). Uses models/minecraft-detector.onnx when it exists,
//! else the test fixture; VISTAWISE_BENCH_MODEL picks another file, VISTAWISE_BENCH_INPUT_SIZE
//! caps a dynamic model's input as `detector.input_size` does (e.g. 576).
//!
//!     cargo bench --bench detector

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use vistawise::perception::{DetectOptions, Detector, runtime};

fn model_path(root: &std::path::Path) -> PathBuf {
    if let Some(p) = std::env::var_os("VISTAWISE_BENCH_MODEL") {
        return PathBuf::from(p);
    }
    let shipped = root.join("models/minecraft-detector.onnx");
    if shipped.is_file() {
        shipped
    } else {
        root.join("tests/fixtures/detector/tiny-raw.onnx")
    }
}

fn frame_1280x720(root: &std::path::Path) -> image::RgbImage {
    let path = root.join("tests/fixtures/detector/images/wide_16x9.png");
    let img = image::open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_rgb8();
    image::imageops::resize(&img, 1280, 720, image::imageops::FilterType::Triangle)
}

fn bench(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let explicit = std::env::var_os("VISTAWISE_ORT_LIB").map(PathBuf::from);
    runtime::init(explicit.as_deref()).unwrap_or_else(|e| panic!("{e}"));
    let model = model_path(&root);
    let mut detector = Detector::load(&model, 1).unwrap_or_else(|e| panic!("{e}"));
    if let Some(size) = std::env::var_os("VISTAWISE_BENCH_INPUT_SIZE") {
        let size: u32 = size
            .to_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("VISTAWISE_BENCH_INPUT_SIZE={size:?} is not a whole number"));
        detector = detector
            .with_input_size(size)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let frame = frame_1280x720(&root);
    let opts = DetectOptions {
        confidence: 0.25,
        iou: 0.45,
        max_detections: 300,
        multi_label: false,
        clip_boxes: true,
    };
    let letterbox = detector.letterbox_for(frame.width(), frame.height());
    eprintln!(
        "model {} (input {}x{} for this frame, {})",
        model.display(),
        letterbox.dst_w,
        letterbox.dst_h,
        detector.info().output_form
    );

    let mut group = c.benchmark_group("detector_1280x720");
    group.bench_function("preprocess", |b| {
        b.iter(|| black_box(detector.preprocess(black_box(&frame)).expect("preprocess")))
    });
    let input = detector.preprocess(&frame).expect("preprocess");
    group.bench_function("inference", |b| {
        b.iter(|| black_box(detector.infer(black_box(&input)).expect("infer")))
    });
    let output = detector.infer(&input).expect("infer");
    group.bench_function("postprocess", |b| {
        b.iter(|| {
            black_box(
                detector
                    .postprocess(black_box(&output), &input.letterbox, &opts)
                    .expect("postprocess"),
            )
        })
    });
    group.bench_function("total", |b| {
        b.iter(|| black_box(detector.detect(black_box(&frame), &opts).expect("detect")))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
