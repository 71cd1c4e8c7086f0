//! Reading detection datasets in the Ultralytics YOLO layout.
//!
//! Accepted forms of a dataset path:
//! - a folder with `data.yaml` (split folders from its `train`/`val`/`test` keys),
//! - a folder with `<split>/images` and `<split>/labels` (no yaml),
//! - a split folder itself, holding `images/` and `labels/`.
//!
//! Label files hold one `class cx cy w h` line per box, normalised to [0, 1]; an image without a
//! label file has no boxes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{0} does not exist")]
    Missing(PathBuf),
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {reason}")]
    Label {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{path}: {reason}")]
    Yaml { path: PathBuf, reason: String },
    #[error("no split `{split}` in {root} (looked for {})", .tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    NoSplit {
        root: PathBuf,
        split: String,
        tried: Vec<PathBuf>,
    },
    #[error("{0} holds no images (.jpg, .jpeg, .png)")]
    Empty(PathBuf),
}

/// One ground-truth box, normalised `cx, cy, w, h`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelBox {
    pub class_id: usize,
    pub cx: f32,
    pub cy: f32,
    pub w: f32,
    pub h: f32,
}

impl LabelBox {
    /// `[x1, y1, x2, y2]` in pixels of an image of this size.
    pub fn to_xyxy(&self, width: u32, height: u32) -> [f32; 4] {
        let (w, h) = (width as f32, height as f32);
        [
            (self.cx - self.w / 2.0) * w,
            (self.cy - self.h / 2.0) * h,
            (self.cx + self.w / 2.0) * w,
            (self.cy + self.h / 2.0) * h,
        ]
    }
}

/// An image and its label file (which may not exist).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub image: PathBuf,
    pub label: PathBuf,
}

/// A split: its images and, when the dataset has a yaml, its class names.
#[derive(Debug, Clone)]
pub struct Split {
    pub name: String,
    pub images_dir: PathBuf,
    pub samples: Vec<Sample>,
    pub class_names: Option<Vec<String>>,
}

const IMAGE_EXTENSIONS: [&str; 3] = ["jpg", "jpeg", "png"];

/// Finds the split `split` of the dataset at `root` (see the module docs for accepted layouts).
pub fn open_split(root: &Path, split: &str) -> Result<Split, DatasetError> {
    if !root.exists() {
        return Err(DatasetError::Missing(root.to_path_buf()));
    }
    let yaml = root.join("data.yaml");
    let (dirs, class_names) = if yaml.is_file() {
        let info = read_data_yaml(&yaml)?;
        let dirs = info
            .splits
            .get(split)
            .cloned()
            .ok_or_else(|| DatasetError::NoSplit {
                root: root.to_path_buf(),
                split: split.to_string(),
                tried: vec![yaml.clone()],
            })?;
        (dirs, Some(info.names))
    } else {
        let candidates = [root.join(split).join("images"), root.join("images")];
        let found = candidates.iter().find(|p| p.is_dir()).cloned();
        (
            vec![found.ok_or_else(|| DatasetError::NoSplit {
                root: root.to_path_buf(),
                split: split.to_string(),
                tried: candidates.to_vec(),
            })?],
            None,
        )
    };
    let mut samples = Vec::new();
    for dir in &dirs {
        samples.extend(list_samples(dir)?);
    }
    let images_dir = dirs.into_iter().next().unwrap_or_default();
    Ok(Split {
        name: split.to_string(),
        images_dir,
        samples,
        class_names,
    })
}

/// Images of a folder (sorted) with their label paths (`.../images/x.jpg` -> `.../labels/x.txt`).
pub fn list_samples(images_dir: &Path) -> Result<Vec<Sample>, DatasetError> {
    let entries = std::fs::read_dir(images_dir).map_err(|source| DatasetError::Io {
        path: images_dir.to_path_buf(),
        source,
    })?;
    let mut images: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        })
        .collect();
    images.sort();
    if images.is_empty() {
        return Err(DatasetError::Empty(images_dir.to_path_buf()));
    }
    Ok(images
        .into_iter()
        .map(|image| {
            let label = label_path_for(&image);
            Sample { image, label }
        })
        .collect())
}

/// Ultralytics' rule: the last `images` path component becomes `labels`, extension `.txt`.
pub fn label_path_for(image: &Path) -> PathBuf {
    let mut parts: Vec<std::ffi::OsString> =
        image.iter().map(|c| c.to_os_string()).collect::<Vec<_>>();
    if let Some(pos) = parts.iter().rposition(|c| c == "images") {
        parts[pos] = "labels".into();
    }
    let mut path: PathBuf = parts.iter().collect();
    path.set_extension("txt");
    path
}

/// Reads a label file; a missing file means no boxes.
pub fn read_labels(path: &Path, classes: usize) -> Result<Vec<LabelBox>, DatasetError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(DatasetError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    parse_labels(&text, classes).map_err(|(line, reason)| DatasetError::Label {
        path: path.to_path_buf(),
        line,
        reason,
    })
}

/// Parses label text; errors carry the 1-based line.
pub fn parse_labels(text: &str, classes: usize) -> Result<Vec<LabelBox>, (usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        if fields.len() != 5 {
            return Err((
                i + 1,
                format!(
                    "expected `class cx cy w h`, got {} fields (segments and keypoints are not supported)",
                    fields.len()
                ),
            ));
        }
        let class_id: usize = fields[0]
            .parse()
            .map_err(|_| (i + 1, format!("class `{}` is not an integer", fields[0])))?;
        if class_id >= classes {
            return Err((
                i + 1,
                format!("class {class_id} is out of range (the model has {classes} classes)"),
            ));
        }
        let mut v = [0f32; 4];
        for (k, f) in fields[1..].iter().enumerate() {
            v[k] = f
                .parse()
                .ok()
                .filter(|x: &f32| x.is_finite())
                .ok_or_else(|| (i + 1, format!("`{f}` is not a number")))?;
        }
        out.push(LabelBox {
            class_id,
            cx: v[0],
            cy: v[1],
            w: v[2],
            h: v[3],
        });
    }
    Ok(out)
}

/// The parts of a `data.yaml` we use.
#[derive(Debug, Clone, PartialEq)]
pub struct DataYaml {
    pub names: Vec<String>,
    /// Split name -> its images folders (Ultralytics takes one or a list).
    pub splits: BTreeMap<String, Vec<PathBuf>>,
}

#[derive(serde::Deserialize)]
struct RawDataYaml {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    train: Option<RawFolders>,
    #[serde(default)]
    val: Option<RawFolders>,
    #[serde(default)]
    test: Option<RawFolders>,
    names: RawNames,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum RawFolders {
    One(String),
    Many(Vec<String>),
}

impl RawFolders {
    fn into_vec(self) -> Vec<String> {
        match self {
            RawFolders::One(s) => vec![s],
            RawFolders::Many(v) => v,
        }
    }
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum RawNames {
    Map(BTreeMap<usize, String>),
    List(Vec<String>),
}

/// Reads an Ultralytics `data.yaml`: `path`, `train`/`val`/`test` (one folder each) and `names`
/// (a mapping `0: trunk` or a list). A relative `path` is resolved against the yaml's folder
/// (Ultralytics resolves it against the working directory, which surprises people).
pub fn read_data_yaml(path: &Path) -> Result<DataYaml, DatasetError> {
    let text = std::fs::read_to_string(path).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let bad = |reason: String| DatasetError::Yaml {
        path: path.to_path_buf(),
        reason,
    };
    let raw: RawDataYaml = serde_yaml_ng::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let names = match raw.names {
        RawNames::List(list) => list,
        RawNames::Map(map) => {
            let count = map.len();
            if map.keys().copied().ne(0..count) {
                return Err(bad(format!("names must be ids 0..{count} without gaps")));
            }
            map.into_values().collect()
        }
    };
    if names.is_empty() {
        return Err(bad("`names` is empty".into()));
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let root = match raw.path.as_deref() {
        Some(p) if !p.is_empty() => base.join(p),
        _ => base.to_path_buf(),
    };
    let splits = [("train", raw.train), ("val", raw.val), ("test", raw.test)]
        .into_iter()
        .filter_map(|(k, v)| {
            // Collecting components drops the `.` of `path: .`.
            let dirs: Vec<PathBuf> = v?
                .into_vec()
                .into_iter()
                .filter(|v| !v.is_empty())
                .map(|v| root.join(v).components().collect())
                .collect();
            (!dirs.is_empty()).then(|| (k.to_string(), dirs))
        })
        .collect();
    Ok(DataYaml { names, splits })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_parse_and_errors_name_the_line() {
        let boxes = parse_labels("0 0.5 0.5 0.2 0.4\n\n16 0.1 0.2 0.05 0.05\n", 23).expect("ok");
        assert_eq!(boxes.len(), 2);
        assert_eq!(boxes[1].class_id, 16);
        assert_eq!(parse_labels("0 0.5 0.5 0.2\n", 23).unwrap_err().0, 1);
        assert_eq!(
            parse_labels("0 1 1 1 1\n30 0.5 0.5 0.2 0.2\n", 23)
                .unwrap_err()
                .0,
            2
        );
        assert_eq!(parse_labels("x 0.5 0.5 0.2 0.2\n", 23).unwrap_err().0, 1);
        assert_eq!(parse_labels("0 0.5 nan 0.2 0.2\n", 23).unwrap_err().0, 1);
    }

    #[test]
    fn boxes_convert_to_pixels() {
        let b = LabelBox {
            class_id: 0,
            cx: 0.5,
            cy: 0.5,
            w: 0.5,
            h: 0.25,
        };
        assert_eq!(b.to_xyxy(200, 100), [50.0, 37.5, 150.0, 62.5]);
    }

    #[test]
    fn label_path_replaces_the_last_images_component() {
        assert_eq!(
            label_path_for(Path::new("/d/images/train/images/a.jpg")),
            PathBuf::from("/d/images/train/labels/a.txt")
        );
    }

    #[test]
    fn data_yaml_block_and_flow_names_and_relative_path() {
        let dir = tempfile::tempdir().expect("temp");
        let yaml = dir.path().join("data.yaml");
        std::fs::write(
            &yaml,
            "# comment\npath: .\ntrain: train/images\nval: val/images\ntest: test/images   # HELD OUT\nnc: 2\nnames:\n  0: trunk\n  1: 'log_icon'\n",
        )
        .expect("write");
        let info = read_data_yaml(&yaml).expect("read");
        assert_eq!(info.names, vec!["trunk", "log_icon"]);
        assert_eq!(info.splits["test"], vec![dir.path().join("test/images")]);
        std::fs::write(&yaml, "train: a\nnames: [x, 'y']\n").expect("write");
        assert_eq!(read_data_yaml(&yaml).expect("read").names, vec!["x", "y"]);
        std::fs::write(&yaml, "names:\n  0: a\n  2: c\n").expect("write");
        assert!(read_data_yaml(&yaml).is_err());
    }

    #[test]
    fn a_split_can_list_several_folders_and_opens_them_all() {
        let dir = tempfile::tempdir().expect("temp");
        for (folder, image) in [("a", "1.jpg"), ("b", "2.jpg")] {
            let images = dir.path().join(folder).join("images");
            std::fs::create_dir_all(&images).expect("mkdir");
            std::fs::write(images.join(image), b"not decoded here").expect("write");
        }
        std::fs::write(
            dir.path().join("data.yaml"),
            "train: [a/images, b/images]\nval: a/images\nnames: [x]\n",
        )
        .expect("write");
        let info = read_data_yaml(&dir.path().join("data.yaml")).expect("read");
        assert_eq!(
            info.splits["train"],
            vec![dir.path().join("a/images"), dir.path().join("b/images")]
        );
        let train = open_split(dir.path(), "train").expect("split");
        let names: Vec<_> = train
            .samples
            .iter()
            .map(|s| {
                s.image
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .collect();
        assert_eq!(names, vec![Some("1.jpg".into()), Some("2.jpg".into())]);
    }
}
