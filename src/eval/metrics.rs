//! Detection metrics: per-class AP50 and AP50-95, precision/recall at a chosen confidence, and a
//! confusion matrix.
//!
//! The definitions follow Ultralytics' `val` so numbers are comparable with it:
//! - matching (`match_predictions`): per IoU threshold 0.50:0.05:0.95, predictions in descending
//!   confidence claim the best unclaimed same-class truth with IoU >= t;
//! - AP, two methods over the same ranked predictions and precision envelope:
//!   [`ApMethod::Coco`] (default; pycocotools): the envelope read at the first rank reaching each
//!   of 101 recall thresholds 0, 0.01, ..., 1, averaged (a perfect detector scores 1.0);
//!   [`ApMethod::Ultralytics`] (8.4 `compute_ap`): the envelope, dropping to 0 after the last
//!   recall reached, linearly interpolated at the same 101 points and integrated with the
//!   trapezoid rule (a perfect detector scores 0.995). They differ
//!   by well under 0.01 on real sets; the second reproduces Ultralytics' `val` exactly;
//! - classes without ground truth get no AP and are left out of the means;
//! - confusion (`ConfusionMatrix`): class-agnostic matching at IoU > 0.45 of detections above the
//!   chosen confidence, with a background row and column.

use serde::Serialize;

/// IoU thresholds 0.50, 0.55, ..., 0.95.
pub const IOU_THRESHOLDS: [f32; 10] = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95];
/// IoU a detection needs to count in the confusion matrix.
pub const CONFUSION_IOU: f32 = 0.45;

/// A prediction or a ground-truth box in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub class_id: usize,
    pub conf: f32,
    pub xyxy: [f32; 4],
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Truth {
    pub class_id: usize,
    pub xyxy: [f32; 4],
}

/// How AP integrates the precision/recall curve (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ApMethod {
    #[default]
    Coco,
    Ultralytics,
}

/// Accumulates images, then reports.
#[derive(Debug, Clone)]
pub struct Evaluator {
    classes: usize,
    method: ApMethod,
    chosen_conf: f32,
    /// Every prediction, in the order the images came.
    records: Vec<Record>,
    /// Per image, how many truths of each class it holds (classes it lacks left out).
    image_instances: Vec<Vec<(usize, u64)>>,
    /// At the chosen confidence and IoU 0.5: per class (tp, predictions).
    at_conf: Vec<(u64, u64)>,
    /// `confusion[pred][truth]`, index `classes` is background.
    confusion: Vec<Vec<u64>>,
}

/// One prediction as the AP curves see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Record {
    pub conf: f32,
    pub class_id: usize,
    /// True positive at each of [`IOU_THRESHOLDS`].
    pub hits: [bool; 10],
    /// Index of its image in the order [`Evaluator::add_image`] received them.
    pub image: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClassMetrics {
    pub class_id: usize,
    pub class: String,
    pub images: u64,
    pub instances: u64,
    pub predictions_at_conf: u64,
    pub precision: f64,
    pub recall: f64,
    pub ap50: f64,
    pub ap50_95: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EvalReport {
    pub ap_method: ApMethod,
    pub images: u64,
    pub instances: u64,
    pub conf: f32,
    /// Classes that have ground truth in the set.
    pub classes: Vec<ClassMetrics>,
    pub map50: f64,
    pub map50_95: f64,
    pub precision: f64,
    pub recall: f64,
    /// `confusion[pred][truth]`; the last row/column is background.
    pub confusion: Vec<Vec<u64>>,
    pub class_names: Vec<String>,
    /// Confidence intervals of the APs, when asked for ([`super::bootstrap`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<super::intervals::Bootstrap>,
}

impl Evaluator {
    pub fn new(classes: usize, chosen_conf: f32, method: ApMethod) -> Self {
        Evaluator {
            classes,
            method,
            chosen_conf,
            records: Vec::new(),
            image_instances: Vec::new(),
            at_conf: vec![(0, 0); classes],
            confusion: vec![vec![0; classes + 1]; classes + 1],
        }
    }

    /// Adds one image's predictions (any confidence) and ground truth.
    pub fn add_image(&mut self, preds: &[Scored], truths: &[Truth]) {
        let image = self.image_instances.len();
        let mut counts = vec![0u64; self.classes];
        for t in truths {
            counts[t.class_id] += 1;
        }
        let held = counts.iter().enumerate().filter(|(_, n)| **n > 0);
        self.image_instances
            .push(held.map(|(c, &n)| (c, n)).collect());
        let hits = match_predictions(preds, truths, &IOU_THRESHOLDS);
        for (p, hits) in preds.iter().zip(hits) {
            self.records.push(Record {
                conf: p.conf,
                class_id: p.class_id,
                hits,
                image,
            });
        }
        // Precision/recall at the chosen confidence: match again among the kept detections only,
        // so a low-confidence box cannot take a truth away from a kept one.
        let kept: Vec<Scored> = preds
            .iter()
            .filter(|p| p.conf >= self.chosen_conf)
            .copied()
            .collect();
        let kept_hits = match_predictions(&kept, truths, &[0.5]);
        for (p, tp) in kept.iter().zip(kept_hits) {
            self.at_conf[p.class_id].1 += 1;
            if tp[0] {
                self.at_conf[p.class_id].0 += 1;
            }
        }
        self.add_confusion(&kept, truths);
    }

    fn add_confusion(&mut self, dets: &[Scored], truths: &[Truth]) {
        let bg = self.classes;
        // Candidate pairs (truth, det, iou) above the threshold, class-agnostic.
        let mut pairs: Vec<(usize, usize, f32)> = Vec::new();
        for (ti, t) in truths.iter().enumerate() {
            for (di, d) in dets.iter().enumerate() {
                let iou = crate::perception::iou(&t.xyxy, &d.xyxy);
                if iou > CONFUSION_IOU {
                    pairs.push((ti, di, iou));
                }
            }
        }
        let pairs = unique_greedy(pairs);
        for (ti, t) in truths.iter().enumerate() {
            match pairs.iter().find(|(pt, _, _)| *pt == ti) {
                Some((_, di, _)) => self.confusion[dets[*di].class_id][t.class_id] += 1,
                None => self.confusion[bg][t.class_id] += 1,
            }
        }
        for (di, d) in dets.iter().enumerate() {
            if !pairs.iter().any(|(_, pd, _)| *pd == di) {
                self.confusion[d.class_id][bg] += 1;
            }
        }
    }

    /// Per image, in the order they came, its truths per class.
    pub(crate) fn image_instances(&self) -> &[Vec<(usize, u64)>] {
        &self.image_instances
    }

    pub(crate) fn method(&self) -> ApMethod {
        self.method
    }

    pub(crate) fn classes(&self) -> usize {
        self.classes
    }

    /// Each class's records, most confident first (ties keep the order the images came in).
    pub(crate) fn ranked_by_class(&self) -> Vec<Vec<&Record>> {
        let mut order: Vec<&Record> = self.records.iter().collect();
        order.sort_by(|a, b| b.conf.total_cmp(&a.conf));
        let mut by_class = vec![Vec::new(); self.classes];
        for r in order {
            by_class[r.class_id].push(r);
        }
        by_class
    }

    pub fn report(&self, class_names: &[String]) -> EvalReport {
        // Per class: truths, and images holding at least one.
        let mut instances = vec![0u64; self.classes];
        let mut images_with_class = vec![0u64; self.classes];
        for &(c, n) in self.image_instances.iter().flatten() {
            instances[c] += n;
            images_with_class[c] += 1;
        }
        let ranked = self.ranked_by_class();
        let mut classes = Vec::new();
        for (c, records) in ranked.iter().enumerate() {
            let n_l = instances[c];
            if n_l == 0 {
                continue;
            }
            let (ap50, ap50_95) = class_aps(records.iter().map(|r| &r.hits), n_l, self.method);
            let (tp, np) = self.at_conf[c];
            classes.push(ClassMetrics {
                class_id: c,
                class: class_names.get(c).cloned().unwrap_or_else(|| c.to_string()),
                images: images_with_class[c],
                instances: n_l,
                predictions_at_conf: np,
                precision: if np == 0 { 0.0 } else { tp as f64 / np as f64 },
                recall: tp as f64 / n_l as f64,
                ap50,
                ap50_95,
            });
        }
        let mean = |f: fn(&ClassMetrics) -> f64| {
            if classes.is_empty() {
                0.0
            } else {
                classes.iter().map(f).sum::<f64>() / classes.len() as f64
            }
        };
        EvalReport {
            ap_method: self.method,
            images: self.image_instances.len() as u64,
            instances: instances.iter().sum(),
            conf: self.chosen_conf,
            map50: mean(|c| c.ap50),
            map50_95: mean(|c| c.ap50_95),
            precision: mean(|c| c.precision),
            recall: mean(|c| c.recall),
            classes,
            confusion: self.confusion.clone(),
            class_names: class_names.to_vec(),
            bootstrap: None,
        }
    }
}

/// AP50 and AP50-95 (the mean over [`IOU_THRESHOLDS`]) of one class: `hits` are its
/// predictions' true-positive flags, most confident first; `instances` its truths (> 0). A class
/// with no prediction scores 0.
pub(crate) fn class_aps<'a>(
    hits: impl Iterator<Item = &'a [bool; 10]> + Clone,
    instances: u64,
    method: ApMethod,
) -> (f64, f64) {
    if hits.clone().next().is_none() {
        return (0.0, 0.0);
    }
    let mut aps = [0f64; 10];
    for (j, ap) in aps.iter_mut().enumerate() {
        let (mut tp, mut fp) = (0f64, 0f64);
        let mut recall = Vec::new();
        let mut precision = Vec::new();
        for h in hits.clone() {
            if h[j] {
                tp += 1.0;
            } else {
                fp += 1.0;
            }
            recall.push(tp / (instances as f64 + 1e-16));
            precision.push(tp / (tp + fp));
        }
        *ap = average_precision(&recall, &precision, method);
    }
    (aps[0], aps.iter().sum::<f64>() / aps.len() as f64)
}

/// For each prediction, whether it is a true positive at each IoU threshold: predictions in
/// descending confidence each claim the unclaimed same-class truth they overlap most, if that
/// IoU reaches the threshold (pycocotools and Ultralytics 8.4 `match_predictions`).
pub fn match_predictions<const N: usize>(
    preds: &[Scored],
    truths: &[Truth],
    thresholds: &[f32; N],
) -> Vec<[bool; N]> {
    let matching = Matching::new(preds, truths);
    let mut correct = vec![[false; N]; preds.len()];
    for (k, &threshold) in thresholds.iter().enumerate() {
        for (pi, claim) in matching.claims(threshold).into_iter().enumerate() {
            correct[pi][k] = claim.is_some();
        }
    }
    correct
}

/// What the matching needs of one image, computed once for every IoU threshold.
pub(crate) struct Matching {
    /// Prediction indices, most confident first.
    order: Vec<usize>,
    /// `ious[prediction][truth]`: their IoU when the classes agree, else 0.
    pub(crate) ious: Vec<Vec<f32>>,
    truths: usize,
}

impl Matching {
    pub(crate) fn new(preds: &[Scored], truths: &[Truth]) -> Self {
        let mut order: Vec<usize> = (0..preds.len()).collect();
        order.sort_by(|&a, &b| preds[b].conf.total_cmp(&preds[a].conf));
        let ious = preds
            .iter()
            .map(|p| {
                truths
                    .iter()
                    .map(|t| {
                        if t.class_id == p.class_id {
                            crate::perception::iou(&t.xyxy, &p.xyxy)
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect();
        Matching {
            order,
            ious,
            truths: truths.len(),
        }
    }

    /// Which truth each prediction claims at one IoU threshold (see [`match_predictions`]).
    pub(crate) fn claims(&self, threshold: f32) -> Vec<Option<usize>> {
        let mut claimed = vec![false; self.truths];
        let mut out = vec![None; self.ious.len()];
        for &pi in &self.order {
            // First truth with the highest IoU among those not yet claimed.
            let best = self.ious[pi]
                .iter()
                .enumerate()
                .filter(|(ti, _)| !claimed[*ti])
                .fold(None, |acc: Option<(usize, f32)>, (ti, &iou)| match acc {
                    Some((_, b)) if b >= iou => acc,
                    _ => Some((ti, iou)),
                });
            if let Some((ti, iou)) = best
                && iou >= threshold
                && iou > 0.0
            {
                out[pi] = Some(ti);
                claimed[ti] = true;
            }
        }
        out
    }
}

/// Highest IoU first; each truth and each prediction is used at most once.
fn unique_greedy(mut pairs: Vec<(usize, usize, f32)>) -> Vec<(usize, usize, f32)> {
    pairs.sort_by(|a, b| b.2.total_cmp(&a.2));
    let mut used_t = std::collections::HashSet::new();
    let mut used_p = std::collections::HashSet::new();
    pairs
        .into_iter()
        .filter(|(t, p, _)| {
            if used_t.contains(t) || used_p.contains(p) {
                false
            } else {
                used_t.insert(*t);
                used_p.insert(*p);
                true
            }
        })
        .collect()
}

/// The 101 recall points, computed as `numpy.linspace(0, 1, 101)` does (k * 0.01).
fn recall_points() -> impl Iterator<Item = f64> {
    (0..=100).map(|k| k as f64 * 0.01)
}

/// AP of one class at one IoU threshold from its ranked recall/precision values.
pub fn average_precision(recall: &[f64], precision: &[f64], method: ApMethod) -> f64 {
    match method {
        ApMethod::Coco => {
            let mut envelope = precision.to_vec();
            for i in (1..envelope.len()).rev() {
                envelope[i - 1] = envelope[i - 1].max(envelope[i]);
            }
            // First rank whose recall reaches the threshold (searchsorted, side left); none: 0.
            recall_points()
                .map(|r| {
                    let i = recall.partition_point(|&v| v < r);
                    envelope.get(i).copied().unwrap_or(0.0)
                })
                .sum::<f64>()
                / 101.0
        }
        ApMethod::Ultralytics => {
            // Ultralytics 8.4: precision falls to 0 right after the last recall reached (older
            // versions interpolated a straight line from there to recall 1).
            let last_recall = recall.last().copied().unwrap_or(1.0);
            let mut mrec = Vec::with_capacity(recall.len() + 3);
            mrec.push(0.0);
            mrec.extend_from_slice(recall);
            mrec.extend([last_recall, 1.0]);
            let mut mpre = Vec::with_capacity(precision.len() + 3);
            mpre.push(1.0);
            mpre.extend_from_slice(precision);
            mpre.extend([0.0, 0.0]);
            for i in (0..mpre.len() - 1).rev() {
                mpre[i] = mpre[i].max(mpre[i + 1]);
            }
            let samples: Vec<f64> = recall_points().map(|x| interp(x, &mrec, &mpre)).collect();
            samples.windows(2).map(|w| (w[0] + w[1]) / 2.0 * 0.01).sum()
        }
    }
}

/// Linear interpolation as `numpy.interp` (xp non-decreasing; ties take the last sample).
fn interp(x: f64, xp: &[f64], fp: &[f64]) -> f64 {
    let last = xp.len() - 1;
    if x < xp[0] {
        return fp[0];
    }
    if x >= xp[last] {
        return fp[last];
    }
    // Last index with xp[j] <= x.
    let j = xp.partition_point(|&v| v <= x) - 1;
    if xp[j] == x {
        return fp[j];
    }
    let slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
    fp[j] + slope * (x - xp[j])
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

    fn evaluate(method: ApMethod, preds: &[Scored], truths: &[Truth]) -> EvalReport {
        let mut e = Evaluator::new(2, 0.25, method);
        e.add_image(preds, truths);
        e.report(&["a".into(), "b".into()])
    }

    #[test]
    fn perfect_detection_scores_one_coco_and_0_995_ultralytics() {
        let p = [pred(0, 0.9, [0.0, 0.0, 10.0, 10.0])];
        let t = [truth(0, [0.0, 0.0, 10.0, 10.0])];
        let coco = evaluate(ApMethod::Coco, &p, &t);
        assert_eq!(coco.classes.len(), 1, "class b has no truth and no AP");
        assert!((coco.classes[0].ap50 - 1.0).abs() < 1e-9);
        assert!((coco.classes[0].ap50_95 - 1.0).abs() < 1e-9);
        assert_eq!(
            (coco.classes[0].precision, coco.classes[0].recall),
            (1.0, 1.0)
        );
        // Ultralytics samples 0 at recall 1 (numpy.interp past the last point): 0.995.
        let ul = evaluate(ApMethod::Ultralytics, &p, &t);
        assert!(
            (ul.classes[0].ap50 - 0.995).abs() < 1e-9,
            "{}",
            ul.classes[0].ap50
        );
    }

    #[test]
    fn hand_checked_ap_with_a_false_positive_ranked_first() {
        // Two truths; ranked predictions FP (0.9), TP (0.8), TP (0.7):
        // recall [0, .5, 1], precision [0, .5, 2/3], envelope 2/3 at every rank.
        let p = [
            pred(0, 0.9, [50.0, 50.0, 60.0, 60.0]),
            pred(0, 0.8, [0.0, 0.0, 10.0, 10.0]),
            pred(0, 0.7, [20.0, 0.0, 30.0, 10.0]),
        ];
        let t = [
            truth(0, [0.0, 0.0, 10.0, 10.0]),
            truth(0, [20.0, 0.0, 30.0, 10.0]),
        ];
        // COCO: every recall threshold reads 2/3.
        let coco = evaluate(ApMethod::Coco, &p, &t);
        assert!(
            (coco.classes[0].ap50 - 2.0 / 3.0).abs() < 1e-9,
            "{}",
            coco.classes[0].ap50
        );
        // Ultralytics: 2/3 on [0, 0.99], 0 at 1.0: 0.99 * 2/3 + 0.01 * (2/3) / 2.
        let ul = evaluate(ApMethod::Ultralytics, &p, &t);
        let expected = 0.99 * 2.0 / 3.0 + 0.005 * 2.0 / 3.0;
        assert!(
            (ul.classes[0].ap50 - expected).abs() < 1e-9,
            "{}",
            ul.classes[0].ap50
        );
        assert!((coco.classes[0].precision - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(coco.classes[0].recall, 1.0);
    }

    #[test]
    fn half_recall_reads_zero_beyond_it() {
        // One TP of two truths: COCO reads precision 1 for thresholds 0..0.5 (51 of 101).
        let p = [pred(0, 0.9, [0.0, 0.0, 10.0, 10.0])];
        let t = [
            truth(0, [0.0, 0.0, 10.0, 10.0]),
            truth(0, [20.0, 0.0, 30.0, 10.0]),
        ];
        let coco = evaluate(ApMethod::Coco, &p, &t);
        assert!(
            (coco.classes[0].ap50 - 51.0 / 101.0).abs() < 1e-9,
            "{}",
            coco.classes[0].ap50
        );
        // Ultralytics: 1 on [0, 0.49], 0 from 0.5 on: 0.49 + (1 + 0) / 2 * 0.01.
        let ul = evaluate(ApMethod::Ultralytics, &p, &t);
        assert!(
            (ul.classes[0].ap50 - 0.495).abs() < 1e-9,
            "{}",
            ul.classes[0].ap50
        );
    }

    #[test]
    fn iou_thresholds_split_ap50_from_ap50_95() {
        // [0,0,10,6] vs [0,0,10,10]: IoU 0.6, a TP at 0.50, 0.55, 0.60 only.
        let r = evaluate(
            ApMethod::Coco,
            &[pred(0, 0.9, [0.0, 0.0, 10.0, 6.0])],
            &[truth(0, [0.0, 0.0, 10.0, 10.0])],
        );
        assert!((r.classes[0].ap50 - 1.0).abs() < 1e-9);
        assert!((r.classes[0].ap50_95 - 0.3).abs() < 1e-9);
    }

    #[test]
    fn wrong_class_is_a_miss_and_shows_in_the_confusion_matrix() {
        let r = evaluate(
            ApMethod::Coco,
            &[
                pred(1, 0.9, [0.0, 0.0, 10.0, 10.0]),
                pred(0, 0.1, [40.0, 40.0, 50.0, 50.0]),
            ],
            &[truth(0, [0.0, 0.0, 10.0, 10.0])],
        );
        assert_eq!(r.classes[0].ap50, 0.0);
        // Predicted b where the truth is a; the 0.1 box is below the chosen confidence.
        assert_eq!(r.confusion[1][0], 1);
        assert_eq!(r.confusion[2][0], 0);
        assert_eq!(r.confusion[0][2], 0);
    }

    #[test]
    fn missed_truth_and_spurious_detection_go_to_background() {
        let r = evaluate(
            ApMethod::Coco,
            &[pred(0, 0.9, [100.0, 100.0, 110.0, 110.0])],
            &[truth(0, [0.0, 0.0, 10.0, 10.0])],
        );
        assert_eq!(r.confusion[2][0], 1, "truth missed");
        assert_eq!(r.confusion[0][2], 1, "detection on background");
        assert_eq!(r.classes[0].precision, 0.0);
        assert_eq!(r.classes[0].recall, 0.0);
    }

    #[test]
    fn the_more_confident_prediction_claims_the_truth_first() {
        // Both overlap the one truth; the confident one has the lower IoU but still claims it.
        let hits = match_predictions(
            &[
                pred(0, 0.5, [0.0, 0.0, 10.0, 10.0]),
                pred(0, 0.9, [0.0, 0.0, 10.0, 8.0]),
            ],
            &[truth(0, [0.0, 0.0, 10.0, 10.0])],
            &[0.5],
        );
        assert_eq!(hits, vec![[false], [true]]);
    }

    #[test]
    fn interp_matches_numpy_on_ties_and_edges() {
        let xp = [0.0, 0.5, 0.5, 1.0];
        let fp = [1.0, 0.8, 0.6, 0.0];
        assert_eq!(interp(0.5, &xp, &fp), 0.6);
        assert!((interp(0.75, &xp, &fp) - 0.3).abs() < 1e-12);
        assert_eq!(interp(1.0, &xp, &fp), 0.0);
        assert!((interp(0.25, &xp, &fp) - 0.9).abs() < 1e-12);
    }
}
