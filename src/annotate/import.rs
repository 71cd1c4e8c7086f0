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

#[cfg(test)]
mod tests {
    use super::*;

    fn write_json(dir: &Path, name: &str, w: u32, h: u32, label: &str) {
        let text = format!(
            r#"{{"imagePath":"{name}.png","imageWidth":{w},"imageHeight":{h},"shapes":[{{"label":"{label}","points":[[2,2],[6,4]],"shape_type":"rectangle"}}]}}"#
        );
        std::fs::write(dir.join(format!("{name}.json")), text).expect("write");
    }

    #[test]
    fn imports_all_or_nothing_and_checks_the_image_size() {
        let dir = tempfile::tempdir().expect("temp");
        let images = dir.path().join("images");
        std::fs::create_dir_all(&images).expect("mkdir");
        std::fs::write(
            dir.path().join("data.yaml"),
            "names:\n  0: trunk\n  1: lava\n",
        )
        .expect("yaml");
        for name in ["a", "b"] {
            image::RgbImage::new(8, 4)
                .save(images.join(format!("{name}.png")))
                .expect("save");
        }
        let classes = find_classes(&images).expect("classes from the folder above");
        write_json(&images, "a", 8, 4, "lava");
        write_json(&images, "b", 8, 4, "creeper");
        let err = import_dir(&images, &classes).unwrap_err().to_string();
        assert!(
            err.contains("b.json") && err.contains("shapes[0].label"),
            "{err}"
        );
        assert!(
            !dir.path().join("labels/a.txt").exists(),
            "nothing is written on error"
        );

        write_json(&images, "b", 9, 4, "trunk");
        let err = import_dir(&images, &classes).unwrap_err().to_string();
        assert!(err.contains("9x4") && err.contains("8x4"), "{err}");

        write_json(&images, "b", 8, 4, "trunk");
        let s = import_dir(&images, &classes).expect("import");
        assert_eq!((s.files, s.boxes, s.changed), (2, 2, 2));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("labels/a.txt")).expect("label"),
            "1 0.500000 0.750000 0.500000 0.500000\n"
        );
        assert_eq!(import_dir(&images, &classes).expect("again").changed, 0);
    }
}
