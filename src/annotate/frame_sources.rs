//! Where frames come from: an image folder (or one image), a video file (frames sampled by
//! `ffmpeg` every N seconds and/or on scene changes), or a recorded session folder
//! (`frames/NNNNNN.jpg` beside `session.jsonl`, see docs/sessions.md).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::AnnotateError;
use crate::dataset::writer::sanitize;

const IMAGE_EXTENSIONS: [&str; 3] = ["jpg", "jpeg", "png"];
const VIDEO_EXTENSIONS: [&str; 10] = [
    "mp4", "mkv", "webm", "mov", "avi", "flv", "m4v", "mpg", "mpeg", "ts",
];

/// How video frames are sampled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VideoSampling {
    /// A frame at least every this many seconds (0: only on scene changes).
    pub every_secs: f64,
    /// Also a frame when ffmpeg's scene-change score exceeds this (0..1; `None`: off).
    pub scene: Option<f64>,
}

impl VideoSampling {
    /// ffmpeg's `select` expression: the first frame, then every `every_secs`, or a scene change.
    pub fn select_expr(&self) -> String {
        let mut terms = vec!["eq(n,0)".to_string()];
        if self.every_secs > 0.0 {
            terms.push(format!("gte(t-prev_selected_t,{})", self.every_secs));
        }
        if let Some(s) = self.scene {
            terms.push(format!("gt(scene,{s})"));
        }
        terms.join("+")
    }

    fn describe(&self) -> String {
        match self.scene {
            Some(s) => format!("every={},scene={s}", self.every_secs),
            None => format!("every={}", self.every_secs),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceKind {
    Images,
    Video,
    Session,
}

/// One frame to label, in source order.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFrame {
    /// Identifies the frame across runs (resume): source path + frame.
    pub key: String,
    /// The file holding the frame (for videos: the extracted JPEG).
    pub path: PathBuf,
    /// Name stem inside the dataset, before de-duplication: `<source>_<frame>`.
    pub name: String,
}

/// A resolved source: its kind, its name (used in frame names and split groups) and its frames.
#[derive(Debug, Clone)]
pub struct Source {
    pub kind: SourceKind,
    pub name: String,
    pub frames: Vec<SourceFrame>,
    /// Extracted video frames to delete after a successful run.
    pub scratch: Option<PathBuf>,
}

fn has_ext(path: &Path, list: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| list.contains(&e.to_ascii_lowercase().as_str()))
}

fn list_images(dir: &Path) -> Result<Vec<PathBuf>, AnnotateError> {
    let entries = std::fs::read_dir(dir).map_err(|source| AnnotateError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut images: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && has_ext(p, &IMAGE_EXTENSIONS))
        .collect();
    images.sort();
    Ok(images)
}

fn canonical(path: &Path) -> Result<PathBuf, AnnotateError> {
    std::fs::canonicalize(path).map_err(|source| AnnotateError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Resolves SOURCE. Videos are extracted into `scratch_root/<name>-<sampling hash>/` (kept
/// until the run ends, so an interrupted run does not decode the video again).
pub fn open(
    source: &Path,
    sampling: &VideoSampling,
    scratch_root: &Path,
) -> Result<Source, AnnotateError> {
    if !source.exists() {
        return Err(AnnotateError::NoSource(source.to_path_buf()));
    }
    let canon = canonical(source)?;
    if source.is_dir() {
        return open_folder(source, &canon);
    }
    if has_ext(source, &IMAGE_EXTENSIONS) {
        let parent = canon.parent().map(stem).unwrap_or_default();
        let name = sanitize(&parent);
        return Ok(Source {
            kind: SourceKind::Images,
            frames: vec![SourceFrame {
                key: canon.display().to_string(),
                name: format!("{name}_{}", sanitize(&stem(source))),
                path: source.to_path_buf(),
            }],
            name,
            scratch: None,
        });
    }
    if !has_ext(source, &VIDEO_EXTENSIONS) {
        return Err(AnnotateError::UnknownSource(source.to_path_buf()));
    }
    open_video(source, &canon, sampling, scratch_root)
}

/// A folder of images, or a recorded session's frames.
fn open_folder(source: &Path, canon: &Path) -> Result<Source, AnnotateError> {
    let frames_dir = source.join("frames");
    let (kind, images) = if source.join("session.jsonl").is_file() && frames_dir.is_dir() {
        (SourceKind::Session, list_images(&frames_dir)?)
    } else {
        (SourceKind::Images, list_images(source)?)
    };
    if images.is_empty() {
        return Err(AnnotateError::EmptySource(source.to_path_buf()));
    }
    let name = sanitize(&stem(canon));
    let frames = images
        .into_iter()
        .map(|p| SourceFrame {
            key: canonical(&p)
                .unwrap_or_else(|_| p.clone())
                .display()
                .to_string(),
            name: format!("{name}_{}", sanitize(&stem(&p))),
            path: p,
        })
        .collect();
    Ok(Source {
        kind,
        name,
        frames,
        scratch: None,
    })
}

/// A video's sampled frames, extracted once per sampling into the scratch folder.
fn open_video(
    source: &Path,
    canon: &Path,
    sampling: &VideoSampling,
    scratch_root: &Path,
) -> Result<Source, AnnotateError> {
    let name = sanitize(&stem(source));
    let tag = {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(format!("{}|{}", canon.display(), sampling.describe()));
        format!("{:x}", digest)[..12].to_string()
    };
    let scratch = scratch_root.join(format!("{name}-{tag}"));
    let done = scratch.join(".done");
    if !done.is_file() {
        extract_video(source, sampling, &scratch)?;
        std::fs::write(&done, sampling.describe()).map_err(|source| AnnotateError::Io {
            path: done.clone(),
            source,
        })?;
    }
    let images = list_images(&scratch)?;
    if images.is_empty() {
        return Err(AnnotateError::EmptySource(source.to_path_buf()));
    }
    let key_base = format!("{}@{}", canon.display(), sampling.describe());
    let frames = images
        .into_iter()
        .map(|p| {
            let s = stem(&p);
            SourceFrame {
                key: format!("{key_base}#{s}"),
                name: format!("{name}_{s}"),
                path: p,
            }
        })
        .collect();
    Ok(Source {
        kind: SourceKind::Video,
        name,
        frames,
        scratch: Some(scratch),
    })
}

/// Runs `ffmpeg` to write the sampled frames as `000001.jpg`, ... (JPEG quality 2 of 31).
fn extract_video(video: &Path, sampling: &VideoSampling, out: &Path) -> Result<(), AnnotateError> {
    if out.exists() {
        std::fs::remove_dir_all(out).map_err(|source| AnnotateError::Io {
            path: out.to_path_buf(),
            source,
        })?;
    }
    std::fs::create_dir_all(out).map_err(|source| AnnotateError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let filter = format!("select='{}'", sampling.select_expr());
    let output = Command::new("ffmpeg")
        .args(["-hide_banner", "-nostdin", "-loglevel", "error", "-i"])
        .arg(video)
        .args(["-vf", &filter, "-fps_mode", "vfr", "-q:v", "2"])
        .arg(out.join("%06d.jpg"))
        .output()
        .map_err(|e| AnnotateError::Ffmpeg {
            video: video.to_path_buf(),
            reason: if e.kind() == std::io::ErrorKind::NotFound {
                "ffmpeg is not installed (apt-get install ffmpeg, or scripts/setup.sh --with-x)"
                    .into()
            } else {
                format!("cannot run ffmpeg: {e}")
            },
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        return Err(AnnotateError::Ffmpeg {
            video: video.to_path_buf(),
            reason: format!(
                "ffmpeg failed ({}): {}",
                output.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised() {
        assert_eq!(sanitize("my clip (1)"), "my_clip__1_");
        assert_eq!(sanitize("..hidden"), "hidden");
        assert_eq!(sanitize(""), "source");
    }

    #[test]
    fn select_expression() {
        let s = VideoSampling {
            every_secs: 2.0,
            scene: Some(0.3),
        };
        assert_eq!(
            s.select_expr(),
            "eq(n,0)+gte(t-prev_selected_t,2)+gt(scene,0.3)"
        );
        let s = VideoSampling {
            every_secs: 0.0,
            scene: None,
        };
        assert_eq!(s.select_expr(), "eq(n,0)");
    }

    #[test]
    fn folders_and_sessions() {
        let dir = tempfile::tempdir().expect("temp");
        let session = dir.path().join("20261122-134507-log");
        std::fs::create_dir_all(session.join("frames")).expect("mkdir");
        std::fs::write(session.join("session.jsonl"), "").expect("write");
        image::RgbImage::new(4, 4)
            .save(session.join("frames/000001.jpg"))
            .expect("save");
        let sampling = VideoSampling {
            every_secs: 1.0,
            scene: None,
        };
        let s = open(&session, &sampling, dir.path()).expect("open");
        assert_eq!(s.kind, SourceKind::Session);
        assert_eq!(s.frames[0].name, "20261122-134507-log_000001");
        let err = open(&dir.path().join("nope"), &sampling, dir.path()).unwrap_err();
        assert!(err.to_string().contains("nope"));
        std::fs::write(dir.path().join("a.txt"), "x").expect("write");
        assert!(open(&dir.path().join("a.txt"), &sampling, dir.path()).is_err());
    }
}
