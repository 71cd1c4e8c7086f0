//! Confidence intervals of a detector's APs, as the report holds them ([`super::bootstrap`]
//! computes them).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassIntervals {
    pub class_id: usize,
    pub ap50: Interval,
    pub ap50_95: Interval,
    /// Resamples that held a truth of this class (the others give it no AP).
    pub resamples: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bootstrap {
    pub resamples: usize,
    pub seed: u64,
    pub level: f64,
    /// Of the mean over the classes each resample holds.
    pub map50: Interval,
    pub map50_95: Interval,
    /// Classes with a truth in the evaluated images, by class id.
    pub classes: Vec<ClassIntervals>,
}
