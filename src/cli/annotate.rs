//! `vistawise annotate SOURCE -o DATASET`: pre-label frames with the current detector for a
//! person to correct in X-AnyLabeling (see `vistawise::annotate` and docs/annotation.md).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use vistawise::annotate::{self, AnnotateOptions, DetectorLabeller, VideoSampling};

use super::AppContext;
use super::detector_flags::DetectorFlags;

#[derive(Args, Debug, Clone)]
pub struct SourceArgs {
    /// Video: take a frame at least every SECONDS (0: only on scene changes, see --scene).
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub every: f64,
    /// Video: also take a frame when ffmpeg's scene-change score exceeds SCORE (0-1, e.g. 0.3).
    #[arg(long, value_name = "SCORE")]
    pub scene: Option<f64>,
    /// Skip a frame whose perceptual hash (64-bit dHash) is within BITS of a frame already in
    /// the dataset (a near-duplicate).
    #[arg(long, value_name = "BITS", default_value_t = 4)]
    pub dup_threshold: u32,
    /// Keep near-duplicate frames.
    #[arg(long)]
    pub keep_duplicates: bool,
    /// A new split group (scene) starts when consecutive frames differ by more than BITS; frames
    /// of one group never straddle splits (`vistawise dataset split`).
    #[arg(long, value_name = "BITS", default_value_t = 16)]
    pub group_threshold: u32,
    /// Pre-label frames already in the dataset again (e.g. with a better detector); labels a
    /// person corrected are kept. With `--auto GAME`: label the dataset's frames again from what
    /// the game said when they were taken (`records/`), under the profile's current rules,
    /// without the game.
    #[arg(long)]
    pub relabel: bool,
    /// Overwrite labels a person corrected too (implies --relabel).
    #[arg(long)]
    pub overwrite_corrected: bool,
    #[command(flatten)]
    pub detector: DetectorFlags,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `annotate SOURCE` (clap refuses SOURCE together with `--auto`).
pub fn run(
    ctx: &AppContext,
    source: Option<&Path>,
    out: &Path,
    args: &SourceArgs,
) -> Result<ExitCode> {
    let Some(source) = source else {
        anyhow::bail!(
            "annotate needs SOURCE (an image folder, a video or a session folder) or --auto GAME"
        );
    };
    check_sampling(args)?;
    let cfg = &ctx.config().detector;
    let mut labeller = DetectorLabeller {
        detector: ctx.setup().detector()?,
        options: cfg.detect_options(),
    };
    let opts = AnnotateOptions {
        sampling: VideoSampling {
            every_secs: args.every,
            scene: args.scene,
        },
        duplicate_distance: (!args.keep_duplicates).then_some(args.dup_threshold),
        scene_distance: args.group_threshold,
        relabel: args.relabel,
        overwrite_corrected: args.overwrite_corrected,
        model: cfg.model.display().to_string(),
        model_sha256: super::sha256_file(&cfg.model)?,
        confidence: cfg.confidence,
    };
    let bar = super::progress_bar(
        0,
        "{bar:30} {pos}/{len} frames  {elapsed} (eta {eta})  {msg}",
    );
    let summary = annotate::annotate(source, out, &mut labeller, &opts, &bar)
        .with_context(|| format!("annotate {} -> {}", source.display(), out.display()))?;
    bar.finish_and_clear();
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        print_summary(&summary, out);
    }
    Ok(ExitCode::SUCCESS)
}

/// `--every` and `--scene` take a video's frames somewhere; `--dup-threshold` is a bit count.
fn check_sampling(args: &SourceArgs) -> Result<()> {
    anyhow::ensure!(
        args.every >= 0.0 && args.every.is_finite(),
        "--every must be 0 or more seconds"
    );
    if let Some(s) = args.scene {
        anyhow::ensure!((0.0..=1.0).contains(&s), "--scene must be a score in 0-1");
    }
    anyhow::ensure!(
        args.every > 0.0 || args.scene.is_some(),
        "--every 0 needs --scene SCORE (otherwise only the first frame of a video is taken)"
    );
    anyhow::ensure!(args.dup_threshold <= 64, "--dup-threshold is 0-64 bits");
    Ok(())
}

/// What the run did, and the next step of the workflow.
fn print_summary(summary: &annotate::Summary, out: &Path) {
    println!(
        "{} ({}): {} frames: {} pre-labelled ({} boxes), {} relabelled, {} near-duplicates skipped, {} already done, {} corrected by hand kept; {:.1} s ({:.0} ms detection per frame) -> {}",
        summary.source,
        summary.source_kind,
        summary.frames,
        summary.written,
        summary.boxes,
        summary.relabelled,
        summary.duplicates,
        summary.already_done,
        summary.corrected_kept.len(),
        summary.seconds,
        summary.detect_ms_per_frame,
        out.display()
    );
    if !summary.corrected_kept.is_empty() {
        println!(
            "kept (corrected by hand; --overwrite-corrected replaces them): {}",
            summary.corrected_kept.join(", ")
        );
    }
    println!(
        "next: correct the boxes in X-AnyLabeling (open {}), then `vistawise dataset import {}`",
        out.join("images").display(),
        out.display()
    );
}
