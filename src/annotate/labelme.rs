//! X-AnyLabeling / LabelMe JSON: one file beside each image, so a person opens the images folder
//! in X-AnyLabeling and corrects the boxes instead of drawing them.
//!
//! Written: X-AnyLabeling's form (rectangles as 4 corner points, clockwise from the top left, the
//! detector's confidence as `score`). Read: that form and LabelMe's (2 corner points); a box is the
//! bounding box of its points. Coordinates are image pixels, rounded to 2 decimals.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::dataset::writer::label_box_from_xyxy;
use crate::dataset::yolo::LabelBox;

/// The `version` written into new files (the X-AnyLabeling release whose format is followed).
pub const FORMAT_VERSION: &str = "2.4.4";

#[derive(Debug, thiserror::Error)]
pub enum LabelMeError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not JSON: {reason}")]
    Json { path: PathBuf, reason: String },
    #[error("{path}: field `{field}`: {reason}")]
    Field {
        path: PathBuf,
        field: String,
        reason: String,
    },
}

/// One rectangle in image pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Rectangle {
    pub label: String,
    /// The detector's confidence (absent when a person drew the box).
    pub score: Option<f32>,
    /// `[x1, y1, x2, y2]`, x1 <= x2, y1 <= y2.
    pub xyxy: [f32; 4],
}

/// The contents of one annotation file that matter here.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    pub image_path: String,
    pub width: u32,
    pub height: u32,
    pub shapes: Vec<Rectangle>,
}

fn round2(v: f32) -> f32 {
    (v * 100.0).round() / 100.0
}

impl Rectangle {
    /// A rectangle clipped to the image and rounded as it is written (2 decimals); `None` when
    /// nothing of it is inside the image.
    pub fn clipped(
        label: &str,
        score: Option<f32>,
        xyxy: [f32; 4],
        width: u32,
        height: u32,
    ) -> Option<Rectangle> {
        let (w, h) = (width as f32, height as f32);
        let x1 = round2(xyxy[0].min(xyxy[2]).clamp(0.0, w));
        let x2 = round2(xyxy[0].max(xyxy[2]).clamp(0.0, w));
        let y1 = round2(xyxy[1].min(xyxy[3]).clamp(0.0, h));
        let y2 = round2(xyxy[1].max(xyxy[3]).clamp(0.0, h));
        (x2 > x1 && y2 > y1).then(|| Rectangle {
            label: label.to_string(),
            score: score.map(|s| (s * 10_000.0).round() / 10_000.0),
            xyxy: [x1, y1, x2, y2],
        })
    }
}

impl Annotation {
    /// The JSON text X-AnyLabeling reads (pretty-printed).
    pub fn to_json(&self) -> String {
        let shapes: Vec<Value> = self
            .shapes
            .iter()
            .map(|s| {
                // Through f64 rounded to 2 decimals, so the JSON holds 60.12, not 60.119998931884766.
                let [x1, y1, x2, y2] = s.xyxy.map(|v| (f64::from(v) * 100.0).round() / 100.0);
                json!({
                    "label": s.label,
                    "score": s.score.map(|v| (f64::from(v) * 10_000.0).round() / 10_000.0),
                    "points": [[x1, y1], [x2, y1], [x2, y2], [x1, y2]],
                    "group_id": null,
                    "description": "",
                    "difficult": false,
                    "shape_type": "rectangle",
                    "flags": {},
                    "attributes": {},
                })
            })
            .collect();
        let doc = json!({
            "version": FORMAT_VERSION,
            "flags": {},
            "shapes": shapes,
            "imagePath": self.image_path,
            "imageData": null,
            "imageHeight": self.height,
            "imageWidth": self.width,
        });
        let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        text.push('\n');
        text
    }

    /// YOLO boxes for a class list; a label not in it is an error naming the shape.
    pub fn to_label_boxes(
        &self,
        classes: &[String],
        path: &Path,
    ) -> Result<Vec<LabelBox>, LabelMeError> {
        self.shapes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let class_id = classes.iter().position(|c| *c == s.label).ok_or_else(|| {
                    LabelMeError::Field {
                        path: path.to_path_buf(),
                        field: format!("shapes[{i}].label"),
                        reason: format!(
                            "\"{}\" is not a class of the dataset ({})",
                            s.label,
                            classes.join(", ")
                        ),
                    }
                })?;
                Ok(label_box_from_xyxy(
                    class_id,
                    s.xyxy,
                    self.width,
                    self.height,
                ))
            })
            .collect()
    }

    /// Reads an X-AnyLabeling or LabelMe file; errors name the file and the field.
    pub fn read(path: &Path) -> Result<Annotation, LabelMeError> {
        let text = std::fs::read_to_string(path).map_err(|source| LabelMeError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Annotation, LabelMeError> {
        let doc: Value = serde_json::from_str(text).map_err(|e| LabelMeError::Json {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let field = |field: &str, reason: String| LabelMeError::Field {
            path: path.to_path_buf(),
            field: field.to_string(),
            reason,
        };
        let dim = |key: &str| -> Result<u32, LabelMeError> {
            doc.get(key)
                .and_then(Value::as_u64)
                .and_then(|v| u32::try_from(v).ok())
                .filter(|v| *v > 0)
                .ok_or_else(|| field(key, "missing or not a positive integer".into()))
        };
        let width = dim("imageWidth")?;
        let height = dim("imageHeight")?;
        let image_path = doc
            .get("imagePath")
            .and_then(Value::as_str)
            .ok_or_else(|| field("imagePath", "missing or not a string".into()))?
            .to_string();
        let shapes_v = match doc.get("shapes") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a.clone(),
            Some(_) => return Err(field("shapes", "not a list".into())),
        };
        let shapes = shapes_v
            .iter()
            .enumerate()
            .map(|(i, s)| parse_shape(s, i, (width, height), &field))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Annotation {
            image_path,
            width,
            height,
            shapes,
        })
    }
}

/// Shape `i` of a LabelMe file: a labelled rectangle clipped to the image.
fn parse_shape(
    s: &Value,
    i: usize,
    (width, height): (u32, u32),
    field: &dyn Fn(&str, String) -> LabelMeError,
) -> Result<Rectangle, LabelMeError> {
    let at = |f: &str| format!("shapes[{i}].{f}");
    let label = s
        .get("label")
        .and_then(Value::as_str)
        .filter(|l| !l.trim().is_empty())
        .ok_or_else(|| field(&at("label"), "missing or empty".into()))?;
    let kind = s
        .get("shape_type")
        .and_then(Value::as_str)
        .unwrap_or("rectangle");
    if kind != "rectangle" {
        return Err(field(
            &at("shape_type"),
            format!("\"{kind}\" is not supported (the detector needs rectangles)"),
        ));
    }
    let points = s
        .get("points")
        .and_then(Value::as_array)
        .ok_or_else(|| field(&at("points"), "missing or not a list".into()))?;
    if points.len() != 2 && points.len() != 4 {
        return Err(field(
            &at("points"),
            format!("a rectangle has 2 or 4 points, not {}", points.len()),
        ));
    }
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for (k, p) in points.iter().enumerate() {
        let xy = p
            .as_array()
            .filter(|a| a.len() == 2)
            .and_then(|a| Some((a[0].as_f64()?, a[1].as_f64()?)))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .ok_or_else(|| {
                field(
                    &format!("shapes[{i}].points[{k}]"),
                    "not [x, y] numbers".into(),
                )
            })?;
        xs.push(xy.0 as f32);
        ys.push(xy.1 as f32);
    }
    let min = |v: &[f32]| v.iter().copied().fold(f32::INFINITY, f32::min);
    let max = |v: &[f32]| v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let score = s.get("score").and_then(Value::as_f64).map(|v| v as f32);
    Rectangle::clipped(
        label,
        score,
        [min(&xs), min(&ys), max(&xs), max(&ys)],
        width,
        height,
    )
    .ok_or_else(|| {
        field(
            &at("points"),
            "the rectangle has no area inside the image".into(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_x_anylabeling_and_reads_both_forms() {
        let ann = Annotation {
            image_path: "a.jpg".into(),
            width: 200,
            height: 100,
            shapes: vec![
                Rectangle::clipped(
                    "trunk",
                    Some(0.876_54),
                    [10.0, 20.0, 60.123, 80.0],
                    200,
                    100,
                )
                .expect("inside"),
            ],
        };
        let text = ann.to_json();
        let back = Annotation::parse(&text, Path::new("a.json")).expect("parse");
        assert_eq!(back, ann);
        assert_eq!(back.shapes[0].xyxy, [10.0, 20.0, 60.12, 80.0]);
        // LabelMe: two points, any corner order.
        let labelme = r#"{"version":"5.4.1","shapes":[{"label":"trunk","points":[[60.12,80],[10,20]],"shape_type":"rectangle"}],"imagePath":"a.jpg","imageHeight":100,"imageWidth":200}"#;
        let lm = Annotation::parse(labelme, Path::new("a.json")).expect("labelme");
        assert_eq!(lm.shapes[0].xyxy, ann.shapes[0].xyxy);
        let classes = vec!["log_icon".to_string(), "trunk".to_string()];
        let boxes = lm
            .to_label_boxes(&classes, Path::new("a.json"))
            .expect("boxes");
        assert_eq!(boxes[0].class_id, 1);
    }

    #[test]
    fn errors_name_the_field() {
        let p = Path::new("x.json");
        let bad = |t: &str| Annotation::parse(t, p).unwrap_err().to_string();
        assert!(bad("{").contains("x.json: not JSON"));
        assert!(bad(r#"{"imageWidth":10,"imagePath":"a"}"#).contains("`imageHeight`"));
        let e = bad(
            r#"{"imageWidth":10,"imageHeight":10,"imagePath":"a","shapes":[{"label":"t","points":[[1,1],[2,2]]},{"label":"t","points":[[1,1],[2,"x"]]}]}"#,
        );
        assert!(e.contains("`shapes[1].points[1]`"), "{e}");
        let e = bad(
            r#"{"imageWidth":10,"imageHeight":10,"imagePath":"a","shapes":[{"label":"t","shape_type":"polygon","points":[[1,1],[2,2],[3,1]]}]}"#,
        );
        assert!(e.contains("`shapes[0].shape_type`"), "{e}");
        let ann = Annotation::parse(
            r#"{"imageWidth":10,"imageHeight":10,"imagePath":"a","shapes":[{"label":"lava","points":[[1,1],[2,2]]}]}"#,
            p,
        )
        .expect("parse");
        let e = ann
            .to_label_boxes(&["trunk".into()], p)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`shapes[0].label`") && e.contains("\"lava\""),
            "{e}"
        );
    }
}
