//! Decoding the two output forms of Ultralytics YOLO exports into boxes in input pixels.
//!
//! - raw `[1, 4+nc, N]` (v8/v11 default export): per anchor `cx, cy, w, h` then nc class scores;
//!   confidence filter, best class per anchor (or every class above the threshold with
//!   `multi_label`, as Ultralytics' `val` does), class-wise NMS (Ultralytics'
//!   `non_max_suppression` with `agnostic=False`).
//! - end-to-end `[1, K, 6]` (NMS inside the model): `x1, y1, x2, y2, conf, class`; confidence
//!   filter only.

/// One box in the coordinates of the tensor it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawBox {
    pub class_id: usize,
    pub conf: f32,
    /// `[x1, y1, x2, y2]`.
    pub xyxy: [f32; 4],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputForm {
    /// `[1, 4+nc, N]`; `anchors` is `None` for a dynamic-size export, whose N depends on the
    /// input size and is read from the output's length.
    Raw { anchors: Option<usize> },
    /// `[1, K, 6]`.
    EndToEnd { rows: usize },
}

impl OutputForm {
    /// The form as a model's info prints it.
    pub fn describe(&self) -> String {
        match self {
            OutputForm::Raw {
                anchors: Some(anchors),
            } => format!("raw [1, 4+nc, {anchors}]"),
            OutputForm::Raw { anchors: None } => "raw [1, 4+nc, N]".to_string(),
            OutputForm::EndToEnd { rows } => format!("end-to-end [1, {rows}, 6]"),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DecodeError {
    #[error(
        "model output shape {shape:?} is neither raw [1, {raw_channels}, N] nor end-to-end [1, K, 6] for {classes} classes"
    )]
    UnknownShape {
        shape: Vec<i64>,
        classes: usize,
        raw_channels: usize,
    },
    #[error("model output has {got} values, its shape says {expected}")]
    Length { got: usize, expected: usize },
}

/// Thresholds applied after inference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DetectOptions {
    pub confidence: f32,
    pub iou: f32,
    pub max_detections: usize,
    /// Keep every class above the threshold per anchor, not only the best (evaluation).
    pub multi_label: bool,
    /// Clip boxes to the frame (as `predict` does); evaluation matches unclipped boxes, as
    /// Ultralytics' `val` does.
    pub clip_boxes: bool,
}

/// Ultralytics offsets boxes by `class * 7680` so one NMS pass never suppresses across classes.
const CLASS_OFFSET: f32 = 7680.0;
/// Ultralytics keeps at most this many candidates before NMS.
const MAX_NMS: usize = 30_000;

impl OutputForm {
    /// Recognises the form from the output shape (`end2end` from metadata breaks the tie for a
    /// 2-class model whose raw output would also have 6 channels).
    pub fn from_shape(
        shape: &[i64],
        classes: usize,
        end2end_hint: Option<bool>,
    ) -> Result<Self, DecodeError> {
        let err = || DecodeError::UnknownShape {
            shape: shape.to_vec(),
            classes,
            raw_channels: 4 + classes,
        };
        let [batch, a, b] = shape else {
            return Err(err());
        };
        if *batch != 1 && *batch != -1 {
            return Err(err());
        }
        // -1: a dynamic axis (an export with `dynamic=True` names it `anchors`).
        let raw = *a == (4 + classes) as i64 && (*b > 0 || *b == -1);
        let e2e = *b == 6 && *a > 0;
        match (raw, e2e, end2end_hint) {
            (true, true, Some(true)) | (false, true, _) => {
                Ok(OutputForm::EndToEnd { rows: *a as usize })
            }
            (true, _, _) => Ok(OutputForm::Raw {
                anchors: (*b > 0).then_some(*b as usize),
            }),
            _ => Err(err()),
        }
    }
}

/// Decodes an output tensor (row-major data of the shape `form` was made from).
pub fn decode(
    form: OutputForm,
    data: &[f32],
    classes: usize,
    opts: &DetectOptions,
) -> Result<Vec<RawBox>, DecodeError> {
    match form {
        OutputForm::Raw { anchors } => {
            let channels = 4 + classes;
            let anchors = anchors.unwrap_or(data.len() / channels);
            let expected = channels * anchors;
            if data.len() != expected {
                return Err(DecodeError::Length {
                    got: data.len(),
                    expected,
                });
            }
            let candidates = raw_candidates(data, classes, anchors, opts);
            Ok(nms_classwise(candidates, opts.iou, opts.max_detections))
        }
        OutputForm::EndToEnd { rows } => {
            if data.len() != rows * 6 {
                return Err(DecodeError::Length {
                    got: data.len(),
                    expected: rows * 6,
                });
            }
            Ok(data
                .chunks_exact(6)
                .filter(|r| r[4] > opts.confidence && r[5] >= 0.0 && (r[5] as usize) < classes)
                .take(opts.max_detections)
                .map(|r| RawBox {
                    class_id: r[5] as usize,
                    conf: r[4],
                    xyxy: [r[0], r[1], r[2], r[3]],
                })
                .collect())
        }
    }
}

/// Boxes above the threshold: the best class per anchor, or every class with `multi_label`.
fn raw_candidates(
    data: &[f32],
    classes: usize,
    anchors: usize,
    opts: &DetectOptions,
) -> Vec<RawBox> {
    let channel = |c: usize, i: usize| data[c * anchors + i];
    let mut out = Vec::new();
    for i in 0..anchors {
        let (cx, cy, w, h) = (channel(0, i), channel(1, i), channel(2, i), channel(3, i));
        let xyxy = [cx - w / 2.0, cy - h / 2.0, cx + w / 2.0, cy + h / 2.0];
        if opts.multi_label {
            for c in 0..classes {
                let s = channel(4 + c, i);
                if s > opts.confidence {
                    out.push(RawBox {
                        class_id: c,
                        conf: s,
                        xyxy,
                    });
                }
            }
            continue;
        }
        let mut best = (0usize, f32::NEG_INFINITY);
        for c in 0..classes {
            let s = channel(4 + c, i);
            if s > best.1 {
                best = (c, s);
            }
        }
        if best.1 > opts.confidence {
            out.push(RawBox {
                class_id: best.0,
                conf: best.1,
                xyxy,
            });
        }
    }
    out
}

/// Greedy NMS per class (torchvision semantics: a box is dropped when its IoU with a kept box of
/// the same class is greater than the threshold), highest confidence first.
pub fn nms_classwise(mut boxes: Vec<RawBox>, iou_threshold: f32, max_keep: usize) -> Vec<RawBox> {
    boxes.sort_by(|a, b| b.conf.total_cmp(&a.conf));
    boxes.truncate(MAX_NMS);
    let offset = |b: &RawBox| {
        let o = b.class_id as f32 * CLASS_OFFSET;
        [b.xyxy[0] + o, b.xyxy[1] + o, b.xyxy[2] + o, b.xyxy[3] + o]
    };
    let mut kept: Vec<RawBox> = Vec::new();
    let mut kept_shifted: Vec<[f32; 4]> = Vec::new();
    for b in boxes {
        if kept.len() >= max_keep {
            break;
        }
        let shifted = offset(&b);
        if kept_shifted
            .iter()
            .all(|k| iou(k, &shifted) <= iou_threshold)
        {
            kept.push(b);
            kept_shifted.push(shifted);
        }
    }
    kept
}

/// Intersection over union of two xyxy boxes.
pub fn iou(a: &[f32; 4], b: &[f32; 4]) -> f32 {
    let iw = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
    let ih = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
    let inter = iw * ih;
    let area = |r: &[f32; 4]| (r[2] - r[0]).max(0.0) * (r[3] - r[1]).max(0.0);
    let union = area(a) + area(b) - inter;
    if union <= 0.0 { 0.0 } else { inter / union }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a raw `[4+nc, N]` tensor from per-anchor (cx, cy, w, h, scores).
    fn raw_tensor(anchors: &[([f32; 4], Vec<f32>)], classes: usize) -> Vec<f32> {
        let n = anchors.len();
        let mut data = vec![0.0; (4 + classes) * n];
        for (i, (b, scores)) in anchors.iter().enumerate() {
            for k in 0..4 {
                data[k * n + i] = b[k];
            }
            for (c, s) in scores.iter().enumerate() {
                data[(4 + c) * n + i] = *s;
            }
        }
        data
    }

    fn opts(confidence: f32, multi_label: bool) -> DetectOptions {
        DetectOptions {
            confidence,
            iou: 0.45,
            max_detections: 300,
            multi_label,
            clip_boxes: true,
        }
    }

    #[test]
    fn shapes_are_recognised() {
        assert_eq!(
            OutputForm::from_shape(&[1, 27, 2100], 23, None),
            Ok(OutputForm::Raw {
                anchors: Some(2100)
            })
        );
        assert_eq!(
            OutputForm::from_shape(&[1, 300, 6], 23, None),
            Ok(OutputForm::EndToEnd { rows: 300 })
        );
        // 2 classes: raw has 6 channels too; the metadata decides.
        assert_eq!(
            OutputForm::from_shape(&[1, 6, 6], 2, Some(true)),
            Ok(OutputForm::EndToEnd { rows: 6 })
        );
        assert_eq!(
            OutputForm::from_shape(&[1, 6, 6], 2, None),
            Ok(OutputForm::Raw { anchors: Some(6) })
        );
        // A dynamic-size export: batch and anchors are symbolic (-1).
        assert_eq!(
            OutputForm::from_shape(&[-1, 27, -1], 23, None),
            Ok(OutputForm::Raw { anchors: None })
        );
        assert!(OutputForm::from_shape(&[1, 27, -2], 23, None).is_err());
        assert!(OutputForm::from_shape(&[1, 10, 2100], 23, None).is_err());
        assert!(OutputForm::from_shape(&[1, 2100], 23, None).is_err());
    }

    #[test]
    fn raw_decoding_picks_best_class_and_suppresses_per_class() {
        let classes = 3;
        let data = raw_tensor(
            &[
                // Two overlapping boxes of class 0: the weaker one goes.
                ([50.0, 50.0, 20.0, 20.0], vec![0.9, 0.1, 0.0]),
                ([51.0, 50.0, 20.0, 20.0], vec![0.8, 0.0, 0.0]),
                // Same place, but class 1: kept (class-wise NMS).
                ([50.0, 50.0, 20.0, 20.0], vec![0.1, 0.7, 0.0]),
                // Below the threshold.
                ([10.0, 10.0, 5.0, 5.0], vec![0.2, 0.0, 0.1]),
                // Exactly at the threshold: Ultralytics keeps only scores strictly above it.
                ([90.0, 90.0, 5.0, 5.0], vec![0.0, 0.0, 0.25]),
            ],
            classes,
        );
        let out = decode(
            OutputForm::Raw { anchors: Some(5) },
            &data,
            classes,
            &opts(0.25, false),
        )
        .expect("decode");
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].class_id, 0);
        assert_eq!(out[0].xyxy, [40.0, 40.0, 60.0, 60.0]);
        assert_eq!(out[1].class_id, 1);
        assert!((out[1].conf - 0.7).abs() < 1e-6);
        // A dynamic-size export reads the anchor count from the output's length.
        let dynamic = decode(
            OutputForm::Raw { anchors: None },
            &data,
            classes,
            &opts(0.25, false),
        )
        .expect("decode");
        assert_eq!(dynamic, out);
        let err = decode(
            OutputForm::Raw { anchors: None },
            &data[..data.len() - 1],
            classes,
            &opts(0.25, false),
        )
        .expect_err("a length that is not a multiple of 4+nc");
        assert!(matches!(err, DecodeError::Length { .. }), "{err}");
    }

    #[test]
    fn multi_label_keeps_every_class_above_the_threshold() {
        let data = raw_tensor(&[([50.0, 50.0, 20.0, 20.0], vec![0.6, 0.3, 0.1])], 3);
        let single = decode(
            OutputForm::Raw { anchors: Some(1) },
            &data,
            3,
            &opts(0.2, false),
        )
        .expect("decode");
        assert_eq!(single.len(), 1);
        let multi = decode(
            OutputForm::Raw { anchors: Some(1) },
            &data,
            3,
            &opts(0.2, true),
        )
        .expect("decode");
        assert_eq!(
            multi.iter().map(|b| b.class_id).collect::<Vec<_>>(),
            vec![0, 1],
            "same box, two classes; NMS is per class so neither suppresses the other"
        );
    }

    #[test]
    fn nms_keeps_boxes_at_exactly_the_threshold_and_caps_count() {
        // IoU of these two is exactly 1/3.
        let a = RawBox {
            class_id: 0,
            conf: 0.9,
            xyxy: [0.0, 0.0, 2.0, 1.0],
        };
        let b = RawBox {
            class_id: 0,
            conf: 0.8,
            xyxy: [1.0, 0.0, 3.0, 1.0],
        };
        assert!((iou(&a.xyxy, &b.xyxy) - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!(nms_classwise(vec![a, b], 1.0 / 3.0, 10).len(), 2);
        assert_eq!(nms_classwise(vec![a, b], 0.3, 10).len(), 1);
        assert_eq!(nms_classwise(vec![b, a], 1.0, 1), vec![a]);
    }

    #[test]
    fn end_to_end_rows_are_filtered_by_confidence_and_class_range() {
        let data = vec![
            1.0, 2.0, 3.0, 4.0, 0.9, 2.0, // kept
            5.0, 6.0, 7.0, 8.0, 0.1, 1.0, // low confidence
            0.0, 0.0, 1.0, 1.0, 0.8, 99.0, // class id out of range
        ];
        let out = decode(
            OutputForm::EndToEnd { rows: 3 },
            &data,
            23,
            &opts(0.25, false),
        )
        .expect("decode");
        assert_eq!(
            out,
            vec![RawBox {
                class_id: 2,
                conf: 0.9,
                xyxy: [1.0, 2.0, 3.0, 4.0]
            }]
        );
    }

    #[test]
    fn wrong_length_is_an_error_not_a_panic() {
        assert!(
            decode(
                OutputForm::Raw { anchors: Some(10) },
                &[0.0; 5],
                2,
                &opts(0.25, false)
            )
            .is_err()
        );
        assert!(
            decode(
                OutputForm::EndToEnd { rows: 2 },
                &[0.0; 5],
                2,
                &opts(0.25, false)
            )
            .is_err()
        );
    }
}
