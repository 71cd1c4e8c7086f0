//! Argument parsing and the shared set-up of every command.

mod annotate;
mod autolabel;
mod bench;
mod config_cmd;
mod counts;
mod dataset;
mod detect;
mod detector_flags;
mod doctor;
mod eval;
mod eval_compare;
mod input_guard;
mod kg;
mod memory;
mod play;
mod policy;
mod policy_eval;
mod position;
mod replay;
mod report;
mod setup;
mod skills;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use vistawise::config::{Config, LoadedConfig, Override};

#[derive(Parser)]
#[command(
    name = "vistawise",
    version,
    about = "A desktop Minecraft agent: YOLO perception, knowledge-graph pooling, LLM policy, mouse/keyboard skills"
)]
struct Cli {
    /// The project root: config/default.toml, config/games/, config/tasks.toml, kg/, skills/
    /// and the config's relative data paths (detector, prompt template, prices, encoder) are
    /// read from here, whatever the working directory.
    #[arg(
        long,
        global = true,
        env = "VISTAWISE_ROOT",
        value_name = "DIR",
        default_value = "."
    )]
    root: PathBuf,
    /// Config file laid over the built-in defaults [default: config/default.toml under --root
    /// if present].
    #[arg(long, global = true, env = "VISTAWISE_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// Override one key, e.g. --set detector.confidence=0.4 (repeatable; beats file and env).
    #[arg(long = "set", global = true, value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Game profile: sets game.profile and the keys in [settings] of config/games/GAME.toml
    /// (window title, detector, reach) over the config file (env and --set still win).
    #[arg(long, global = true, env = "VISTAWISE_GAME", value_name = "GAME")]
    game: Option<String>,
    /// Path to libonnxruntime.so.1.31.1 (default: search; see `vistawise doctor`).
    #[arg(long, global = true, env = "VISTAWISE_ORT_LIB", value_name = "FILE")]
    ort_lib: Option<PathBuf>,
    /// More log output (-v info, -vv debug); VISTAWISE_LOG=filter also works.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Detect objects in an image or a folder of images.
    Detect(detect::DetectArgs),
    /// Stack counts drawn in inventory slots: read them from a screenshot, learn the game's digits.
    #[command(subcommand)]
    Counts(counts::CountsCommand),
    /// The player's position as the game's debug screen prints it: read it from a screenshot,
    /// learn the game's glyphs.
    #[command(subcommand)]
    Position(position::PositionCommand),
    /// Inspect the configuration.
    #[command(subcommand)]
    Config(config_cmd::ConfigCommand),
    /// Check the set-up: ONNX Runtime, detector, display, game window, LLM endpoint.
    Doctor(doctor::DoctorArgs),
    /// Measure a detector on a labelled YOLO dataset (AP50, AP50-95, P/R, confusion).
    Eval(eval::EvalArgs),
    /// The knowledge graph: check it, see its stats, pool it for a task.
    #[command(subcommand)]
    Kg(kg::KgCommand),
    /// Play a task on the game window (the agent loop), recording a session.
    Play(play::PlayArgs),
    /// Re-run a recorded session with today's detector, graph, prompt and policy; show what differs.
    Replay(replay::ReplayArgs),
    /// Write a session's self-contained HTML report.
    Report(report::ReportArgs),
    /// The policy: the prompt for a frame, one LLM decision, the output constraints.
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
    /// Pre-label frames (image folder, video, session) for correction in X-AnyLabeling, or
    /// with `--auto GAME` have the running game label itself.
    Annotate(AnnotateArgs),
    /// YOLO dataset tools: import corrected JSON, split, merge, stats.
    #[command(subcommand)]
    Dataset(dataset::DatasetCommand),
    /// The skill library: list it, run one skill (dry-run shows the events).
    #[command(subcommand)]
    Skills(skills::SkillsCommand),
    /// The long-term memory (memory.modules): list, show, clear entries; how-tos; exploration;
    /// prompt tokens per module.
    #[command(subcommand)]
    Memory(memory::MemoryCommand),
    /// Benchmarks: one agent step, stage by stage, against the detector's bare run.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Started by commands that send real input: releases every held key and button when its
    /// stdin closes (the agent is gone, even by `kill -9`).
    #[command(hide = true)]
    InputGuard,
}

#[derive(clap::Args)]
struct AnnotateArgs {
    /// An image folder, a video file or a recorded session folder (or use --auto).
    #[arg(value_name = "SOURCE", conflicts_with = "auto")]
    source: Option<PathBuf>,
    /// The game that labels its own frames (it must be running; see tests/minetest/gameenv.sh).
    #[arg(long, value_name = "GAME")]
    auto: Option<String>,
    /// The dataset folder (YOLO layout).
    #[arg(short, long, value_name = "DATASET")]
    output: PathBuf,
    #[command(flatten)]
    auto_args: autolabel::AutoArgs,
    #[command(flatten)]
    source_args: annotate::SourceArgs,
}

use input_guard::InputGuard;

/// What every command gets: the effective config and the explicit ONNX Runtime path.
pub struct AppContext {
    pub loaded: LoadedConfig,
    pub ort_lib: Option<PathBuf>,
    /// `--root`: where the project's data files are read from.
    pub root: PathBuf,
}

impl AppContext {
    pub fn root(&self) -> &std::path::Path {
        &self.root
    }

    /// The library's composition over this command's config, root and ONNX Runtime library.
    pub fn setup(&self) -> vistawise::agent::Setup<'_> {
        vistawise::agent::Setup {
            config: self.config(),
            root: &self.root,
            ort_lib: self.ort_lib(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.loaded.config
    }
    /// The ONNX Runtime library asked for: the flag, else `onnxruntime.library`.
    pub fn ort_lib(&self) -> Option<PathBuf> {
        self.ort_lib.clone().or_else(|| {
            let configured = &self.config().onnxruntime.library;
            (!configured.as_os_str().is_empty()).then(|| configured.clone())
        })
    }
}

/// Every `--set`, before and after the subcommand, in order. clap keeps only the subcommand's
/// occurrences of a global option when both places have some, and a dropped
/// `--set safety.max_steps=2` is a lost safety limit; the command line itself says them all.
fn all_set_assignments(parsed: &[String], args: &[String]) -> Vec<String> {
    let mut given = Vec::new();
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        if arg == "--" {
            break;
        }
        if arg == "--set" {
            if let Some(value) = rest.next() {
                given.push(value.clone());
            }
        } else if let Some(value) = arg.strip_prefix("--set=") {
            given.push(value.to_string());
        }
    }
    // Only where clap's list is the tail of the command line's (the case it drops the rest) is
    // the command line's list taken; anything else keeps what clap parsed.
    if given.len() > parsed.len() && given.ends_with(parsed) {
        given
    } else {
        parsed.to_vec()
    }
}

/// Every config override of this run, weakest first: the `--game` profile's `[settings]`, the
/// environment's `VISTAWISE_*`, each `--set`, then the subcommand's own flags.
fn collect_overrides(cli: &Cli) -> Result<Vec<Override>> {
    let mut overrides = match &cli.game {
        Some(game) => vistawise::config::game_settings(
            &cli.root.join("config/games").join(format!("{game}.toml")),
            game,
        )
        .with_context(|| format!("--game {game}"))?,
        None => Vec::new(),
    };
    overrides.extend(Override::from_env(std::env::vars()));
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    for assignment in all_set_assignments(&cli.set, &args) {
        overrides.push(Override::parse_assignment(&assignment)?);
    }
    overrides.extend(match &cli.command {
        Command::Detect(args) => args.detector.overrides(),
        Command::Doctor(args) => args.overrides(),
        Command::Annotate(args) if args.source.is_some() => args.source_args.detector.overrides(),
        Command::Dataset(_) => Vec::new(),
        Command::Config(_)
        | Command::Counts(_)
        | Command::Position(_)
        | Command::Eval(_)
        | Command::Kg(_)
        | Command::Skills(_)
        | Command::Policy(_)
        | Command::Play(_)
        | Command::Replay(_)
        | Command::Report(_)
        | Command::Annotate(_)
        | Command::Memory(_)
        | Command::Bench(_)
        | Command::InputGuard => Vec::new(),
    });
    Ok(overrides)
}

pub fn run() -> Result<ExitCode> {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    if let Command::InputGuard = cli.command {
        return input_guard::run();
    }

    let overrides = collect_overrides(&cli)?;
    let file = cli.config.clone().or_else(|| {
        let local = cli.root.join("config/default.toml");
        local.is_file().then_some(local)
    });
    let mut loaded = Config::load(file.as_deref(), &overrides).context("invalid configuration")?;
    loaded.config = loaded.config.rooted(&cli.root);
    let ctx = AppContext {
        loaded,
        ort_lib: cli.ort_lib.clone(),
        root: cli.root.clone(),
    };
    match cli.command {
        Command::Detect(args) => detect::run(&ctx, &args),
        Command::Config(cmd) => config_cmd::run(&ctx, &cmd),
        Command::Counts(cmd) => counts::run(&ctx, &cmd),
        Command::Position(cmd) => position::run(&ctx, &cmd),
        Command::Doctor(args) => doctor::run(&ctx, &args),
        Command::Eval(args) => eval::run(&ctx, &args),
        Command::Kg(cmd) => kg::run(&ctx, &cmd),
        Command::Dataset(cmd) => dataset::run(&cmd),
        Command::Skills(cmd) => skills::run(&ctx, &cmd),
        Command::Policy(cmd) => policy::run(&ctx, &cmd),
        Command::Play(args) => play::run(&ctx, &args),
        Command::Replay(args) => replay::run(&ctx, &args),
        Command::Report(args) => report::run(&args),
        Command::Memory(cmd) => memory::run(&ctx, &cmd),
        Command::Bench(cmd) => bench::run(&ctx, &cmd),
        Command::InputGuard => input_guard::run(),
        Command::Annotate(args) => match &args.auto {
            Some(game) => autolabel::run(
                &ctx,
                game,
                &args.output,
                &args.auto_args,
                args.source_args.relabel,
            ),
            None => annotate::run(
                &ctx,
                args.source.as_deref(),
                &args.output,
                &args.source_args,
            ),
        },
    }
}

fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => "info,ort=warn",
        _ => "debug",
    };
    let filter =
        EnvFilter::try_from_env("VISTAWISE_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Hex sha256 of a file (model cards and reports identify models by it).
pub fn sha256_file(path: &std::path::Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    let mut file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(format!("{:x}", hasher.finalize()))
}

/// A progress bar of `len` steps drawn with `template` (indicatif's syntax); a template indicatif
/// rejects falls back to its default bar rather than failing the command.
pub fn progress_bar(len: u64, template: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

#[cfg(test)]
mod tests {
    use super::all_set_assignments;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sets_before_and_after_the_subcommand_are_all_kept() {
        let args = strings(&[
            "vistawise",
            "--set",
            "safety.max_steps=2",
            "play",
            "--set=session.dir=x",
        ]);
        assert_eq!(
            all_set_assignments(&strings(&["session.dir=x"]), &args),
            strings(&["safety.max_steps=2", "session.dir=x"])
        );
        // Nothing dropped: clap's list stands.
        assert_eq!(
            all_set_assignments(&strings(&["session.dir=x"]), &args[3..]),
            strings(&["session.dir=x"])
        );
        // A `--set` after `--` is an argument, not an option.
        let args = strings(&["vistawise", "play", "--set", "a=1", "--", "--set", "b=2"]);
        assert_eq!(
            all_set_assignments(&strings(&["a=1"]), &args),
            strings(&["a=1"])
        );
    }
}
