//! `vistawise bench step`: what a step costs above the detector's bare run (agent/bench.rs).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use vistawise::agent::Recorder;
use vistawise::agent::bench::{self, Pixels};
use vistawise::agent::play;
use vistawise::capture::FrameWindow;
use vistawise::capture::WindowCapture;
use vistawise::capture::windows;

use super::AppContext;
use super::kg::GraphArgs;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// One agent step, stage by stage, against the floor (the bare ONNX Runtime run).
    Step(StepArgs),
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CaptureArg {
    /// Show each frame in a window of the bench's own and capture it from there.
    OwnWindow,
    /// Capture the game window (game.window_title) as it is; the frames only count the steps.
    Game,
    /// No capture: the frames go straight to the detector.
    None,
}

#[derive(Args)]
pub struct StepArgs {
    /// Recorded frames (a session folder or a folder of images, all of one size), played in a
    /// loop.
    #[arg(long, value_name = "DIR")]
    pub frames: PathBuf,
    /// Steps to time.
    #[arg(long, default_value_t = 50)]
    pub steps: usize,
    /// Bare inferences run first to warm the detector up (each step is then timed against one
    /// bare inference run just before it).
    #[arg(long, default_value_t = 10)]
    pub warmup: usize,
    /// Where the pixels come from.
    #[arg(long, value_enum, default_value_t = CaptureArg::OwnWindow)]
    pub capture: CaptureArg,
    /// The task whose graph, prompt and planner the steps use.
    #[arg(long, default_value = "log")]
    pub task: String,
    #[command(flatten)]
    pub graph: GraphArgs,
    /// The report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &AppContext, cmd: &BenchCommand) -> Result<ExitCode> {
    match cmd {
        BenchCommand::Step(args) => step(ctx, args),
    }
}

fn step(ctx: &AppContext, args: &StepArgs) -> Result<ExitCode> {
    if args.steps == 0 {
        bail!("--steps must be at least 1");
    }
    let frames = load_frames(&args.frames)?;
    let parts = super::setup::load_parts(ctx, &args.graph, &args.task)?;
    let config = parts.config.clone();
    let mut detector = ctx.setup().detector()?;
    let mut planner = parts.planner()?;
    let (w, h) = (frames[0].width(), frames[0].height());
    let mut pixels = match args.capture {
        CaptureArg::None => Pixels::Frames,
        CaptureArg::OwnWindow => {
            let window = FrameWindow::open("vistawise bench", w as u16, h as u16).context(
                "cannot open the bench's window (is DISPLAY set? --capture none times the rest)",
            )?;
            let capture = WindowCapture::open(window.id(), config.game.capture)?;
            Pixels::OwnWindow {
                window: Box::new(window),
                capture: Box::new(capture),
            }
        }
        CaptureArg::Game => {
            let all = windows::list().context("cannot list windows (is DISPLAY set?)")?;
            let found = windows::find_by_title(&all, &config.game.window_title)?;
            Pixels::Game(Box::new(WindowCapture::open(
                found.id,
                config.game.capture,
            )?))
        }
    };
    // The recording is timed as play does it, into a session folder thrown away afterwards.
    let scratch = tempfile_dir()?;
    let meta = play::meta(&parts, "planner", true, String::new(), String::new());
    let mut recorder = Recorder::create(&scratch, "bench", &meta, config.session.jpeg_quality)?;
    let bar = ProgressBar::new(args.steps as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} steps {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let report = bench::run(
        bench::StepParts {
            parts: &parts,
            detector: &mut detector,
            planner: &mut planner,
            recorder: &mut recorder,
        },
        &frames,
        &mut pixels,
        (args.warmup, args.steps),
        &mut |n| bar.set_position(n as u64),
    );
    bar.finish_and_clear();
    drop(pixels);
    if let Err(e) = std::fs::remove_dir_all(&scratch) {
        tracing::warn!("cannot remove {}: {e}", scratch.display());
    }
    let report = report?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.table());
    }
    Ok(ExitCode::SUCCESS)
}

/// The frames of a folder (a session folder means its frames/), all of the first one's size.
fn load_frames(dir: &std::path::Path) -> Result<Vec<image::RgbImage>> {
    let paths = vistawise::capture::frame_paths(dir)
        .with_context(|| format!("cannot list frames in {}", dir.display()))?;
    if paths.is_empty() {
        bail!("no .jpg or .png frames in {}", dir.display());
    }
    let mut frames: Vec<image::RgbImage> = Vec::with_capacity(paths.len());
    for path in &paths {
        let img = image::open(path)
            .with_context(|| format!("cannot read frame {}", path.display()))?
            .to_rgb8();
        if let Some(first) = frames.first()
            && first.dimensions() != img.dimensions()
        {
            bail!(
                "{} is {}x{}, the first frame {}x{}: the bench plays frames of one size",
                path.display(),
                img.width(),
                img.height(),
                first.width(),
                first.height()
            );
        }
        frames.push(img);
    }
    Ok(frames)
}

fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("vistawise-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}
