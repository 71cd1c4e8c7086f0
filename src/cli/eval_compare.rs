//! `vistawise eval MODEL DATASET --compare OTHER --bootstrap N`: is OTHER better than MODEL?
//!
//! Both detectors run on the same images; each AP difference (OTHER minus MODEL) gets a 95%
//! interval from the same resamples of those images ([`bootstrap::compare`]).

use std::path::Path;

use anyhow::{Result, bail};
use serde::Serialize;
use vistawise::eval::bootstrap::{self, Bootstrap};
use vistawise::eval::{EvalReport, Evaluator};

#[derive(Serialize)]
pub struct Comparison<'a> {
    pub model: &'a Path,
    pub model_sha256: String,
    /// OTHER's own report on the same images.
    pub report: EvalReport,
    /// Intervals of OTHER's AP minus MODEL's, per class and for the means.
    pub difference: Bootstrap,
}

pub fn compare<'a>(
    other_model: &'a Path,
    evaluator: &Evaluator,
    other: &Evaluator,
    names: &[String],
    resamples: usize,
    seed: u64,
) -> Result<Comparison<'a>> {
    let bar = super::progress_bar(
        resamples as u64,
        "comparing {bar:40} {pos}/{len} resamples  {elapsed}",
    );
    let difference = bootstrap::compare(evaluator, other, resamples, seed, || bar.inc(1));
    bar.finish_and_clear();
    let Some(difference) = difference else {
        bail!("--compare: nothing to compare (no image was evaluated)");
    };
    Ok(Comparison {
        model: other_model,
        model_sha256: super::sha256_file(other_model)?,
        report: other.report(names),
        difference,
    })
}

pub fn print_table(this: &EvalReport, model: &Path, c: &Comparison) {
    let d = &c.difference;
    println!(
        "\n{} minus {}: AP differences, {:.0}% paired-bootstrap intervals ({} resamples, seed {})",
        c.model.display(),
        model.display(),
        d.level * 100.0,
        d.resamples,
        d.seed
    );
    println!(
        "{:<22} {:>7} {:>7} {:>7} {:>15} {:>9} {:>9} {:>8} {:>15}",
        "class", "AP50", "other", "diff", "interval", "AP50-95", "other", "diff", "interval"
    );
    let span = |i: bootstrap::Interval| format!("{:+.3} {:+.3}", i.low, i.high);
    let row = |name: &str, ap: (f64, f64), ap95: (f64, f64), ci: (_, _)| {
        println!(
            "{:<22} {:>7.3} {:>7.3} {:>+7.3} {:>15} {:>9.3} {:>9.3} {:>+8.3} {:>15}",
            name,
            ap.0,
            ap.1,
            ap.1 - ap.0,
            span(ci.0),
            ap95.0,
            ap95.1,
            ap95.1 - ap95.0,
            span(ci.1)
        );
    };
    row(
        "all",
        (this.map50, c.report.map50),
        (this.map50_95, c.report.map50_95),
        (d.map50, d.map50_95),
    );
    for (mine, theirs) in this.classes.iter().zip(&c.report.classes) {
        if let Some(ci) = d.classes.iter().find(|i| i.class_id == mine.class_id) {
            row(
                &mine.class,
                (mine.ap50, theirs.ap50),
                (mine.ap50_95, theirs.ap50_95),
                (ci.ap50, ci.ap50_95),
            );
        }
    }
}
