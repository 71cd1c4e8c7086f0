//! How sure an AP is: percentile-bootstrap confidence intervals over the evaluated images.
//!
//! A split of a few hundred frames gives each class's AP a sampling error of several points (the
//! real test split holds 208 trunk boxes on 116 tiles), so two detectors, or a detector and a
//! target, can differ by less than the split can tell apart. Each resample draws as many images
//! as were evaluated, with replacement; an image drawn k times counts k times (its predictions
//! and its truths), and the APs are computed exactly as [`Evaluator::report`] computes them. The
//! interval is the 2.5th to 97.5th percentile of the resampled values (Efron's percentile
//! bootstrap). Images are the unit because the boxes of one frame are not independent.
//!
//! Resampling reuses each prediction's true-positive flags: matching is within an image, so a
//! copy of an image matches exactly as the original did.

pub use super::intervals::{Bootstrap, ClassIntervals, Interval};
use super::metrics::{Evaluator, Record, class_aps};

/// The interval's coverage: 95%.
pub const LEVEL: f64 = 0.95;

/// Intervals from `resamples` resamples drawn from `seed` (the same seed, the same intervals);
/// `on_resample` is called after each. None when no image was evaluated or `resamples` is 0.
pub fn bootstrap(
    evaluator: &Evaluator,
    resamples: usize,
    seed: u64,
    on_resample: impl FnMut(),
) -> Option<Bootstrap> {
    let drawn = resample(&[evaluator], resamples, seed, on_resample)?;
    Some(summarise(&drawn, resamples, seed, |aps| aps[0]))
}

/// Intervals of the difference `other - evaluator` of each AP, both read on the same resamples
/// (a paired bootstrap: the frames both detectors found hard stay in or out together, so a
/// difference can be clear where the two intervals of [`bootstrap`] overlap). Both evaluators
/// must have seen the same images with the same truths, in the same order; None otherwise, and
/// as [`bootstrap`] does.
pub fn compare(
    evaluator: &Evaluator,
    other: &Evaluator,
    resamples: usize,
    seed: u64,
    on_resample: impl FnMut(),
) -> Option<Bootstrap> {
    let drawn = resample(&[evaluator, other], resamples, seed, on_resample)?;
    Some(summarise(&drawn, resamples, seed, |aps| {
        (aps[1].0 - aps[0].0, aps[1].1 - aps[0].1)
    }))
}

/// One resample: each class holding a truth in it, with each evaluator's (AP50, AP50-95).
type Resample = Vec<(usize, Vec<(f64, f64)>)>;

fn resample(
    evaluators: &[&Evaluator],
    resamples: usize,
    seed: u64,
    mut on_resample: impl FnMut(),
) -> Option<Vec<Resample>> {
    let images = evaluators.first()?.image_instances();
    let same = evaluators
        .iter()
        .all(|e| e.image_instances() == images && e.classes() == evaluators[0].classes());
    if images.is_empty() || resamples == 0 || !same {
        return None;
    }
    let classes = evaluators[0].classes();
    let ranked: Vec<_> = evaluators.iter().map(|e| e.ranked_by_class()).collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut drawn = vec![0u64; images.len()];
    let mut out = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        drawn.fill(0);
        for _ in 0..images.len() {
            drawn[rng.usize(0..images.len())] += 1;
        }
        let mut instances = vec![0u64; classes];
        for (held, &k) in images.iter().zip(&drawn) {
            for &(c, n) in held {
                instances[c] += n * k;
            }
        }
        let one: Resample = (0..classes)
            .filter(|&c| instances[c] > 0)
            .map(|c| {
                let aps = evaluators.iter().zip(&ranked).map(|(e, ranked)| {
                    class_aps(repeated(&ranked[c], &drawn), instances[c], e.method())
                });
                (c, aps.collect())
            })
            .collect();
        out.push(one);
        on_resample();
    }
    Some(out)
}

/// Per class and for the mean over the classes of each resample, the interval of `value`
/// (of the evaluators' (AP50, AP50-95) in that resample).
fn summarise(
    drawn: &[Resample],
    resamples: usize,
    seed: u64,
    value: impl Fn(&[(f64, f64)]) -> (f64, f64),
) -> Bootstrap {
    let mut per_class: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut means: Vec<(f64, f64)> = Vec::with_capacity(drawn.len());
    for one in drawn {
        let mut sum = (0.0, 0.0);
        for (c, aps) in one {
            if per_class.len() <= *c {
                per_class.resize(c + 1, Vec::new());
            }
            let v = value(aps);
            per_class[*c].push(v);
            sum = (sum.0 + v.0, sum.1 + v.1);
        }
        if !one.is_empty() {
            means.push((sum.0 / one.len() as f64, sum.1 / one.len() as f64));
        }
    }
    let classes = per_class
        .into_iter()
        .enumerate()
        .filter(|(_, values)| !values.is_empty())
        .map(|(class_id, values)| ClassIntervals {
            class_id,
            ap50: interval(values.iter().map(|v| v.0)),
            ap50_95: interval(values.iter().map(|v| v.1)),
            resamples: values.len(),
        })
        .collect();
    Bootstrap {
        resamples,
        seed,
        level: LEVEL,
        map50: interval(means.iter().map(|v| v.0)),
        map50_95: interval(means.iter().map(|v| v.1)),
        classes,
    }
}

/// A class's true-positive flags, most confident first, each record as often as its image was drawn.
fn repeated<'a>(
    ranked: &'a [&'a Record],
    drawn: &'a [u64],
) -> impl Iterator<Item = &'a [bool; 10]> + Clone {
    ranked
        .iter()
        .flat_map(move |r| std::iter::repeat_n(&r.hits, drawn[r.image] as usize))
}

/// The central [`LEVEL`] of the values: nearest-rank percentiles.
fn interval(values: impl Iterator<Item = f64>) -> Interval {
    let mut sorted: Vec<f64> = values.collect();
    if sorted.is_empty() {
        return Interval {
            low: 0.0,
            high: 0.0,
        };
    }
    sorted.sort_by(f64::total_cmp);
    let at = |p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
    let tail = (1.0 - LEVEL) / 2.0;
    Interval {
        low: at(tail),
        high: at(1.0 - tail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::metrics::{ApMethod, Scored, Truth};

    fn truth(class_id: usize, x: f32) -> Truth {
        Truth {
            class_id,
            xyxy: [x, 0.0, x + 10.0, 10.0],
        }
    }

    fn pred(class_id: usize, x: f32, conf: f32) -> Scored {
        Scored {
            class_id,
            conf,
            xyxy: [x, 0.0, x + 10.0, 10.0],
        }
    }

    #[test]
    fn a_found_and_a_missed_box_in_two_images_span_zero_to_one() {
        // Resamples {A, A}: AP 1; {B, B}: the truth is never found, AP 0; {A, B}: recall stops
        // at 0.5, AP 51/101. Each of the first two comes a quarter of the time.
        let mut ev = Evaluator::new(2, 0.25, ApMethod::Coco);
        ev.add_image(&[pred(0, 0.0, 0.9)], &[truth(0, 0.0)]);
        ev.add_image(&[], &[truth(0, 50.0)]);
        let b = bootstrap(&ev, 400, 7, || {}).expect("two images");
        assert_eq!(b.classes.len(), 1);
        let trunk = &b.classes[0];
        assert_eq!(trunk.class_id, 0);
        assert_eq!(trunk.resamples, 400);
        assert_eq!(
            trunk.ap50,
            Interval {
                low: 0.0,
                high: 1.0
            }
        );
        assert_eq!(b.map50, trunk.ap50);
        let report = ev.report(&["trunk".into(), "ore".into()]);
        assert!((report.classes[0].ap50 - 51.0 / 101.0).abs() < 1e-12);
    }

    #[test]
    fn copies_of_one_image_give_the_point_value_as_both_ends() {
        // Every resample is n copies of the same frame: the same precision/recall curve.
        let preds = [
            pred(0, 0.0, 0.9),
            pred(0, 30.0, 0.8), // a false positive between two hits
            pred(0, 60.0, 0.7),
            pred(1, 90.0, 0.6),
        ];
        let truths = [
            truth(0, 0.0),
            truth(0, 60.0),
            truth(0, 120.0),
            truth(1, 90.0),
        ];
        for method in [ApMethod::Coco, ApMethod::Ultralytics] {
            let mut ev = Evaluator::new(3, 0.25, method);
            for _ in 0..5 {
                ev.add_image(&preds, &truths);
            }
            let report = ev.report(&["a".into(), "b".into(), "c".into()]);
            let b = bootstrap(&ev, 50, 1, || {}).expect("images");
            // Class 2 has no truth anywhere: no interval, as it has no AP.
            assert_eq!(
                b.classes.iter().map(|c| c.class_id).collect::<Vec<_>>(),
                [0, 1]
            );
            for (c, r) in b.classes.iter().zip(&report.classes) {
                for (i, v) in [(c.ap50, r.ap50), (c.ap50_95, r.ap50_95)] {
                    assert!(
                        (i.low - v).abs() < 1e-12 && (i.high - v).abs() < 1e-12,
                        "{i:?} {v}"
                    );
                }
            }
            assert!(report.classes[0].ap50 < 1.0 && report.classes[0].ap50 > 0.5);
        }
    }

    #[test]
    fn the_seed_fixes_the_draws_and_the_interval_holds_the_point_value() {
        let mut ev = Evaluator::new(1, 0.25, ApMethod::Coco);
        for i in 0..40 {
            let x = i as f32 * 20.0;
            // Every third image misses its box, every fifth adds a confident false positive.
            let mut preds = vec![];
            if i % 3 != 0 {
                preds.push(pred(0, x, 0.5 + i as f32 / 100.0));
            }
            if i % 5 == 0 {
                preds.push(pred(0, x + 500.0, 0.95 - i as f32 / 100.0));
            }
            ev.add_image(&preds, &[truth(0, x)]);
        }
        let point = ev.report(&["a".into()]).classes[0].ap50;
        let mut calls = 0;
        let a = bootstrap(&ev, 200, 3, || calls += 1).expect("images");
        assert_eq!(calls, 200);
        assert_eq!(Some(&a), bootstrap(&ev, 200, 3, || {}).as_ref());
        assert_ne!(Some(&a), bootstrap(&ev, 200, 4, || {}).as_ref());
        let i = a.classes[0].ap50;
        assert!(i.low < point && point < i.high, "{i:?} around {point}");
        assert!(
            i.high - i.low > 0.05 && i.low >= 0.0 && i.high <= 1.0,
            "{i:?}"
        );
    }

    #[test]
    fn a_paired_difference_is_zero_against_itself_and_clear_when_one_finds_more() {
        let mut half = Evaluator::new(1, 0.25, ApMethod::Coco);
        let mut all = Evaluator::new(1, 0.25, ApMethod::Coco);
        for i in 0..30 {
            let x = i as f32 * 20.0;
            let found = [pred(0, x, 0.5 + i as f32 / 100.0)];
            half.add_image(if i % 2 == 0 { &found } else { &[] }, &[truth(0, x)]);
            all.add_image(&found, &[truth(0, x)]);
        }
        let zero = Interval {
            low: 0.0,
            high: 0.0,
        };
        let same = compare(&half, &half, 100, 1, || {}).expect("same images");
        assert_eq!((same.map50, same.classes[0].ap50_95), (zero, zero));
        let d = compare(&half, &all, 100, 1, || {}).expect("same images");
        // `all` scores 1, `half` about 0.5 on every resample: the difference is about +0.5.
        let i = d.classes[0].ap50;
        assert!(i.low > 0.3 && i.high < 0.7, "{i:?}");
        let flipped = compare(&all, &half, 100, 1, || {}).expect("same images");
        assert_eq!(flipped.classes[0].ap50.high, -i.low);
        // Other images (one more) cannot be paired.
        all.add_image(&[], &[truth(0, 0.0)]);
        assert!(compare(&half, &all, 100, 1, || {}).is_none());
    }

    #[test]
    fn nothing_to_resample_gives_none() {
        let ev = Evaluator::new(1, 0.25, ApMethod::Coco);
        assert!(bootstrap(&ev, 100, 0, || {}).is_none());
        let mut ev = Evaluator::new(1, 0.25, ApMethod::Coco);
        ev.add_image(&[], &[truth(0, 0.0)]);
        assert!(bootstrap(&ev, 0, 0, || {}).is_none());
    }
}
