//! Dataset tools: `split` (seeded, grouped), `merge` (class lists reconciled by name) and
//! `stats` (per-class counts, box-size histogram as a PNG).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use image::{Rgb, RgbImage};
use serde::Serialize;

use super::writer::{ImageData, WriteError, YoloWriter, data_yaml_text, write_atomic};
use super::yolo::{DatasetError, LabelBox, Sample, list_samples, read_data_yaml, read_labels};

#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{0} has no data.yaml: the class names are needed (run `vistawise annotate`, or write one)"
    )]
    NoDataYaml(PathBuf),
    #[error("{0} is not empty; choose a new folder for the output")]
    OutputNotEmpty(PathBuf),
    #[error(
        "split fractions must be in [0, 1) and leave something for train (val {val}, test {test})"
    )]
    BadFractions { val: f64, test: f64 },
    #[error("{path}: class `{class}` is not in the class list given with --classes ({})", .known.join(", "))]
    UnknownClass {
        path: PathBuf,
        class: String,
        known: Vec<String>,
    },
    #[error("cannot read image {path}: {reason}")]
    Image { path: PathBuf, reason: String },
    #[error("cannot write {path}: {reason}")]
    Png { path: PathBuf, reason: String },
    #[error("{path}:{line}: {reason}")]
    Manifest {
        path: PathBuf,
        line: usize,
        reason: String,
    },
}

/// A dataset's class names and every image of every split it lists (each image once).
#[derive(Debug, Clone)]
pub struct Contents {
    pub root: PathBuf,
    pub names: Vec<String>,
    /// (split name, sample); the flat layout's split is `images`.
    pub samples: Vec<(String, Sample)>,
}

/// Reads `root/data.yaml` and lists its splits' images (a flat dataset with only `names` in its
/// yaml: `root/images`).
pub fn read_contents(root: &Path) -> Result<Contents, OpsError> {
    let yaml = root.join("data.yaml");
    if !yaml.is_file() {
        return Err(OpsError::NoDataYaml(root.to_path_buf()));
    }
    let info = read_data_yaml(&yaml)?;
    let mut dirs: Vec<(String, PathBuf)> = Vec::new();
    for split in ["train", "val", "test"] {
        for d in info.splits.get(split).into_iter().flatten() {
            if !dirs.iter().any(|(_, x)| x == d) {
                dirs.push((split.to_string(), d.clone()));
            }
        }
    }
    if dirs.is_empty() {
        dirs.push(("images".into(), root.join("images")));
    }
    let mut samples = Vec::new();
    for (split, dir) in dirs {
        let name = if dir == root.join("images") {
            "images".to_string()
        } else {
            split
        };
        for s in list_samples(&dir)? {
            samples.push((name.clone(), s));
        }
    }
    Ok(Contents {
        root: root.to_path_buf(),
        names: info.names,
        samples,
    })
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn ext(path: &Path) -> String {
    path.extension()
        .map(|s| s.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_else(|| "jpg".into())
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, OpsError> {
    std::fs::read(path).map_err(|source| OpsError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn ensure_empty(out: &Path) -> Result<(), OpsError> {
    if out.exists() {
        let mut entries = std::fs::read_dir(out).map_err(|source| OpsError::Io {
            path: out.to_path_buf(),
            source,
        })?;
        if entries.next().is_some() {
            return Err(OpsError::OutputNotEmpty(out.to_path_buf()));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// split

/// How frames are grouped so that near-identical ones never straddle splits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    /// The scene `annotate` recorded (annotate.jsonl); else the source.
    Scene,
    /// The source (video, session, folder): from annotate.jsonl, else the image name without
    /// its trailing `_<digits>` frame number.
    Source,
    /// Every image on its own.
    None,
}

#[derive(Debug, Clone, Serialize)]
pub struct SplitSummary {
    pub train: usize,
    pub val: usize,
    pub test: usize,
    pub groups: usize,
    pub group_by: GroupBy,
    pub seed: u64,
}

/// The source part of an image name: `clip_000012` -> `clip`, `brad_0_7089` -> `brad_0_7089`.
pub fn name_source(name: &str) -> String {
    match name.rsplit_once('_') {
        Some((head, tail)) if !head.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) => {
            head.to_string()
        }
        _ => name.to_string(),
    }
}

/// Name -> (source, scene group) from `annotate.jsonl`, when the dataset has one.
fn manifest_groups(root: &Path) -> Result<HashMap<String, (String, String)>, OpsError> {
    let path = root.join(super::manifest::FILE_NAME);
    if !path.is_file() {
        return Ok(HashMap::new());
    }
    let m = super::manifest::Manifest::load(root).map_err(|e| match e {
        super::manifest::ManifestError::Io { path, source } => OpsError::Io { path, source },
        super::manifest::ManifestError::Line { path, line, reason } => {
            OpsError::Manifest { path, line, reason }
        }
    })?;
    Ok(m.frames
        .into_values()
        .map(|f| (f.name, (f.source, f.group)))
        .collect())
}

/// splitmix64: a small, fixed, seeded generator (results must not change between versions).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Assigns groups (sorted, then shuffled by `seed`) to test, then val, until each holds its
/// fraction of the images; the rest is train. Returns group -> split name.
pub fn assign_groups(
    groups: &BTreeMap<String, usize>,
    val: f64,
    test: f64,
    seed: u64,
) -> BTreeMap<String, &'static str> {
    let total: usize = groups.values().sum();
    let mut order: Vec<(&String, &usize)> = groups.iter().collect();
    let mut rng = SplitMix(seed);
    for i in (1..order.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let want_test = (total as f64 * test).round() as usize;
    let want_val = (total as f64 * val).round() as usize;
    let (mut n_test, mut n_val) = (0, 0);
    let mut out = BTreeMap::new();
    for (g, n) in order {
        let split = if n_test < want_test {
            n_test += n;
            "test"
        } else if n_val < want_val {
            n_val += n;
            "val"
        } else {
            "train"
        };
        out.insert(g.clone(), split);
    }
    out
}

/// Each sample with the group it is split by: its own name, its source, or its scene (from the
/// manifest where it records them, else read off the name).
fn sample_groups<'c>(
    root: &Path,
    contents: &'c Contents,
    group_by: GroupBy,
) -> Result<Vec<(String, &'c Sample)>, OpsError> {
    let recorded = manifest_groups(root)?;
    let group_of = |s: &Sample| -> String {
        let name = stem(&s.image);
        match group_by {
            GroupBy::None => name,
            GroupBy::Source => recorded
                .get(&name)
                .map(|(src, _)| src.clone())
                .unwrap_or_else(|| name_source(&name)),
            GroupBy::Scene => recorded
                .get(&name)
                .map(|(_, g)| g.clone())
                .unwrap_or_else(|| name_source(&name)),
        }
    };
    Ok(contents
        .samples
        .iter()
        .map(|(_, s)| (group_of(s), s))
        .collect())
}

/// Copies a sample's image and label (empty where it has none) into `dir` as `name`.
fn copy_sample(dir: &Path, name: &str, s: &Sample) -> Result<(), OpsError> {
    let img_target = dir.join("images").join(format!("{name}.{}", ext(&s.image)));
    write_atomic(&img_target, &read_bytes(&s.image)?)?;
    let label = match std::fs::read(&s.label) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(OpsError::Io {
                path: s.label.clone(),
                source,
            });
        }
    };
    write_atomic(&dir.join("labels").join(format!("{name}.txt")), &label)?;
    Ok(())
}

/// Writes `out/{train,val[,test]}/{images,labels}` and a `data.yaml`, plus `split.csv`
/// (name, split, group). Files are copied; JSON files are not.
pub fn split(
    root: &Path,
    out: &Path,
    val: f64,
    test: f64,
    seed: u64,
    group_by: GroupBy,
) -> Result<SplitSummary, OpsError> {
    if !(0.0..1.0).contains(&val) || !(0.0..1.0).contains(&test) || val + test >= 1.0 {
        return Err(OpsError::BadFractions { val, test });
    }
    let contents = read_contents(root)?;
    ensure_empty(out)?;
    let mut groups: BTreeMap<String, usize> = BTreeMap::new();
    let keyed = sample_groups(root, &contents, group_by)?;
    for (g, _) in &keyed {
        *groups.entry(g.clone()).or_default() += 1;
    }
    let assigned = assign_groups(&groups, val, test, seed);
    let mut splits: Vec<(&str, &str)> = vec![("train", "train/images"), ("val", "val/images")];
    if test > 0.0 {
        splits.push(("test", "test/images"));
    }
    let mut summary = SplitSummary {
        train: 0,
        val: 0,
        test: 0,
        groups: groups.len(),
        group_by,
        seed,
    };
    let mut csv = String::from("name,split,group\n");
    let mut used: BTreeSet<(String, String)> = BTreeSet::new();
    for (g, s) in keyed {
        let split = assigned.get(&g).copied().unwrap_or("train");
        let mut name = stem(&s.image);
        let mut n = 2;
        while !used.insert((split.to_string(), name.clone())) {
            name = format!("{}_{n}", stem(&s.image));
            n += 1;
        }
        copy_sample(&out.join(split), &name, s)?;
        match split {
            "test" => summary.test += 1,
            "val" => summary.val += 1,
            _ => summary.train += 1,
        }
        csv.push_str(&format!("{name},{split},{g}\n"));
    }
    for (split, _) in &splits {
        std::fs::create_dir_all(out.join(split).join("images")).map_err(|source| OpsError::Io {
            path: out.join(split),
            source,
        })?;
    }
    let header = format!(
        "Written by vistawise dataset split from {} (seed {seed}, val {val}, test {test}, grouped by {group_by:?}).",
        root.display()
    );
    write_atomic(
        &out.join("data.yaml"),
        data_yaml_text(&header, &contents.names, Some(&splits)).as_bytes(),
    )?;
    write_atomic(&out.join("split.csv"), csv.as_bytes())?;
    Ok(summary)
}

// ---------------------------------------------------------------------------------------------
// merge

#[derive(Debug, Clone, Serialize)]
pub struct MergeSummary {
    pub images: usize,
    pub boxes: usize,
    pub classes: Vec<String>,
    /// Per input: its class id -> the merged id.
    pub remap: Vec<Vec<usize>>,
    pub renamed: usize,
}

/// The merged class list (`classes`, or the union of the inputs' lists in order of first
/// appearance) and, per input, its class id -> the merged id.
fn merged_classes(
    contents: &[Contents],
    classes: Option<&[String]>,
) -> Result<(Vec<String>, Vec<Vec<usize>>), OpsError> {
    let mut merged: Vec<String> = classes.map(<[String]>::to_vec).unwrap_or_default();
    let mut remap = Vec::new();
    for c in contents {
        let mut map = Vec::new();
        for name in &c.names {
            let id = match merged.iter().position(|m| m == name) {
                Some(id) => id,
                None if classes.is_some() => {
                    return Err(OpsError::UnknownClass {
                        path: c.root.join("data.yaml"),
                        class: name.clone(),
                        known: merged,
                    });
                }
                None => {
                    merged.push(name.clone());
                    merged.len() - 1
                }
            };
            map.push(id);
        }
        remap.push(map);
    }
    Ok((merged, remap))
}

/// Merges datasets into one flat dataset at `out`. The class list is `classes` when given
/// (a class of an input not in it is an error), else the union of the inputs' lists in order of
/// first appearance. Labels are remapped by class name. An image whose name is taken gets the
/// input folder's name as a prefix.
pub fn merge(
    inputs: &[PathBuf],
    out: &Path,
    classes: Option<&[String]>,
) -> Result<MergeSummary, OpsError> {
    let contents: Vec<Contents> = inputs
        .iter()
        .map(|p| read_contents(p))
        .collect::<Result<_, _>>()?;
    ensure_empty(out)?;
    let (merged, remap) = merged_classes(&contents, classes)?;
    let header = format!(
        "Written by vistawise dataset merge from {}.",
        inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let writer = YoloWriter::create_with_header(out, &merged, &header)?;
    let mut used = BTreeSet::new();
    let mut summary = MergeSummary {
        images: 0,
        boxes: 0,
        classes: merged.clone(),
        remap: remap.clone(),
        renamed: 0,
    };
    for (c, map) in contents.iter().zip(&remap) {
        let prefix = super::writer::sanitize(&stem(&c.root));
        for (_, s) in &c.samples {
            let boxes: Vec<LabelBox> = read_labels(&s.label, c.names.len())?
                .into_iter()
                .map(|b| LabelBox {
                    class_id: map[b.class_id],
                    ..b
                })
                .collect();
            let base = stem(&s.image);
            let mut name = base.clone();
            let mut n = 2;
            while !used.insert(name.clone()) {
                name = if n == 2 {
                    format!("{prefix}_{base}")
                } else {
                    format!("{prefix}_{base}_{n}")
                };
                n += 1;
            }
            if name != base {
                summary.renamed += 1;
            }
            let bytes = read_bytes(&s.image)?;
            writer.add(
                &name,
                &ImageData::Encoded {
                    bytes: &bytes,
                    ext: &ext(&s.image),
                },
                &boxes,
            )?;
            summary.images += 1;
            summary.boxes += boxes.len();
        }
    }
    Ok(summary)
}

// ---------------------------------------------------------------------------------------------
// stats

/// Box-size bins: the square root of the box area in image pixels, `[lower, upper)`.
pub const SIZE_BINS: [(u32, u32); 8] = [
    (0, 8),
    (8, 16),
    (16, 32),
    (32, 64),
    (64, 128),
    (128, 256),
    (256, 512),
    (512, u32::MAX),
];

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClassStats {
    pub class: String,
    pub boxes: usize,
    /// Images with at least one box of the class.
    pub images: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub images: usize,
    pub images_without_boxes: usize,
    pub boxes: usize,
    pub per_split: BTreeMap<String, usize>,
    pub per_class: Vec<ClassStats>,
    /// Boxes per [`SIZE_BINS`] bin (sqrt of the area in pixels).
    pub size_histogram: Vec<usize>,
    pub size_bins: Vec<String>,
}

fn bin_label(lo: u32, hi: u32) -> String {
    if hi == u32::MAX {
        format!(">={lo}")
    } else {
        format!("{lo}-{hi}")
    }
}

/// Counts boxes per class and the box-size histogram (`split`: only that split).
pub fn stats(root: &Path, split: Option<&str>) -> Result<Stats, OpsError> {
    let contents = read_contents(root)?;
    let n = contents.names.len();
    let mut st = Stats {
        images: 0,
        images_without_boxes: 0,
        boxes: 0,
        per_split: BTreeMap::new(),
        per_class: contents
            .names
            .iter()
            .map(|c| ClassStats {
                class: c.clone(),
                boxes: 0,
                images: 0,
            })
            .collect(),
        size_histogram: vec![0; SIZE_BINS.len()],
        size_bins: SIZE_BINS.iter().map(|(l, h)| bin_label(*l, *h)).collect(),
    };
    for (name, s) in &contents.samples {
        if split.is_some_and(|want| name.as_str() != want) {
            continue;
        }
        let boxes = read_labels(&s.label, n)?;
        st.images += 1;
        *st.per_split.entry(name.clone()).or_default() += 1;
        if boxes.is_empty() {
            st.images_without_boxes += 1;
            continue;
        }
        let (w, h) = image::image_dimensions(&s.image).map_err(|e| OpsError::Image {
            path: s.image.clone(),
            reason: e.to_string(),
        })?;
        let mut seen = vec![false; n];
        for b in &boxes {
            st.boxes += 1;
            st.per_class[b.class_id].boxes += 1;
            seen[b.class_id] = true;
            let side = ((b.w * w as f32) * (b.h * h as f32)).max(0.0).sqrt();
            let bin = SIZE_BINS
                .iter()
                .position(|(lo, hi)| side >= *lo as f32 && side < *hi as f32)
                .unwrap_or(SIZE_BINS.len() - 1);
            st.size_histogram[bin] += 1;
        }
        for (c, s) in seen.iter().enumerate() {
            if *s {
                st.per_class[c].images += 1;
            }
        }
    }
    Ok(st)
}

/// Draws two bar charts: boxes per size bin (top) and boxes per class (bottom).
pub fn draw_stats_png(st: &Stats, path: &Path) -> Result<(), OpsError> {
    use crate::perception::overlay::draw_label;
    let classes: Vec<&ClassStats> = st.per_class.iter().collect();
    let row_h = 14u32;
    let (w, top_h) = (900u32, 260u32);
    let h = top_h + 40 + classes.len() as u32 * row_h + 20;
    let mut img = RgbImage::from_pixel(w, h, Rgb([255, 255, 255]));
    let dark = Rgb([40, 40, 40]);
    let blue = Rgb([60, 110, 200]);
    let fill = |img: &mut RgbImage, x0: u32, y0: u32, x1: u32, y1: u32, c: Rgb<u8>| {
        for y in y0..y1.min(img.height()) {
            for x in x0..x1.min(img.width()) {
                img.put_pixel(x, y, c);
            }
        }
    };
    draw_label(
        &mut img,
        10,
        6,
        &format!(
            "box size (sqrt of area, px): {} boxes in {} images",
            st.boxes, st.images
        ),
        1,
        dark,
    );
    let max = st.size_histogram.iter().copied().max().unwrap_or(0).max(1);
    let bins = st.size_histogram.len() as u32;
    let slot = (w - 40) / bins;
    let base_y = top_h - 20;
    for (i, count) in st.size_histogram.iter().enumerate() {
        let bar_h = (*count as f64 / max as f64 * (base_y - 50) as f64).round() as u32;
        let x0 = 20 + i as u32 * slot + 8;
        fill(&mut img, x0, base_y - bar_h, x0 + slot - 16, base_y, blue);
        draw_label(
            &mut img,
            x0,
            base_y - bar_h - 12,
            &count.to_string(),
            1,
            dark,
        );
        draw_label(&mut img, x0, base_y + 4, &st.size_bins[i], 1, dark);
    }
    fill(&mut img, 16, base_y, w - 16, base_y + 1, dark);
    let y0 = top_h + 10;
    draw_label(&mut img, 10, y0, "boxes per class", 1, dark);
    let cmax = classes.iter().map(|c| c.boxes).max().unwrap_or(0).max(1);
    for (i, c) in classes.iter().enumerate() {
        let y = y0 + 20 + i as u32 * row_h;
        draw_label(&mut img, 10, y, &format!("{:>22}", c.class), 1, dark);
        let len = (c.boxes as f64 / cmax as f64 * 560.0).round() as u32;
        fill(&mut img, 210, y + 1, 210 + len, y + row_h - 3, blue);
        draw_label(&mut img, 214 + len, y, &c.boxes.to_string(), 1, dark);
    }
    let mut bytes = Vec::new();
    img.write_to(
        &mut std::io::Cursor::new(&mut bytes),
        image::ImageFormat::Png,
    )
    .map_err(|e| OpsError::Png {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    write_atomic(path, &bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_their_frame_number() {
        assert_eq!(name_source("clip_000012"), "clip");
        assert_eq!(name_source("brad_0_7089b9597eed"), "brad_0_7089b9597eed");
        assert_eq!(name_source("frame"), "frame");
        assert_eq!(name_source("_12"), "_12");
    }

    #[test]
    fn groups_are_assigned_whole_and_by_seed() {
        let groups: BTreeMap<String, usize> = (0..20).map(|i| (format!("g{i:02}"), 5)).collect();
        let a = assign_groups(&groups, 0.1, 0.0, 7);
        let b = assign_groups(&groups, 0.1, 0.0, 7);
        let c = assign_groups(&groups, 0.1, 0.0, 8);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.values().filter(|s| **s == "val").count(), 2);
        let t = assign_groups(&groups, 0.1, 0.2, 1);
        assert_eq!(t.values().filter(|s| **s == "test").count(), 4);
    }
}
