//! Annotation for detector finetuning: pre-label frames with the current detector, write them as
//! a YOLO dataset with X-AnyLabeling JSON beside each image (a person corrects boxes instead of
//! drawing them), and read the corrected JSON back ([`import`]).
//!
//! `annotate` is resumable (frames already in `annotate.jsonl` are skipped), skips near-duplicate
//! frames (dHash Hamming distance), groups frames into scenes for `dataset split`, and never
//! overwrites a label a person corrected unless asked to.

mod frame_sources;
mod hash;
mod import;
mod labelme;

pub use frame_sources::VideoSampling;
pub use import::{find_classes, import_dir};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use image::RgbImage;
use indicatif::ProgressBar;
use serde::Serialize;

use crate::dataset::writer::{self, ImageData, WriteError, YoloWriter, format_labels};
use crate::dataset::yolo::DatasetError;
use crate::dataset::{
    FrameRecord, Manifest, ManifestError, ManifestWriter, Record, file_sha256, text_sha256,
};
use crate::perception::{DetectOptions, Detection, Detector};
use hash::DHash;
use labelme::{Annotation, LabelMeError, Rectangle};

#[derive(Debug, thiserror::Error)]
pub enum AnnotateError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("source {0} does not exist")]
    NoSource(PathBuf),
    #[error("source {0} holds no .jpg/.jpeg/.png frames")]
    EmptySource(PathBuf),
    #[error(
        "source {0} is not an image folder, an image, a video (.mp4, .mkv, .webm, .mov, .avi, ...) or a session folder (frames/ + session.jsonl)"
    )]
    UnknownSource(PathBuf),
    #[error("cannot sample frames from {video}: {reason}")]
    Ffmpeg { video: PathBuf, reason: String },
    #[error("cannot read image {path}: {reason}")]
    Image { path: PathBuf, reason: String },
    #[error("detection failed on {path}: {reason}")]
    Detect { path: PathBuf, reason: String },
    #[error(
        "{path}: imageWidth x imageHeight is {json_w}x{json_h} but the image is {image_w}x{image_h}"
    )]
    SizeMismatch {
        path: PathBuf,
        json_w: u32,
        json_h: u32,
        image_w: u32,
        image_h: u32,
    },
    #[error("{path}: field `imagePath`: image {image} does not exist")]
    MissingImage { path: PathBuf, image: PathBuf },
    #[error("{0} has no data.yaml (the class list); run `vistawise annotate` first")]
    NoDataYaml(PathBuf),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    LabelMe(#[from] LabelMeError),
    #[error(transparent)]
    Dataset(#[from] DatasetError),
}

/// Whatever pre-labels frames: the detector, or a stand-in in tests.
pub trait Labeller {
    /// Class names, by id.
    fn classes(&self) -> &[String];
    fn label(&mut self, frame: &RgbImage) -> Result<Vec<Detection>, String>;
}

/// The project's detector as a [`Labeller`].
pub struct DetectorLabeller {
    pub detector: Detector,
    pub options: DetectOptions,
}

impl Labeller for DetectorLabeller {
    fn classes(&self) -> &[String] {
        &self.detector.info().class_names
    }
    fn label(&mut self, frame: &RgbImage) -> Result<Vec<Detection>, String> {
        self.detector
            .detect(frame, &self.options)
            .map(|(d, _)| d)
            .map_err(|e| e.to_string())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AnnotateOptions {
    pub sampling: VideoSampling,
    /// A frame within this dHash distance (bits of 64) of a frame already in the dataset is a
    /// near-duplicate and skipped; `None` keeps every frame.
    pub duplicate_distance: Option<u32>,
    /// A new scene (split group) starts when consecutive frames differ by more than this.
    pub scene_distance: u32,
    /// Pre-label frames already in the dataset again (those a person corrected are kept).
    pub relabel: bool,
    /// With `relabel`: overwrite corrected labels too.
    pub overwrite_corrected: bool,
    /// Recorded in the manifest: the detector file and its sha256.
    pub model: String,
    pub model_sha256: String,
    pub confidence: f32,
}

/// What a run did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub source: String,
    pub source_kind: String,
    pub frames: usize,
    /// Written now (new frames).
    pub written: usize,
    /// Labelled again (`relabel`).
    pub relabelled: usize,
    /// Near-duplicates skipped now.
    pub duplicates: usize,
    /// Already handled by an earlier run (written or skipped), left alone.
    pub already_done: usize,
    /// Corrected by a person, left alone.
    pub corrected_kept: Vec<String>,
    pub boxes: usize,
    pub seconds: f64,
    /// Detector time per labelled frame.
    pub detect_ms_per_frame: f64,
}

const HEADER: &str = "Written by vistawise annotate: pre-labels from the detector. Correct the X-AnyLabeling JSON\nbeside each image, then run `vistawise dataset import` to rewrite labels/ from it.";

/// Pre-labels every frame of `source` into the dataset at `dataset` (see the module docs).
pub fn annotate(
    source: &Path,
    dataset: &Path,
    labeller: &mut dyn Labeller,
    opts: &AnnotateOptions,
    progress: &ProgressBar,
) -> Result<Summary, AnnotateError> {
    let start = Instant::now();
    let classes = labeller.classes().to_vec();
    // The source first: a wrong SOURCE leaves no dataset folder behind.
    let src = frame_sources::open(source, &opts.sampling, &dataset.join(".annotate-cache"))?;
    let writer = YoloWriter::create_with_header(dataset, &classes, HEADER)?;
    let manifest = Manifest::load(dataset)?;
    let mut out = ManifestWriter::open(dataset)?;
    out.append(&Record::Run {
        model: opts.model.clone(),
        model_sha256: opts.model_sha256.clone(),
        confidence: opts.confidence,
        source: source.display().to_string(),
    })?;
    let relabel = opts.relabel || opts.overwrite_corrected;
    let kept = manifest
        .frames
        .values()
        .filter_map(|f| DHash::from_hex(&f.dhash).map(|h| (h, f.name.clone())))
        .collect();
    let mut run = Run {
        dataset,
        labeller,
        opts,
        classes,
        writer,
        manifest,
        out,
        kept,
        summary: Summary {
            source: source.display().to_string(),
            source_kind: format!("{:?}", src.kind).to_lowercase(),
            frames: src.frames.len(),
            ..Summary::default()
        },
        detect_time: Duration::ZERO,
        detected: 0,
        prev: None,
        scene: 0,
    };
    progress.set_length(src.frames.len() as u64);
    for frame in &src.frames {
        progress.inc(1);
        if run.seen_before(frame, relabel)? {
            continue;
        }
        if run.add(frame, &src.name)? {
            let s = &run.summary;
            progress.set_message(format!(
                "{} new, {} duplicates, {} boxes",
                s.written, s.duplicates, s.boxes
            ));
        }
    }
    if let Some(scratch) = &src.scratch {
        // Extracted video frames are only needed until the run completes.
        let _ = std::fs::remove_dir_all(scratch);
        // The cache folder itself goes when no other video's frames are left in it.
        let _ = std::fs::remove_dir(dataset.join(".annotate-cache"));
    }
    let mut summary = run.summary;
    summary.seconds = start.elapsed().as_secs_f64();
    if run.detected > 0 {
        summary.detect_ms_per_frame = run.detect_time.as_secs_f64() * 1000.0 / run.detected as f64;
    }
    Ok(summary)
}

/// An annotation run under way: the dataset's writers and manifest, and what the frames so far
/// left (the kept frames' hashes for the duplicate check, the scene count, the tallies).
struct Run<'a> {
    dataset: &'a Path,
    labeller: &'a mut dyn Labeller,
    opts: &'a AnnotateOptions,
    classes: Vec<String>,
    writer: YoloWriter,
    manifest: Manifest,
    out: ManifestWriter,
    /// Hashes of the frames in the dataset, with their names.
    kept: Vec<(DHash, String)>,
    summary: Summary,
    detect_time: Duration,
    detected: usize,
    /// The previous frame's hash, and its scene: a frame far from it starts a new scene.
    prev: Option<DHash>,
    scene: u32,
}

impl Run<'_> {
    /// A frame an earlier run handled: skipped, kept as a person corrected it, or labelled
    /// again (`--relabel`); its hash and scene carry on. `false` for a frame never seen.
    fn seen_before(
        &mut self,
        frame: &frame_sources::SourceFrame,
        relabel: bool,
    ) -> Result<bool, AnnotateError> {
        if let Some(rec) = self.manifest.frames.get(&frame.key).cloned() {
            self.prev = DHash::from_hex(&rec.dhash);
            self.scene = rec.scene;
            if !relabel {
                self.summary.already_done += 1;
            } else if !self.opts.overwrite_corrected && is_corrected(self.dataset, &rec)? {
                self.summary.corrected_kept.push(rec.name.clone());
            } else {
                self.relabel(&rec)?;
            }
            return Ok(true);
        }
        if let Some((dhash, s)) = self.manifest.duplicates.get(&frame.key) {
            self.prev = DHash::from_hex(dhash);
            self.scene = *s;
            self.summary.already_done += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// The labeller's boxes on one frame, timed.
    fn label(&mut self, image: &RgbImage, path: &Path) -> Result<Vec<Detection>, AnnotateError> {
        let t = Instant::now();
        let found = self
            .labeller
            .label(image)
            .map_err(|reason| AnnotateError::Detect {
                path: path.to_path_buf(),
                reason,
            })?;
        self.detect_time += t.elapsed();
        self.detected += 1;
        Ok(found)
    }

    /// Appends a record to the manifest file and applies it to the manifest in memory.
    fn record(&mut self, record: Record) -> Result<(), AnnotateError> {
        self.out.append(&record)?;
        self.manifest.apply(record);
        Ok(())
    }

    /// A frame an earlier run labelled, labelled again from the dataset's own copy.
    fn relabel(&mut self, rec: &FrameRecord) -> Result<(), AnnotateError> {
        let image_path = self.dataset.join(&rec.image);
        let bytes = std::fs::read(&image_path).map_err(|source| AnnotateError::Io {
            path: image_path.clone(),
            source,
        })?;
        let image = decode(&bytes, &image_path)?;
        let found = self.label(&image, &image_path)?;
        let record = write_frame(&self.writer, rec, &image, &found, &self.classes)?;
        self.summary.boxes += record.boxes;
        self.summary.relabelled += 1;
        self.record(Record::Frame(record))
    }

    /// A new frame: skipped as a near-duplicate of a kept one, or as someone else's labels
    /// under its name; else copied into the dataset and labelled. True when written.
    fn add(
        &mut self,
        frame: &frame_sources::SourceFrame,
        source: &str,
    ) -> Result<bool, AnnotateError> {
        let bytes = std::fs::read(&frame.path).map_err(|source| AnnotateError::Io {
            path: frame.path.clone(),
            source,
        })?;
        let image = decode(&bytes, &frame.path)?;
        let h = DHash::of(&image);
        if let Some(p) = self.prev
            && h.distance(p) > self.opts.scene_distance
        {
            self.scene += 1;
        }
        self.prev = Some(h);
        let scene = self.scene;
        if let Some(limit) = self.opts.duplicate_distance
            && let Some((d, of)) = self
                .kept
                .iter()
                .map(|(k, name)| (h.distance(*k), name))
                .min_by_key(|(d, _)| *d)
                .filter(|(d, _)| *d <= limit)
        {
            let record = Record::Duplicate {
                key: frame.key.clone(),
                of: of.clone(),
                distance: d,
                dhash: h.to_hex(),
                scene,
            };
            self.record(record)?;
            self.summary.duplicates += 1;
            return Ok(false);
        }

        let name = unique_name(&self.manifest, &frame.name, &frame.key);
        if !self.manifest.names.contains_key(&name) && !self.opts.overwrite_corrected {
            // Files under this name that no run recorded: someone else's labels; keep them.
            let foreign = [
                self.writer.label_path(&name),
                self.dataset.join("images").join(format!("{name}.json")),
            ];
            if foreign.iter().any(|p| p.exists()) {
                self.summary.corrected_kept.push(name);
                return Ok(false);
            }
        }
        let ext = frame
            .path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_else(|| "jpg".into());
        let image_rel = format!("images/{name}.{ext}");
        self.writer.write_image(
            &name,
            &ImageData::Encoded {
                bytes: &bytes,
                ext: &ext,
            },
        )?;
        let found = self.label(&image, &frame.path)?;
        let base = FrameRecord {
            key: frame.key.clone(),
            name: name.clone(),
            image: image_rel,
            source: source.to_string(),
            group: format!("{source}/{scene:04}"),
            scene,
            dhash: h.to_hex(),
            boxes: 0,
            label_sha256: String::new(),
            json_sha256: String::new(),
        };
        let record = write_frame(&self.writer, &base, &image, &found, &self.classes)?;
        self.summary.boxes += record.boxes;
        self.summary.written += 1;
        self.kept.push((h, name));
        self.record(Record::Frame(record))?;
        Ok(true)
    }
}

fn decode(bytes: &[u8], path: &Path) -> Result<RgbImage, AnnotateError> {
    image::load_from_memory(bytes)
        .map(|i| i.to_rgb8())
        .map_err(|e| AnnotateError::Image {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
}

/// `base`, or `base_2`, `base_3`, ... when another frame already has that name.
fn unique_name(manifest: &Manifest, base: &str, key: &str) -> String {
    let mut name = base.to_string();
    let mut n = 2;
    while manifest.names.get(&name).is_some_and(|k| k != key) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

/// Whether a person changed (or removed) the label file or the JSON since annotate wrote them.
pub fn is_corrected(dataset: &Path, rec: &FrameRecord) -> Result<bool, AnnotateError> {
    let label = file_sha256(&dataset.join("labels").join(format!("{}.txt", rec.name)))?;
    let json = file_sha256(&dataset.join("images").join(format!("{}.json", rec.name)))?;
    Ok(label.as_deref() != Some(rec.label_sha256.as_str())
        || json.as_deref() != Some(rec.json_sha256.as_str()))
}

/// Writes the JSON and the label file of a frame; returns its record with the new hashes.
fn write_frame(
    writer: &YoloWriter,
    base: &FrameRecord,
    image: &RgbImage,
    found: &[Detection],
    classes: &[String],
) -> Result<FrameRecord, AnnotateError> {
    let (w, h) = image.dimensions();
    let image_file = Path::new(&base.image)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let shapes: Vec<Rectangle> = found
        .iter()
        .filter_map(|d| {
            let label = classes
                .get(d.class_id)
                .map(String::as_str)
                .unwrap_or(&d.class);
            Rectangle::clipped(label, Some(d.conf), d.xyxy, w, h)
        })
        .collect();
    let annotation = Annotation {
        image_path: image_file,
        width: w,
        height: h,
        shapes,
    };
    let json_path = writer
        .root()
        .join("images")
        .join(format!("{}.json", base.name));
    let boxes = annotation.to_label_boxes(classes, &json_path)?;
    let json_text = annotation.to_json();
    let label_text = format_labels(&boxes);
    writer::write_atomic(&json_path, json_text.as_bytes())?;
    writer::write_atomic(&writer.label_path(&base.name), label_text.as_bytes())?;
    Ok(FrameRecord {
        boxes: boxes.len(),
        label_sha256: text_sha256(&label_text),
        json_sha256: text_sha256(&json_text),
        ..base.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Labels every frame with one box in its top-left quarter, class = brightness parity.
    struct Fake {
        classes: Vec<String>,
        calls: usize,
    }

    impl Labeller for Fake {
        fn classes(&self) -> &[String] {
            &self.classes
        }
        fn label(&mut self, frame: &RgbImage) -> Result<Vec<Detection>, String> {
            self.calls += 1;
            let (w, h) = frame.dimensions();
            Ok(vec![Detection {
                class_id: 1,
                class: "b".into(),
                conf: 0.9,
                xyxy: [0.0, 0.0, w as f32 / 2.0, h as f32 / 2.0],
            }])
        }
    }

    fn opts() -> AnnotateOptions {
        AnnotateOptions {
            sampling: VideoSampling {
                every_secs: 1.0,
                scene: None,
            },
            duplicate_distance: Some(3),
            scene_distance: 16,
            relabel: false,
            overwrite_corrected: false,
            model: "fake".into(),
            model_sha256: "0".into(),
            confidence: 0.25,
        }
    }

    fn stripes(period: u32, w: u32, h: u32) -> RgbImage {
        RgbImage::from_fn(w, h, |x, y| {
            let v = if ((x / period) + (y / (period + 3))).is_multiple_of(2) {
                230
            } else {
                20
            };
            image::Rgb([v, v / 2, 255 - v])
        })
    }

    #[test]
    fn folder_run_dedupes_resumes_and_keeps_corrections() {
        let dir = tempfile::tempdir().expect("temp");
        let src = dir.path().join("clip");
        std::fs::create_dir_all(&src).expect("mkdir");
        stripes(7, 64, 48).save(src.join("a.png")).expect("save");
        stripes(7, 64, 48).save(src.join("b.png")).expect("save"); // duplicate of a
        stripes(17, 64, 48).save(src.join("c.png")).expect("save");
        let ds = dir.path().join("ds");
        let mut fake = Fake {
            classes: vec!["a".into(), "b".into()],
            calls: 0,
        };
        let bar = ProgressBar::hidden();
        let s = annotate(&src, &ds, &mut fake, &opts(), &bar).expect("run");
        assert_eq!((s.written, s.duplicates, s.already_done), (2, 1, 0));
        let label = std::fs::read_to_string(ds.join("labels/clip_a.txt")).expect("label");
        assert_eq!(label, "1 0.250000 0.250000 0.500000 0.500000\n");
        assert!(ds.join("images/clip_a.json").is_file());
        assert!(!ds.join("images/clip_b.png").exists());

        let s = annotate(&src, &ds, &mut fake, &opts(), &bar).expect("resume");
        assert_eq!((s.written, s.duplicates, s.already_done), (0, 0, 3));
        assert_eq!(fake.calls, 2);

        std::fs::write(ds.join("labels/clip_c.txt"), "0 0.5 0.5 0.1 0.1\n").expect("edit");
        let relabel = AnnotateOptions {
            relabel: true,
            ..opts()
        };
        let s = annotate(&src, &ds, &mut fake, &relabel, &bar).expect("relabel");
        assert_eq!(s.relabelled, 1);
        assert_eq!(s.corrected_kept, vec!["clip_c".to_string()]);
        assert_eq!(
            std::fs::read_to_string(ds.join("labels/clip_c.txt")).expect("read"),
            "0 0.5 0.5 0.1 0.1\n"
        );
        let force = AnnotateOptions {
            overwrite_corrected: true,
            ..opts()
        };
        let s = annotate(&src, &ds, &mut fake, &force, &bar).expect("overwrite");
        assert_eq!(s.relabelled, 2);
        assert!(
            std::fs::read_to_string(ds.join("labels/clip_c.txt"))
                .expect("read")
                .starts_with("1 ")
        );
    }
}
