//! `vistawise play --task T`: the agent on the game window, recorded into a session.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use vistawise::agent::Recorder;
use vistawise::agent::pipeline::Parts;
use vistawise::agent::play::{self, PlayOptions, Status};
use vistawise::agent::{self, LlmOptions, PolicyChoice};
use vistawise::capture::WindowCapture;
use vistawise::capture::windows;
use vistawise::capture::{FrameSource, RecordedFrames};
use vistawise::config::Config;
use vistawise::policy::Policy;
use vistawise::skills::{StopFlag, Watcher};

use super::AppContext;
use super::kg::GraphArgs;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PolicyArg {
    Llm,
    Planner,
    /// The LLM names the next item to obtain, the planner obtains it.
    Subgoal,
}

#[derive(Args)]
pub struct PlayArgs {
    /// Task id from the tasks file (e.g. log, wooden_pickaxe, diamond).
    #[arg(long)]
    pub task: String,
    #[command(flatten)]
    pub graph: GraphArgs,
    /// Who decides: the LLM of [llm], the deterministic planner, or both (`subgoal`: the LLM
    /// names the next item, the planner obtains it).
    #[arg(long, value_enum, default_value_t = PolicyArg::Llm)]
    pub policy: PolicyArg,
    /// Run everything but send no input to the game.
    #[arg(long)]
    pub dry_run: bool,
    /// Stop after this many steps [default: safety.max_steps].
    #[arg(long)]
    pub max_steps: Option<u64>,
    /// Stop after this many minutes [default: safety.max_minutes].
    #[arg(long)]
    pub max_minutes: Option<f64>,
    /// Stop when the LLM spend reaches this many dollars [default: safety.max_cost_usd].
    #[arg(long)]
    pub max_cost: Option<f64>,
    /// Session id (folder name under session.dir) [default: date-time-task].
    #[arg(long)]
    pub session_id: Option<String>,
    /// Play on recorded frames instead of the game window (a session folder or a folder of
    /// images, in name order): a full loop with no display. Needs --dry-run.
    #[arg(long, value_name = "DIR")]
    pub frames: Option<PathBuf>,
    /// Record LLM exchanges into DIR as well (for replay in tests).
    #[arg(long, value_name = "DIR")]
    pub record_llm: Option<PathBuf>,
}

pub fn run(ctx: &AppContext, args: &PlayArgs) -> Result<ExitCode> {
    let parts = super::setup::load_parts(ctx, &args.graph, &args.task)?;
    let config = &parts.config;
    let mut detector = ctx.setup().detector()?;
    let mut policy = build_policy(args, &parts)?;

    let stop = StopFlag::default();
    stop.on_signals()
        .context("cannot install the SIGINT/SIGTERM handlers")?;
    let (mut source, source_name) = open_source(args, config)?;
    let _safety = match (source.window_id(), args.dry_run) {
        (Some(id), false) => Some((
            Watcher::start(&config.safety, Some(id), stop.clone())
                .context("cannot start the emergency stop")?,
            // Releases what is held if this process is killed (`kill -9` mid-hold).
            super::InputGuard::start()?,
        )),
        _ => None,
    };

    let mut recorder = create_recorder(args, &parts, policy.name())?;
    eprintln!(
        "playing {} ({}) on {} with the {} policy{}; session {}",
        parts.task.id,
        parts.task.description,
        source_name,
        policy.name(),
        if args.dry_run {
            " (dry run: no input)"
        } else {
            ""
        },
        recorder.dir().display()
    );
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let mut show = |s: &Status| {
        bar.set_message(status_line(&parts.task.id, s));
        bar.tick();
    };
    let options = PlayOptions {
        dry_run: args.dry_run,
        max_steps: args.max_steps.unwrap_or(config.safety.max_steps),
        max_minutes: args.max_minutes.unwrap_or(config.safety.max_minutes),
        max_cost_usd: args.max_cost.unwrap_or(config.safety.max_cost_usd),
        settle: std::time::Duration::from_millis(config.game.settle_ms),
        stop: stop.clone(),
    };
    let mut long_term = super::setup::open_long_term(ctx, &parts)?;
    let player = play::Player {
        parts: &parts,
        detector: &mut detector,
        policy: policy.as_mut(),
        source: source.as_mut(),
        recorder: &mut recorder,
        long_term: &mut long_term,
    };
    let summary = play::play(player, &options, &mut show)?;
    bar.finish_and_clear();
    println!(
        "{} after {} steps (${:.4}); session {}",
        summary.end,
        summary.steps,
        summary.cost_usd,
        recorder.dir().display()
    );
    Ok(if summary.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The session folder, its `meta.json` written (the detector's and the graph's hashes).
fn create_recorder(args: &PlayArgs, parts: &Parts, policy: &str) -> Result<Recorder> {
    let config = &parts.config;
    let meta = play::meta(
        parts,
        policy,
        args.dry_run,
        super::sha256_file(&config.detector.model)?,
        super::sha256_file(&parts.kg.source)?,
    );
    let id = args
        .session_id
        .clone()
        .unwrap_or_else(|| play::session_id(&parts.task.id));
    Ok(Recorder::create(
        &config.session.dir,
        &id,
        &meta,
        config.session.jpeg_quality,
    )?)
}

/// The policy `--policy` names. An LLM-backed one needs a price for its model while a cost cap
/// is set: without one the cap could not work.
fn build_policy(args: &PlayArgs, parts: &Parts) -> Result<Box<dyn Policy>> {
    let choice = match args.policy {
        PolicyArg::Planner => PolicyChoice::Planner,
        PolicyArg::Llm => PolicyChoice::Llm,
        PolicyArg::Subgoal => PolicyChoice::Subgoal,
    };
    let llm = LlmOptions {
        record_to: args.record_llm.clone(),
        cost_cap_usd: args.max_cost.unwrap_or(parts.config.safety.max_cost_usd),
    };
    Ok(agent::build_policy(choice, parts, &llm, None)?)
}

/// The frames to play on, and their name for the start line: the game window, or with
/// `--frames` recorded ones (a dry run only: there is no game to send input to).
fn open_source(args: &PlayArgs, config: &Config) -> Result<(Box<dyn FrameSource>, String)> {
    if let Some(dir) = &args.frames {
        if !args.dry_run {
            bail!(
                "--frames plays recorded frames: there is no game to send input to; add --dry-run"
            );
        }
        let source = RecordedFrames::open(dir)
            .with_context(|| format!("cannot list frames in {}", dir.display()))?;
        return Ok((
            Box::new(source),
            format!("recorded frames in {}", dir.display()),
        ));
    }
    let all = windows::list().context("cannot list windows (is DISPLAY set?)")?;
    let window = windows::find_by_title(&all, &config.game.window_title)?;
    let name = format!("\"{}\" {}x{}", window.title, window.width, window.height);
    let capture = WindowCapture::open(window.id, config.game.capture)
        .with_context(|| format!("cannot capture the game window {name}"))?;
    Ok((Box::new(capture), name))
}

/// The live status line: step, task, last action, stage times, tokens and cost.
fn status_line(task: &str, s: &Status) -> String {
    let t = &s.stage_ms;
    let cached = match s.cached_tokens {
        0 => String::new(),
        n => format!(" ({n} cached)"),
    };
    let note = match s.note.as_str() {
        "" => String::new(),
        n => format!(" | {n}"),
    };
    format!(
        "step {} | {task} | {} | capture {:.0} detect {:.0} graph {:.1} prompt {:.1} policy {:.0} act {:.0} ms | {} tokens{cached} | ${:.4}{note}",
        s.step,
        s.last_action,
        t.capture,
        t.detect,
        t.graph,
        t.prompt,
        t.policy,
        t.act,
        s.tokens,
        s.cost_usd,
    )
}
