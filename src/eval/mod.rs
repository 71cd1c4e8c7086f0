//! Detector evaluation: average precision the COCO or the Ultralytics way ([`metrics`]), its
//! percentile-bootstrap intervals and paired comparisons of two detectors ([`bootstrap`]), and
//! each image's false positives and misses, by kind ([`errors`]), written out as a file and contact sheets ([`report`]). `vistawise eval` reports them.

pub mod bootstrap;
mod error_report;
mod errors;
mod intervals;
mod metrics;

pub use error_report::{ErrorCollector, Source};
pub use metrics::{ApMethod, EvalReport, Evaluator, Scored, Truth};
