//! What a detector gets wrong on one image, box by box: the false positives and misses behind
//! its precision and recall, each with a reason, for `vistawise eval --errors`.
//!
//! The matching is the one precision and recall use (`metrics::Matching::claims` at IoU 0.5 among the
//! predictions kept at the chosen confidence), so the counts here add up to the report's. The
//! kinds follow the error types of TIDE (Bolya et al., ECCV 2020), simplified to what a reader
//! of one box needs: was something labelled there at all?

use serde::Serialize;

use super::metrics::{Matching, Scored, Truth};
use crate::perception::iou;

/// IoU at which a prediction counts as finding a truth (AP50, precision and recall).
pub const MATCH_IOU: f32 = 0.5;
/// Below this IoU with every same-class truth a false positive is on background, not a
/// poorly placed box of a labelled object (TIDE's background threshold).
pub const BACKGROUND_IOU: f32 = 0.1;

/// Why a kept prediction is not a true positive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FalsePositiveKind {
    /// It overlaps a same-class truth at IoU >= 0.5 that a more confident prediction claimed.
    Duplicate,
    /// It overlaps a truth of another class at IoU >= 0.5.
    WrongClass,
    /// Its best same-class truth overlaps it at 0.1 <= IoU < 0.5: a labelled object, boxed
    /// differently (part of it, or two objects as one).
    Localisation,
    /// Nothing of its class is labelled there: a spurious box, or an object the labels lack.
    Background,
}

impl FalsePositiveKind {
    pub const ALL: [FalsePositiveKind; 4] = [
        FalsePositiveKind::Duplicate,
        FalsePositiveKind::WrongClass,
        FalsePositiveKind::Localisation,
        FalsePositiveKind::Background,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FalsePositiveKind::Duplicate => "duplicate",
            FalsePositiveKind::WrongClass => "wrong_class",
            FalsePositiveKind::Localisation => "localisation",
            FalsePositiveKind::Background => "background",
        }
    }
}

/// A kept prediction that claimed no truth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FalsePositive {
    /// Index into the predictions given to [`image_errors`].
    pub prediction: usize,
    pub kind: FalsePositiveKind,
    /// Highest IoU with a truth of its own class (0 when there is none).
    pub best_iou: f32,
    /// The truth of any class it overlaps most, and that IoU, when it overlaps one.
    pub overlaps: Option<(usize, f32)>,
}

/// A truth no kept prediction claimed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Miss {
    /// Index into the truths given to [`image_errors`].
    pub truth: usize,
    /// Highest IoU with a kept prediction of its class (0 when there is none).
    pub best_iou: f32,
}

/// The false positives and misses of one image. `kept` are the predictions at or above the
/// chosen confidence.
pub fn image_errors(kept: &[Scored], truths: &[Truth]) -> (Vec<FalsePositive>, Vec<Miss>) {
    let matching = Matching::new(kept, truths);
    let claimed_by = matching.claims(MATCH_IOU);
    let ious = &matching.ious;
    let mut false_positives = Vec::new();
    for (pi, p) in kept.iter().enumerate() {
        if claimed_by[pi].is_some() {
            continue;
        }
        let best_iou = ious[pi].iter().copied().fold(0.0, f32::max);
        let overlaps = truths
            .iter()
            .enumerate()
            .map(|(ti, t)| (ti, iou(&t.xyxy, &p.xyxy)))
            .filter(|(_, v)| *v > 0.0)
            .fold(None, |acc: Option<(usize, f32)>, (ti, v)| match acc {
                Some((_, b)) if b >= v => acc,
                _ => Some((ti, v)),
            });
        let other_class_match = truths
            .iter()
            .any(|t| t.class_id != p.class_id && iou(&t.xyxy, &p.xyxy) >= MATCH_IOU);
        let kind = if best_iou >= MATCH_IOU {
            FalsePositiveKind::Duplicate
        } else if other_class_match {
            FalsePositiveKind::WrongClass
        } else if best_iou >= BACKGROUND_IOU {
            FalsePositiveKind::Localisation
        } else {
            FalsePositiveKind::Background
        };
        false_positives.push(FalsePositive {
            prediction: pi,
            kind,
            best_iou,
            overlaps,
        });
    }
    let misses = (0..truths.len())
        .filter(|ti| !claimed_by.contains(&Some(*ti)))
        .map(|ti| Miss {
            truth: ti,
            best_iou: ious.iter().map(|row| row[ti]).fold(0.0, f32::max),
        })
        .collect();
    (false_positives, misses)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pred(class_id: usize, conf: f32, xyxy: [f32; 4]) -> Scored {
        Scored {
            class_id,
            conf,
            xyxy,
        }
    }
    fn truth(class_id: usize, xyxy: [f32; 4]) -> Truth {
        Truth { class_id, xyxy }
    }

    #[test]
    fn a_found_truth_is_neither_a_false_positive_nor_a_miss() {
        let (fp, miss) = image_errors(
            &[pred(0, 0.9, [0.0, 0.0, 10.0, 9.0])],
            &[truth(0, [0.0, 0.0, 10.0, 10.0])],
        );
        assert!(fp.is_empty() && miss.is_empty(), "{fp:?} {miss:?}");
    }

    #[test]
    fn each_kind_of_false_positive_is_told_apart() {
        let truths = [
            truth(0, [0.0, 0.0, 10.0, 10.0]),
            truth(1, [100.0, 0.0, 110.0, 10.0]),
        ];
        let kept = [
            // claims truth 0
            pred(0, 0.9, [0.0, 0.0, 10.0, 10.0]),
            // the same box again, less sure: a duplicate
            pred(0, 0.8, [0.0, 0.0, 10.0, 9.0]),
            // class 0 where class 1 is labelled: wrong class
            pred(0, 0.7, [100.0, 0.0, 110.0, 10.0]),
            // the left 3 px of truth 0: IoU 0.3, a localisation error
            pred(0, 0.6, [0.0, 0.0, 3.0, 10.0]),
            // nothing labelled there
            pred(0, 0.5, [50.0, 50.0, 60.0, 60.0]),
        ];
        let (fp, miss) = image_errors(&kept, &truths);
        let kinds: Vec<(usize, FalsePositiveKind)> =
            fp.iter().map(|f| (f.prediction, f.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                (1, FalsePositiveKind::Duplicate),
                (2, FalsePositiveKind::WrongClass),
                (3, FalsePositiveKind::Localisation),
                (4, FalsePositiveKind::Background),
            ]
        );
        assert!((fp[2].best_iou - 0.3).abs() < 1e-6, "{:?}", fp[2]);
        assert_eq!(fp[1].overlaps.map(|o| o.0), Some(1), "overlaps truth 1");
        assert_eq!(fp[3].overlaps, None);
        // Truth 1 (class 1) was only boxed as class 0: missed, no same-class overlap.
        assert_eq!(
            miss,
            vec![Miss {
                truth: 1,
                best_iou: 0.0
            }]
        );
    }

    #[test]
    fn a_poorly_placed_box_leaves_its_truth_missed_with_the_iou_it_reached() {
        let (fp, miss) = image_errors(
            &[pred(0, 0.9, [0.0, 0.0, 4.0, 10.0])],
            &[truth(0, [0.0, 0.0, 10.0, 10.0])],
        );
        assert_eq!(fp.len(), 1);
        assert_eq!(fp[0].kind, FalsePositiveKind::Localisation);
        assert_eq!(miss.len(), 1);
        assert!((miss[0].best_iou - 0.4).abs() < 1e-6, "{miss:?}");
    }
}
