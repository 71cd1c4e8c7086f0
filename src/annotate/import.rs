//! `dataset import`: X-AnyLabeling / LabelMe JSON back to YOLO label files.
//!
//! Every JSON file of the folder is read and checked first (labels against the dataset's class
//! list, size against the image); only when all are valid are label files written, each
//! atomically, at the Ultralytics label path of its image (`.../images/x.jpg` ->
//! `.../labels/x.txt`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::AnnotateError;
use super::labelme::Annotation;
use crate::dataset::writer::{format_labels, write_atomic};
use crate::dataset::yolo::{label_path_for, read_data_yaml};

#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportSummary {
    pub files: usize,
    pub boxes: usize,
    /// Label files whose content changed.
    pub changed: usize,
}

/// Finds the class list: `data.yaml` in `dir` or in the folders above it (up to 3 levels).
pub fn find_classes(dir: &Path) -> Result<Vec<String>, AnnotateError> {
    let mut at = Some(dir);
    for _ in 0..4 {
        let Some(d) = at else { break };
        let yaml = d.join("data.yaml");
        if yaml.is_file() {
            return Ok(read_data_yaml(&yaml)?.names);
        }
        at = d.parent();
    }
    Err(AnnotateError::NoDataYaml(dir.to_path_buf()))
}

/// Imports every `*.json` of `json_dir` with the class list `classes`.
pub fn import_dir(json_dir: &Path, classes: &[String]) -> Result<ImportSummary, AnnotateError> {
    let entries = std::fs::read_dir(json_dir).map_err(|source| AnnotateError::Io {
        path: json_dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        })
        .collect();
    files.sort();
    let mut planned = Vec::new();
    for path in &files {
        let ann = Annotation::read(path)?;
        // imagePath is relative to the JSON file; X-AnyLabeling writes the bare file name.
        let image = path
            .parent()
            .unwrap_or(Path::new("."))
            .join(Path::new(&ann.image_path).file_name().unwrap_or_default());
        if !image.is_file() {
            return Err(AnnotateError::MissingImage {
                path: path.clone(),
                image,
            });
        }
        let (iw, ih) = image::image_dimensions(&image).map_err(|e| AnnotateError::Image {
            path: image.clone(),
            reason: e.to_string(),
        })?;
        if (iw, ih) != (ann.width, ann.height) {
            return Err(AnnotateError::SizeMismatch {
                path: path.clone(),
                json_w: ann.width,
                json_h: ann.height,
                image_w: iw,
                image_h: ih,
            });
        }
        let boxes = ann.to_label_boxes(classes, path)?;
        planned.push((label_path_for(&image), format_labels(&boxes), boxes.len()));
    }
    let mut summary = ImportSummary::default();
    for (label, text, n) in planned {
        let before = std::fs::read_to_string(&label).ok();
        if before.as_deref() != Some(text.as_str()) {
            write_atomic(&label, text.as_bytes())?;
            summary.changed += 1;
        }
        summary.files += 1;
        summary.boxes += n;
    }
    Ok(summary)
}
