//! Writing detection datasets in the Ultralytics YOLO layout, one file at a time and atomically:
//! every file goes to a temporary name beside its target and is renamed into place, so a crash
//! never leaves half an image or half a label file. Labels are written after their image, so a
//! label file that exists means the sample is complete.
//!
//! ```text
//! ROOT/data.yaml          path: ., train: images, val: images, names (the class list)
//! ROOT/images/NAME.jpg
//! ROOT/labels/NAME.txt    `class cx cy w h` per box, normalised, 6 decimals
//! ```

use std::path::{Path, PathBuf};

use image::RgbImage;

use super::yolo::{LabelBox, read_data_yaml};

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot encode {path}: {reason}")]
    Encode { path: PathBuf, reason: String },
    #[error(
        "{path} lists the classes [{}], but this dataset is being written with [{}]; use another folder, or `vistawise dataset merge` to reconcile them",
        .existing.join(", "), .wanted.join(", ")
    )]
    ClassMismatch {
        path: PathBuf,
        existing: Vec<String>,
        wanted: Vec<String>,
    },
    #[error("{path}: {reason}")]
    DataYaml { path: PathBuf, reason: String },
    #[error(
        "sample name `{0}` must be a plain file name (no `/`, not empty, not starting with `.`)"
    )]
    BadName(String),
    #[error("a dataset needs at least one class name")]
    NoClasses,
}

/// The image of a sample: encoded bytes kept as they are (no re-compression), or pixels saved
/// as JPEG.
pub enum ImageData<'a> {
    /// A file's bytes and its extension (`jpg`, `png`).
    Encoded { bytes: &'a [u8], ext: &'a str },
    /// Pixels, saved as JPEG at this quality.
    Rgb { image: &'a RgbImage, quality: u8 },
}

/// A YOLO dataset being written (flat: `images/`, `labels/`; see the module docs).
#[derive(Debug, Clone)]
pub struct YoloWriter {
    root: PathBuf,
    classes: Vec<String>,
}

impl YoloWriter {
    /// Creates `root/images`, `root/labels` and `root/data.yaml`. An existing `data.yaml` must
    /// list the same classes in the same order (then it is kept as it is).
    pub fn create(root: &Path, classes: &[String]) -> Result<Self, WriteError> {
        Self::create_with_header(root, classes, "Written by vistawise.")
    }

    /// As [`Self::create`], with a comment line at the top of a new `data.yaml`.
    pub fn create_with_header(
        root: &Path,
        classes: &[String],
        header: &str,
    ) -> Result<Self, WriteError> {
        if classes.is_empty() {
            return Err(WriteError::NoClasses);
        }
        for sub in ["images", "labels"] {
            let dir = root.join(sub);
            std::fs::create_dir_all(&dir).map_err(|source| WriteError::Io { path: dir, source })?;
        }
        let yaml = root.join("data.yaml");
        if yaml.is_file() {
            let info = read_data_yaml(&yaml).map_err(|e| WriteError::DataYaml {
                path: yaml.clone(),
                reason: e.to_string(),
            })?;
            if info.names != classes {
                return Err(WriteError::ClassMismatch {
                    path: yaml,
                    existing: info.names,
                    wanted: classes.to_vec(),
                });
            }
        } else {
            write_atomic(&yaml, data_yaml_text(header, classes, None).as_bytes())?;
        }
        Ok(YoloWriter {
            root: root.to_path_buf(),
            classes: classes.to_vec(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn classes(&self) -> &[String] {
        &self.classes
    }

    pub fn image_path(&self, name: &str, ext: &str) -> PathBuf {
        self.root.join("images").join(format!("{name}.{ext}"))
    }

    pub fn label_path(&self, name: &str) -> PathBuf {
        self.root.join("labels").join(format!("{name}.txt"))
    }

    /// Writes the image, then the label file; returns the image path.
    pub fn add(
        &self,
        name: &str,
        image: &ImageData<'_>,
        boxes: &[LabelBox],
    ) -> Result<PathBuf, WriteError> {
        let path = self.write_image(name, image)?;
        self.write_labels(name, boxes)?;
        Ok(path)
    }

    /// Writes the image alone (atomically); returns its path.
    pub fn write_image(&self, name: &str, image: &ImageData<'_>) -> Result<PathBuf, WriteError> {
        check_name(name)?;
        match image {
            ImageData::Encoded { bytes, ext } => {
                let path = self.image_path(name, ext);
                write_atomic(&path, bytes)?;
                Ok(path)
            }
            ImageData::Rgb { image, quality } => {
                let path = self.image_path(name, "jpg");
                let bytes = encode_jpeg(image, *quality).map_err(|e| WriteError::Encode {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
                write_atomic(&path, &bytes)?;
                Ok(path)
            }
        }
    }

    /// Writes `labels/NAME.txt` (atomically); returns its path.
    pub fn write_labels(&self, name: &str, boxes: &[LabelBox]) -> Result<PathBuf, WriteError> {
        check_name(name)?;
        let path = self.label_path(name);
        write_atomic(&path, format_labels(boxes).as_bytes())?;
        Ok(path)
    }
}

fn check_name(name: &str) -> Result<(), WriteError> {
    if name.is_empty() || name.starts_with('.') || name.contains(['/', '\\', '\0']) {
        return Err(WriteError::BadName(name.to_string()));
    }
    Ok(())
}

/// One `class cx cy w h` line per box, 6 decimals, as Ultralytics writes them.
/// The bytes of `image` as a JPEG at `quality`, as datasets save frames.
pub fn encode_jpeg(image: &RgbImage, quality: u8) -> Result<Vec<u8>, image::ImageError> {
    let mut bytes = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, quality).encode_image(image)?;
    Ok(bytes)
}

pub fn format_labels(boxes: &[LabelBox]) -> String {
    let mut out = String::new();
    for b in boxes {
        out.push_str(&format!(
            "{} {:.6} {:.6} {:.6} {:.6}\n",
            b.class_id, b.cx, b.cy, b.w, b.h
        ));
    }
    out
}

/// A box from pixel corners, clipped to the image and normalised.
pub fn label_box_from_xyxy(class_id: usize, xyxy: [f32; 4], width: u32, height: u32) -> LabelBox {
    let (w, h) = (width.max(1) as f32, height.max(1) as f32);
    let x1 = xyxy[0].min(xyxy[2]).clamp(0.0, w);
    let x2 = xyxy[0].max(xyxy[2]).clamp(0.0, w);
    let y1 = xyxy[1].min(xyxy[3]).clamp(0.0, h);
    let y2 = xyxy[1].max(xyxy[3]).clamp(0.0, h);
    LabelBox {
        class_id,
        cx: (x1 + x2) / 2.0 / w,
        cy: (y1 + y2) / 2.0 / h,
        w: (x2 - x1) / w,
        h: (y2 - y1) / h,
    }
}

/// `data.yaml` text: `path: .`, the splits (`None`: train and val both `images`) and the names.
pub fn data_yaml_text(header: &str, classes: &[String], splits: Option<&[(&str, &str)]>) -> String {
    let mut yaml = String::new();
    for line in header.lines() {
        yaml.push_str(&format!("# {line}\n"));
    }
    yaml.push_str("path: .\n");
    match splits {
        None => yaml.push_str("train: images\nval: images\n"),
        Some(list) => {
            for (split, dir) in list {
                yaml.push_str(&format!("{split}: {dir}\n"));
            }
        }
    }
    yaml.push_str(&format!("nc: {}\nnames:\n", classes.len()));
    for (i, c) in classes.iter().enumerate() {
        yaml.push_str(&format!("  {i}: {}\n", yaml_scalar(c)));
    }
    yaml
}

/// A class name as a YAML scalar: quoted when plain style would change its meaning.
fn yaml_scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | '.'))
        && !s.starts_with([' ', '-', '.'])
        && !s.ends_with(' ')
        && s.parse::<f64>().is_err()
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "null" | "on" | "off" | "~"
        );
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

/// Writes `bytes` to a temporary file beside `path`, flushes it and renames it into place
/// (creating the folder first).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let io = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    crate::atomic_file::write(path, bytes).map_err(io)
}

/// Letters, digits, `-`, `_` and `.` kept; anything else becomes `_`.
pub fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() { "source".into() } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::yolo::{parse_labels, read_data_yaml};

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn writes_the_layout_and_round_trips_labels() {
        let dir = tempfile::tempdir().expect("temp");
        let classes = names(&["trunk", "log_icon", "yes", "a'b"]);
        let w = YoloWriter::create(dir.path(), &classes).expect("create");
        let img = RgbImage::new(8, 4);
        let boxes = [label_box_from_xyxy(1, [2.0, 1.0, 6.0, 3.0], 8, 4)];
        let path = w
            .add(
                "f_000001",
                &ImageData::Rgb {
                    image: &img,
                    quality: 90,
                },
                &boxes,
            )
            .expect("add");
        assert!(path.is_file());
        let text = std::fs::read_to_string(w.label_path("f_000001")).expect("label");
        assert_eq!(text, "1 0.500000 0.500000 0.500000 0.500000\n");
        assert_eq!(parse_labels(&text, 4).expect("parse"), boxes);
        assert_eq!(
            read_data_yaml(&dir.path().join("data.yaml"))
                .expect("yaml")
                .names,
            classes
        );
        // No temporary file is left behind.
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("labels"))
            .expect("ls")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".partial"))
            .collect();
        assert!(leftovers.is_empty());
        // Re-opening with the same classes works; with others it names both lists.
        YoloWriter::create(dir.path(), &classes).expect("reopen");
        let err = YoloWriter::create(dir.path(), &names(&["x"])).unwrap_err();
        assert!(matches!(err, WriteError::ClassMismatch { .. }), "{err}");
        assert!(w.write_labels("../x", &[]).is_err());
    }

    #[test]
    fn boxes_are_clipped_and_normalised() {
        let b = label_box_from_xyxy(0, [-10.0, 50.0, 50.0, 150.0], 100, 100);
        assert_eq!((b.cx, b.cy, b.w, b.h), (0.25, 0.75, 0.5, 0.5));
    }
}
