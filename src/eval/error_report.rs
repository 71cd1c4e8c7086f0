//! The error report of `vistawise eval --errors DIR`: every false positive and miss at the chosen confidence, as
//! `errors.json` and as two contact sheets (`false_positives.png`, `misses.png`) to look at.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use image::{Rgb, RgbImage, imageops};
use serde::Serialize;

use super::errors::{BACKGROUND_IOU, FalsePositiveKind, MATCH_IOU, image_errors};
use super::metrics::{Scored, Truth};
use crate::dataset::writer::{WriteError, write_atomic};
use crate::perception::overlay::{draw_label, draw_rect};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot read image {path}: {source}")]
    ReadImage {
        path: PathBuf,
        source: image::ImageError,
    },
    #[error("cannot encode {path}: {source}")]
    Encode {
        path: PathBuf,
        source: image::ImageError,
    },
    #[error("cannot render {path}: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(transparent)]
    Write(#[from] WriteError),
}

type Result<T> = std::result::Result<T, ReportError>;

/// Side of one crop on a contact sheet, in pixels.
const CELL: u32 = 200;
const COLUMNS: u32 = 6;
const GAP: u32 = 2;
const TRUTH_COLOUR: Rgb<u8> = Rgb([0, 230, 0]);
const PREDICTION_COLOUR: Rgb<u8> = Rgb([255, 40, 40]);
const MISSED_COLOUR: Rgb<u8> = Rgb([255, 220, 0]);

#[derive(Serialize, Clone)]
struct FalsePositiveRecord {
    rank: usize,
    image: PathBuf,
    class: String,
    conf: f32,
    xyxy: [f32; 4],
    kind: FalsePositiveKind,
    /// Highest IoU with a truth of its own class.
    best_iou: f32,
    /// The truth of any class it overlaps most.
    #[serde(skip_serializing_if = "Option::is_none")]
    overlaps: Option<Overlap>,
    #[serde(skip)]
    class_id: usize,
}

#[derive(Serialize, Clone)]
struct Overlap {
    class: String,
    xyxy: [f32; 4],
    iou: f32,
}

#[derive(Serialize, Clone)]
struct MissRecord {
    rank: usize,
    image: PathBuf,
    class: String,
    xyxy: [f32; 4],
    /// Highest IoU with a kept prediction of its class.
    best_iou: f32,
    #[serde(skip)]
    class_id: usize,
}

#[derive(Serialize, Default)]
struct ClassCounts {
    false_positives: BTreeMap<&'static str, u64>,
    misses: u64,
}

#[derive(Serialize)]
struct ErrorsFile<'a> {
    model: &'a Path,
    dataset: &'a Path,
    split: &'a str,
    conf: f32,
    match_iou: f32,
    background_iou: f32,
    /// The classes listed (--errors-class); absent: all of them.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    classes: &'a [String],
    images: u64,
    counts: BTreeMap<String, ClassCounts>,
    /// Most confident first.
    false_positives: &'a [FalsePositiveRecord],
    /// Largest box first.
    misses: &'a [MissRecord],
}

/// Where the errors file came from, for its header.
pub struct Source<'a> {
    pub model: &'a Path,
    pub dataset: &'a Path,
    pub split: &'a str,
}

/// Collects the errors image by image while `eval` runs.
pub struct ErrorCollector {
    conf: f32,
    names: Vec<String>,
    /// Only these class ids are listed; empty: every class.
    only: Vec<usize>,
    images: u64,
    false_positives: Vec<FalsePositiveRecord>,
    misses: Vec<MissRecord>,
    /// The truths of every image with an error, drawn on its crops.
    truths: BTreeMap<PathBuf, Vec<Truth>>,
}

/// Totals printed after the run.
pub struct Summary {
    pub false_positives: BTreeMap<&'static str, usize>,
    pub misses: usize,
}

impl ErrorCollector {
    pub fn new(conf: f32, names: &[String], only: &[usize]) -> Self {
        ErrorCollector {
            conf,
            names: names.to_vec(),
            only: only.to_vec(),
            images: 0,
            false_positives: Vec::new(),
            misses: Vec::new(),
            truths: BTreeMap::new(),
        }
    }

    fn name(&self, class_id: usize) -> String {
        self.names
            .get(class_id)
            .cloned()
            .unwrap_or_else(|| class_id.to_string())
    }

    /// Adds one image: `preds` at any confidence (those below the chosen one are dropped here).
    pub fn add(&mut self, image: &Path, preds: &[Scored], truths: &[Truth]) {
        self.images += 1;
        let kept: Vec<Scored> = preds
            .iter()
            .filter(|p| p.conf >= self.conf)
            .copied()
            .collect();
        let listed = |class_id: usize| self.only.is_empty() || self.only.contains(&class_id);
        let (mut fps, mut misses) = image_errors(&kept, truths);
        fps.retain(|f| listed(kept[f.prediction].class_id));
        misses.retain(|m| listed(truths[m.truth].class_id));
        if !fps.is_empty() || !misses.is_empty() {
            self.truths.insert(image.to_path_buf(), truths.to_vec());
        }
        for f in fps {
            let p = kept[f.prediction];
            self.false_positives.push(FalsePositiveRecord {
                rank: 0,
                image: image.to_path_buf(),
                class: self.name(p.class_id),
                class_id: p.class_id,
                conf: p.conf,
                xyxy: p.xyxy,
                kind: f.kind,
                best_iou: f.best_iou,
                overlaps: f.overlaps.map(|(ti, iou)| Overlap {
                    class: self.name(truths[ti].class_id),
                    xyxy: truths[ti].xyxy,
                    iou,
                }),
            });
        }
        for m in misses {
            let t = truths[m.truth];
            self.misses.push(MissRecord {
                rank: 0,
                image: image.to_path_buf(),
                class: self.name(t.class_id),
                class_id: t.class_id,
                xyxy: t.xyxy,
                best_iou: m.best_iou,
            });
        }
    }

    fn truths_of(&self, image: &Path) -> &[Truth] {
        self.truths.get(image).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Writes `errors.json` and the contact sheets (up to `sheet_max` crops each) into `dir`.
    pub fn write(mut self, dir: &Path, source: &Source, sheet_max: usize) -> Result<Summary> {
        self.false_positives
            .sort_by(|a, b| b.conf.total_cmp(&a.conf));
        let area = |r: &[f32; 4]| (r[2] - r[0]) * (r[3] - r[1]);
        self.misses
            .sort_by(|a, b| area(&b.xyxy).total_cmp(&area(&a.xyxy)));
        for (i, f) in self.false_positives.iter_mut().enumerate() {
            f.rank = i + 1;
        }
        for (i, m) in self.misses.iter_mut().enumerate() {
            m.rank = i + 1;
        }
        let (counts, summary) = self.tally();
        let file = ErrorsFile {
            model: source.model,
            dataset: source.dataset,
            split: source.split,
            conf: self.conf,
            match_iou: MATCH_IOU,
            background_iou: BACKGROUND_IOU,
            classes: &self.only.iter().map(|&c| self.name(c)).collect::<Vec<_>>(),
            images: self.images,
            counts,
            false_positives: &self.false_positives,
            misses: &self.misses,
        };
        let json_path = dir.join("errors.json");
        let json = serde_json::to_string_pretty(&file).map_err(|source| ReportError::Json {
            path: json_path.clone(),
            source,
        })?;
        write_atomic(&json_path, json.as_bytes())?;

        self.sheets(dir, sheet_max)?;
        Ok(summary)
    }

    /// The counts per class and kind, and their sum.
    fn tally(&self) -> (BTreeMap<String, ClassCounts>, Summary) {
        let mut counts: BTreeMap<String, ClassCounts> = BTreeMap::new();
        let mut summary = Summary {
            false_positives: FalsePositiveKind::ALL
                .iter()
                .map(|k| (k.name(), 0))
                .collect(),
            misses: self.misses.len(),
        };
        for f in &self.false_positives {
            *counts
                .entry(f.class.clone())
                .or_default()
                .false_positives
                .entry(f.kind.name())
                .or_default() += 1;
            *summary.false_positives.entry(f.kind.name()).or_default() += 1;
        }
        for m in &self.misses {
            counts.entry(m.class.clone()).or_default().misses += 1;
        }
        (counts, summary)
    }

    /// The two contact sheets, up to `sheet_max` crops each, in rank order.
    fn sheets(&self, dir: &Path, sheet_max: usize) -> Result<()> {
        let fp_cells = self
            .false_positives
            .iter()
            .take(sheet_max)
            .map(|f| {
                let label = format!(
                    "{} {} {:.2} {}",
                    f.rank,
                    f.class,
                    f.conf,
                    short_kind(f.kind)
                );
                let cell = crop_cell(&f.image, f.xyxy, self.truths_of(&f.image), &label, |c| {
                    draw_box(c, f.xyxy, PREDICTION_COLOUR)
                })?;
                Ok(cell)
            })
            .collect::<Result<Vec<_>>>()?;
        save_sheet(&fp_cells, &dir.join("false_positives.png"))?;
        let miss_cells = self
            .misses
            .iter()
            .take(sheet_max)
            .map(|m| {
                let label = format!("{} {} iou{:.2}", m.rank, m.class, m.best_iou);
                let others: Vec<[f32; 4]> = self
                    .false_positives
                    .iter()
                    .filter(|f| f.image == m.image && f.class_id == m.class_id)
                    .map(|f| f.xyxy)
                    .collect();
                crop_cell(&m.image, m.xyxy, self.truths_of(&m.image), &label, |c| {
                    draw_box(c, m.xyxy, MISSED_COLOUR);
                    for b in &others {
                        draw_box(c, *b, PREDICTION_COLOUR);
                    }
                })
            })
            .collect::<Result<Vec<_>>>()?;
        save_sheet(&miss_cells, &dir.join("misses.png"))?;
        Ok(())
    }
}

fn short_kind(kind: FalsePositiveKind) -> &'static str {
    match kind {
        FalsePositiveKind::Duplicate => "dup",
        FalsePositiveKind::WrongClass => "class",
        FalsePositiveKind::Localisation => "loc",
        FalsePositiveKind::Background => "bg",
    }
}

/// A box in frame pixels, mapped into a cell.
struct CellView {
    img: RgbImage,
    origin: (f32, f32),
    scale: f32,
}

fn draw_box(cell: &mut CellView, xyxy: [f32; 4], colour: Rgb<u8>) {
    let map = |v: f32, o: f32, limit: u32| {
        ((v - o) * cell.scale)
            .round()
            .clamp(0.0, limit.saturating_sub(1) as f32) as u32
    };
    let (w, h) = (cell.img.width(), cell.img.height());
    let x1 = map(xyxy[0], cell.origin.0, w);
    let y1 = map(xyxy[1], cell.origin.1, h);
    let x2 = map(xyxy[2], cell.origin.0, w);
    let y2 = map(xyxy[3], cell.origin.1, h);
    draw_rect(&mut cell.img, x1, y1, x2, y2, 2, colour);
}

/// The square around `focus` (1.6 times its longer side plus 40 px, kept inside the frame),
/// scaled to CELL, with every truth in green, `mark` drawn over it and `label` at the bottom.
fn crop_cell(
    image: &Path,
    focus: [f32; 4],
    truths: &[Truth],
    label: &str,
    mark: impl FnOnce(&mut CellView),
) -> Result<RgbImage> {
    let frame = image::open(image)
        .map_err(|source| ReportError::ReadImage {
            path: image.to_path_buf(),
            source,
        })?
        .to_rgb8();
    let (fw, fh) = (frame.width() as f32, frame.height() as f32);
    let side = ((focus[2] - focus[0]).max(focus[3] - focus[1]) * 1.6 + 40.0)
        .min(fw)
        .min(fh)
        .max(1.0);
    let cx = (focus[0] + focus[2]) / 2.0;
    let cy = (focus[1] + focus[3]) / 2.0;
    let x0 = (cx - side / 2.0).clamp(0.0, fw - side);
    let y0 = (cy - side / 2.0).clamp(0.0, fh - side);
    let crop =
        imageops::crop_imm(&frame, x0 as u32, y0 as u32, side as u32, side as u32).to_image();
    let mut view = CellView {
        img: imageops::resize(&crop, CELL, CELL, imageops::FilterType::Triangle),
        origin: (x0.floor(), y0.floor()),
        scale: CELL as f32 / side.floor().max(1.0),
    };
    for t in truths {
        draw_box(&mut view, t.xyxy, TRUTH_COLOUR);
    }
    mark(&mut view);
    let text: String = label.chars().take((CELL / 8) as usize - 1).collect();
    draw_label(&mut view.img, 0, CELL - 10, &text, 1, Rgb([0, 0, 0]));
    Ok(view.img)
}

fn save_sheet(cells: &[RgbImage], path: &Path) -> Result<()> {
    let rows = (cells.len() as u32).div_ceil(COLUMNS).max(1);
    let width = COLUMNS * (CELL + GAP) - GAP;
    let height = rows * (CELL + GAP) - GAP;
    let mut sheet = RgbImage::from_pixel(width, height, Rgb([40, 40, 40]));
    for (i, cell) in cells.iter().enumerate() {
        let i = i as u32;
        let x = (i % COLUMNS) * (CELL + GAP);
        let y = (i / COLUMNS) * (CELL + GAP);
        imageops::replace(&mut sheet, cell, x as i64, y as i64);
    }
    let mut bytes = std::io::Cursor::new(Vec::new());
    sheet
        .write_to(&mut bytes, image::ImageFormat::Png)
        .map_err(|source| ReportError::Encode {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(write_atomic(path, bytes.get_ref())?)
}
