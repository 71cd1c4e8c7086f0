//! `vistawise eval MODEL DATASET`: detector accuracy on a labelled YOLO dataset split.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use serde::Serialize;
use vistawise::dataset::yolo;
use vistawise::eval::bootstrap::{self, Interval};
use vistawise::eval::{ApMethod, EvalReport, Evaluator, Scored, Truth};
use vistawise::perception::{DetectOptions, Detector, runtime};

use super::AppContext;
use super::eval_compare::{self, Comparison};

#[derive(Args)]
pub struct EvalArgs {
    /// Detector ONNX file.
    pub model: PathBuf,
    /// Dataset folder: with data.yaml, with <split>/images + labels, or a split folder itself.
    pub dataset: PathBuf,
    /// Which split to evaluate.
    #[arg(long, default_value = "val")]
    pub split: String,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Confidence for precision, recall and the confusion matrix [default: detector.confidence].
    #[arg(long)]
    pub conf: Option<f32>,
    /// Lowest confidence kept for the AP curves (Ultralytics val uses 0.001).
    #[arg(long, default_value_t = 0.001)]
    pub min_conf: f32,
    /// NMS IoU for raw-output models (Ultralytics val uses 0.7).
    #[arg(long, default_value_t = 0.7)]
    pub nms_iou: f32,
    /// One class per box (as `detect` and `play` do) instead of every class above --min-conf
    /// (as Ultralytics val does, and as mAP is usually reported).
    #[arg(long)]
    pub single_label: bool,
    /// How AP integrates the curve: coco (pycocotools) or ultralytics (Ultralytics val).
    #[arg(long, value_enum, default_value_t = Method::Coco)]
    pub ap_method: Method,
    /// Only the images whose file name matches this glob, e.g. 'real_*' for one source of a
    /// built dataset (repeatable: an image matching any pattern is kept).
    #[arg(long = "only", value_name = "GLOB")]
    pub only: Vec<String>,
    /// Also write every false positive and miss at --conf (IoU 0.5, as precision and recall
    /// count them) into this folder: errors.json (each with a kind: duplicate, wrong_class,
    /// localisation, background) and contact sheets false_positives.png and misses.png.
    #[arg(long, value_name = "DIR")]
    pub errors: Option<PathBuf>,
    /// Most crops on each contact sheet of --errors (the most confident false positives, the
    /// largest misses); errors.json lists them all.
    #[arg(long, value_name = "N", default_value_t = 60, requires = "errors")]
    pub errors_sheet: usize,
    /// Only these classes' false positives and misses in --errors (repeatable; the matching
    /// still sees every class).
    #[arg(long, value_name = "CLASS", requires = "errors")]
    pub errors_class: Vec<String>,
    /// Also give 95% confidence intervals of every AP from N bootstrap resamples of the images
    /// (1000 is usual): how far the numbers could move on another draw of the same kind of frames.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
    pub bootstrap: Option<u32>,
    /// Seed of the bootstrap draws (the same seed, the same intervals).
    #[arg(long, value_name = "SEED", default_value_t = 0, requires = "bootstrap")]
    pub bootstrap_seed: u64,
    /// Also run this second detector on the same images and give, per class, the difference of
    /// its APs from MODEL's with a 95% paired-bootstrap interval (needs --bootstrap).
    #[arg(long, value_name = "OTHER_MODEL", requires = "bootstrap")]
    pub compare: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Method {
    Coco,
    Ultralytics,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    model: &'a std::path::Path,
    model_sha256: String,
    dataset: &'a std::path::Path,
    split: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    only: &'a [String],
    min_conf: f32,
    nms_iou: f32,
    #[serde(flatten)]
    report: &'a EvalReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    compare: Option<&'a Comparison<'a>>,
}

pub fn run(ctx: &AppContext, args: &EvalArgs) -> Result<ExitCode> {
    if !(0.0..1.0).contains(&args.min_conf) || !(0.0..=1.0).contains(&args.nms_iou) {
        bail!("--min-conf must be in [0, 1) and --nms-iou in [0, 1]");
    }
    let conf = args.conf.unwrap_or(ctx.config().detector.confidence);
    let split = open_samples(args)?;
    let mut detector = load_detector(ctx, args, split.class_names.as_deref())?;
    let names = detector.info().class_names.clone();
    let other = match &args.compare {
        Some(path) => Some(load_compared(ctx, args, path, &names)?),
        None => None,
    };
    // Every box down to --min-conf: the metrics sweep the confidence themselves.
    let opts = DetectOptions {
        confidence: args.min_conf,
        iou: args.nms_iou,
        max_detections: 300,
        multi_label: !args.single_label,
        clip_boxes: false,
    };
    let method = match args.ap_method {
        Method::Coco => ApMethod::Coco,
        Method::Ultralytics => ApMethod::Ultralytics,
    };
    let mut evaluator = Evaluator::new(names.len(), conf, method);
    // --compare: the second detector and what it finds, image by image beside the first.
    let mut other = other.map(|d| (d, Evaluator::new(names.len(), conf, method)));
    let mut errors = error_collector(args, conf, &names)?;
    let bar = super::progress_bar(
        split.samples.len() as u64,
        "evaluating {bar:40} {pos}/{len} images  {elapsed} (eta {eta})",
    );
    for sample in &split.samples {
        let (frame, truths) = read_sample(sample, names.len())?;
        let preds = scored(&mut detector, &frame, &opts, &sample.image)?;
        evaluator.add_image(&preds, &truths);
        if let Some((other, other_evaluator)) = other.as_mut() {
            other_evaluator.add_image(&scored(other, &frame, &opts, &sample.image)?, &truths);
        }
        if let Some(errors) = errors.as_mut() {
            errors.add(&sample.image, &preds, &truths);
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut report = evaluator.report(&names);
    if let Some(resamples) = args.bootstrap {
        report.bootstrap = intervals(&evaluator, resamples, args.bootstrap_seed);
    }
    let comparison = match (&args.compare, &other, args.bootstrap) {
        (Some(path), Some((_, other_evaluator)), Some(resamples)) => Some(eval_compare::compare(
            path,
            &evaluator,
            other_evaluator,
            &names,
            resamples as usize,
            args.bootstrap_seed,
        )?),
        _ => None,
    };
    if let (Some(dir), Some(errors)) = (&args.errors, errors) {
        write_errors(args, dir, errors, conf)?;
    }
    if args.json {
        print_json(args, &report, comparison.as_ref())?;
    } else {
        print_table(&report, &split.images_dir, &args.only);
        if let Some(c) = &comparison {
            eval_compare::print_table(&report, &args.model, c);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The evaluated detector, whose classes must be the dataset's (where its data.yaml names them).
fn load_detector(
    ctx: &AppContext,
    args: &EvalArgs,
    data_names: Option<&[String]>,
) -> Result<Detector> {
    runtime::init(ctx.ort_lib().as_deref())?;
    let detector = Detector::load(&args.model, ctx.config().detector.threads)?
        .with_input_size(ctx.config().detector.input_size)?;
    let names = &detector.info().class_names;
    if let Some(data_names) = data_names
        && data_names != names.as_slice()
    {
        bail!(
            "the dataset's classes do not match the model's (ids must mean the same class):\n  \
             dataset: {data_names:?}\n  model:   {names:?}"
        );
    }
    Ok(detector)
}

/// `--bootstrap N`: the report's 95% intervals, with a progress bar.
fn intervals(evaluator: &Evaluator, resamples: u32, seed: u64) -> Option<bootstrap::Bootstrap> {
    let bar = super::progress_bar(
        u64::from(resamples),
        "bootstrap {bar:40} {pos}/{len} resamples  {elapsed}",
    );
    let intervals = bootstrap::bootstrap(evaluator, resamples as usize, seed, || bar.inc(1));
    bar.finish_and_clear();
    intervals
}

/// `--json`: the report with what it was measured on.
fn print_json(args: &EvalArgs, report: &EvalReport, comparison: Option<&Comparison>) -> Result<()> {
    let out = JsonReport {
        model: &args.model,
        model_sha256: super::sha256_file(&args.model)?,
        dataset: &args.dataset,
        split: &args.split,
        only: &args.only,
        min_conf: args.min_conf,
        nms_iou: args.nms_iou,
        report,
        compare: comparison,
    };
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// A sample's image and its labelled boxes in pixels.
fn read_sample(sample: &yolo::Sample, classes: usize) -> Result<(image::RgbImage, Vec<Truth>)> {
    let frame = image::open(&sample.image)
        .with_context(|| format!("cannot read image {}", sample.image.display()))?
        .to_rgb8();
    let labels = yolo::read_labels(&sample.label, classes)?;
    let truths = labels
        .iter()
        .map(|l| Truth {
            class_id: l.class_id,
            xyxy: l.to_xyxy(frame.width(), frame.height()),
        })
        .collect();
    Ok((frame, truths))
}

/// The split's samples, those whose file names match `--only` when given.
fn open_samples(args: &EvalArgs) -> Result<yolo::Split> {
    let mut split = yolo::open_split(&args.dataset, &args.split)
        .with_context(|| format!("cannot open dataset {}", args.dataset.display()))?;
    if args.only.is_empty() {
        return Ok(split);
    }
    let patterns = args
        .only
        .iter()
        .map(|p| glob::Pattern::new(p).with_context(|| format!("--only {p:?} is not a glob")))
        .collect::<Result<Vec<_>>>()?;
    let total = split.samples.len();
    split.samples.retain(|s| {
        let name = s.image.file_name().map(|n| n.to_string_lossy());
        name.is_some_and(|n| patterns.iter().any(|p| p.matches(&n)))
    });
    if split.samples.is_empty() {
        bail!(
            "no image of the {total} in {} has a file name matching --only {:?}",
            split.images_dir.display(),
            args.only
        );
    }
    Ok(split)
}

/// The `--compare` detector, refused when its classes are not the model's.
fn load_compared(
    ctx: &AppContext,
    args: &EvalArgs,
    path: &std::path::Path,
    names: &[String],
) -> Result<Detector> {
    let other = Detector::load(path, ctx.config().detector.threads)?
        .with_input_size(ctx.config().detector.input_size)?;
    if other.info().class_names != names {
        bail!(
            "--compare {}: its classes differ from {}'s (ids must mean the same class):\n  \
             {:?}\n  {names:?}",
            path.display(),
            args.model.display(),
            other.info().class_names
        );
    }
    Ok(other)
}

/// With `--errors DIR`: the collector of false positives and misses (its folder made first, so
/// that a bad path fails at once and not after every image).
fn error_collector(
    args: &EvalArgs,
    conf: f32,
    names: &[String],
) -> Result<Option<vistawise::eval::ErrorCollector>> {
    let error_classes = args
        .errors_class
        .iter()
        .map(|c| {
            names.iter().position(|n| n == c).with_context(|| {
                format!("--errors-class {c:?} is not a class of the model; its classes: {names:?}")
            })
        })
        .collect::<Result<Vec<usize>>>()?;
    let Some(dir) = &args.errors else {
        return Ok(None);
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the errors folder {}", dir.display()))?;
    Ok(Some(vistawise::eval::ErrorCollector::new(
        conf,
        names,
        &error_classes,
    )))
}

/// Writes the collected errors into `dir` and says what they were on stderr (so that `--json`
/// keeps stdout to the report).
fn write_errors(
    args: &EvalArgs,
    dir: &std::path::Path,
    errors: vistawise::eval::ErrorCollector,
    conf: f32,
) -> Result<()> {
    let source = vistawise::eval::Source {
        model: &args.model,
        dataset: &args.dataset,
        split: &args.split,
    };
    let summary = errors.write(dir, &source, args.errors_sheet)?;
    let kinds: Vec<String> = summary
        .false_positives
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    eprintln!(
        "errors at conf {conf:.3}: {} false positives ({}), {} misses -> {}",
        summary.false_positives.values().sum::<usize>(),
        kinds.join(", "),
        summary.misses,
        dir.display()
    );
    Ok(())
}

/// One detector's boxes on a frame, as the metrics take them.
fn scored(
    detector: &mut Detector,
    frame: &image::RgbImage,
    opts: &DetectOptions,
    image: &std::path::Path,
) -> Result<Vec<Scored>> {
    let (found, _) = detector
        .detect(frame, opts)
        .with_context(|| format!("detection failed on {}", image.display()))?;
    Ok(found
        .iter()
        .map(|d| Scored {
            class_id: d.class_id,
            conf: d.conf,
            xyxy: d.xyxy,
        })
        .collect())
}

/// What was evaluated: the images, the instances, the threshold of P/R and the AP method.
fn print_heading(r: &EvalReport, images_dir: &std::path::Path, only: &[String]) {
    let filter = if only.is_empty() {
        String::new()
    } else {
        format!(" (only {})", only.join(", "))
    };
    println!(
        "{}{filter}: {} images, {} instances; P/R at conf {:.3}; AP method {}",
        images_dir.display(),
        r.images,
        r.instances,
        r.conf,
        match r.ap_method {
            ApMethod::Coco => "coco (101-point)",
            ApMethod::Ultralytics => "ultralytics",
        }
    );
}

fn print_table(r: &EvalReport, images_dir: &std::path::Path, only: &[String]) {
    print_heading(r, images_dir, only);
    // With --bootstrap: each AP's 95% interval beside it.
    let span = |i: Option<Interval>| {
        i.map(|i| format!(" {:>13}", format!("{:.3}-{:.3}", i.low, i.high)))
            .unwrap_or_default()
    };
    let boot = r.bootstrap.as_ref();
    let class_ci = |id: usize| boot.and_then(|b| b.classes.iter().find(|c| c.class_id == id));
    let (ci50, ci5095) = match boot {
        Some(b) => (
            format!(" {:>13}", format!("AP50 {:.0}% CI", b.level * 100.0)),
            format!(" {:>13}", "AP50-95 CI"),
        ),
        None => (String::new(), String::new()),
    };
    println!(
        "{:<22} {:>7} {:>9} {:>7} {:>7} {:>7}{ci50} {:>9}{ci5095}",
        "class", "images", "instances", "P", "R", "AP50", "AP50-95"
    );
    // One line: name, images, instances, (P, R), (AP50, interval), (AP50-95, interval).
    type Ap = (f64, Option<Interval>);
    let row =
        |name: &str, images: u64, instances: u64, (p, rc): (f64, f64), ap50: Ap, ap50_95: Ap| {
            let ((ap50, ci50), (ap50_95, ci50_95)) = (ap50, ap50_95);
            println!(
                "{:<22} {:>7} {:>9} {:>7.3} {:>7.3} {:>7.3}{} {:>9.3}{}",
                name,
                images,
                instances,
                p,
                rc,
                ap50,
                span(ci50),
                ap50_95,
                span(ci50_95),
            );
        };
    row(
        "all",
        r.images,
        r.instances,
        (r.precision, r.recall),
        (r.map50, boot.map(|b| b.map50)),
        (r.map50_95, boot.map(|b| b.map50_95)),
    );
    for c in &r.classes {
        let ci = class_ci(c.class_id);
        row(
            &c.class,
            c.images,
            c.instances,
            (c.precision, c.recall),
            (c.ap50, ci.map(|i| i.ap50)),
            (c.ap50_95, ci.map(|i| i.ap50_95)),
        );
    }
    if let Some(b) = boot {
        println!(
            "{:.0}% intervals: percentile bootstrap over the images, {} resamples, seed {}",
            b.level * 100.0,
            b.resamples,
            b.seed
        );
    }
    print_confusion(r);
}

/// The confusion matrix among the classes that occur (as truth or prediction), plus background.
fn print_confusion(r: &EvalReport) {
    let n = r.class_names.len();
    let active: Vec<usize> = (0..=n)
        .filter(|&i| {
            (0..=n).any(|j| r.confusion[i][j] > 0) || (0..=n).any(|j| r.confusion[j][i] > 0)
        })
        .collect();
    if active.is_empty() {
        return;
    }
    let label = |i: usize| {
        if i == n {
            "background".to_string()
        } else {
            r.class_names[i].clone()
        }
    };
    println!(
        "\nconfusion at conf {:.3} (rows: predicted, columns: true)",
        r.conf
    );
    print!("{:<22}", "");
    for &j in &active {
        print!(" {:>6}", truncate(&label(j), 6));
    }
    println!();
    for &i in &active {
        print!("{:<22}", label(i));
        for &j in &active {
            print!(" {:>6}", r.confusion[i][j]);
        }
        println!();
    }
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}
