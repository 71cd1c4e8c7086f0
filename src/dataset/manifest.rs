//! `DATASET/annotate.jsonl`: what `annotate` did, one JSON object per line, appended and flushed
//! after the files it describes are in place. Later lines about the same frame win. It lets a
//! run resume (frames already there are skipped), keeps near-duplicate checks across runs, records
//! each frame's split group, and detects labels a person corrected: the sha256 of what was written
//! is compared with the files on disk.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub const FILE_NAME: &str = "annotate.jsonl";

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read or write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {reason}")]
    Line {
        path: PathBuf,
        line: usize,
        reason: String,
    },
}

/// One line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// The start of a run: which detector pre-labelled.
    Run {
        model: String,
        model_sha256: String,
        confidence: f32,
        source: String,
    },
    /// A frame written to the dataset.
    Frame(FrameRecord),
    /// A frame skipped as a near-duplicate of `of` (a dataset name).
    Duplicate {
        key: String,
        of: String,
        distance: u32,
        dhash: String,
        scene: u32,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameRecord {
    pub key: String,
    /// Name in the dataset (`images/NAME.ext`, `labels/NAME.txt`, `images/NAME.json`).
    pub name: String,
    /// Image path relative to the dataset.
    pub image: String,
    pub source: String,
    /// Split group: `<source>/<scene>`; frames of one scene stay in one split.
    pub group: String,
    pub scene: u32,
    pub dhash: String,
    pub boxes: usize,
    pub label_sha256: String,
    pub json_sha256: String,
}

/// The folded manifest.
#[derive(Debug, Default, Clone)]
pub struct Manifest {
    pub frames: BTreeMap<String, FrameRecord>,
    /// Key -> (dhash, scene) of duplicates.
    pub duplicates: HashMap<String, (String, u32)>,
    /// Dataset name -> key.
    pub names: HashMap<String, String>,
}

impl Manifest {
    /// Reads `DATASET/annotate.jsonl` (none yet: empty). A last line cut off mid-write is
    /// ignored; any other bad line is an error naming it.
    pub fn load(dataset: &Path) -> Result<Manifest, ManifestError> {
        let path = dataset.join(FILE_NAME);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::default()),
            Err(source) => return Err(ManifestError::Io { path, source }),
        };
        let mut m = Manifest::default();
        let lines: Vec<&str> = text.lines().collect();
        let complete = text.ends_with('\n');
        for (i, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let record: Record = match serde_json::from_str(line) {
                Ok(r) => r,
                Err(_) if i + 1 == lines.len() && !complete => break,
                Err(e) => {
                    return Err(ManifestError::Line {
                        path,
                        line: i + 1,
                        reason: e.to_string(),
                    });
                }
            };
            m.apply(record);
        }
        Ok(m)
    }

    pub fn apply(&mut self, record: Record) {
        match record {
            Record::Run { .. } => {}
            Record::Frame(f) => {
                self.duplicates.remove(&f.key);
                self.names.insert(f.name.clone(), f.key.clone());
                self.frames.insert(f.key.clone(), f);
            }
            Record::Duplicate {
                key, dhash, scene, ..
            } => {
                if !self.frames.contains_key(&key) {
                    self.duplicates.insert(key, (dhash, scene));
                }
            }
        }
    }

    /// Frame records by dataset name.
    pub fn by_name(&self) -> HashMap<&str, &FrameRecord> {
        self.frames.values().map(|f| (f.name.as_str(), f)).collect()
    }
}

/// Appends records, each flushed to disk.
pub struct ManifestWriter {
    path: PathBuf,
    file: std::fs::File,
}

impl ManifestWriter {
    pub fn open(dataset: &Path) -> Result<ManifestWriter, ManifestError> {
        let path = dataset.join(FILE_NAME);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|source| ManifestError::Io {
                path: path.clone(),
                source,
            })?;
        Ok(ManifestWriter { path, file })
    }

    pub fn append(&mut self, record: &Record) -> Result<(), ManifestError> {
        let mut line = serde_json::to_string(record).unwrap_or_default();
        line.push('\n');
        let io = |source| ManifestError::Io {
            path: self.path.clone(),
            source,
        };
        self.file.write_all(line.as_bytes()).map_err(io)?;
        self.file.sync_data().map_err(io)
    }
}

/// Hex sha256 of a file; `None` when it does not exist.
pub fn file_sha256(path: &Path) -> Result<Option<String>, ManifestError> {
    use sha2::{Digest, Sha256};
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(format!("{:x}", Sha256::digest(&bytes)))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ManifestError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

pub fn text_sha256(text: &str) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(key: &str, name: &str) -> Record {
        Record::Frame(FrameRecord {
            key: key.into(),
            name: name.into(),
            image: format!("images/{name}.jpg"),
            source: "s".into(),
            group: "s/0000".into(),
            scene: 0,
            dhash: "0000000000000000".into(),
            boxes: 0,
            label_sha256: String::new(),
            json_sha256: String::new(),
        })
    }

    #[test]
    fn appends_folds_and_tolerates_a_cut_last_line() {
        let dir = tempfile::tempdir().expect("temp");
        let mut w = ManifestWriter::open(dir.path()).expect("open");
        w.append(&frame("k1", "a")).expect("append");
        w.append(&Record::Duplicate {
            key: "k2".into(),
            of: "a".into(),
            distance: 1,
            dhash: "0000000000000001".into(),
            scene: 0,
        })
        .expect("append");
        drop(w);
        let path = dir.path().join(FILE_NAME);
        let mut text = std::fs::read_to_string(&path).expect("read");
        text.push_str("{\"kind\":\"frame\",\"key\"");
        std::fs::write(&path, &text).expect("write");
        let m = Manifest::load(dir.path()).expect("load");
        assert_eq!(m.frames.len(), 1);
        assert!(m.duplicates.contains_key("k2"));
        assert_eq!(m.names["a"], "k1");
        // A bad line in the middle names its line.
        std::fs::write(&path, "{}\n{\"kind\":\"run\"}\n").expect("write");
        let err = Manifest::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("annotate.jsonl:1"), "{err}");
    }
}
