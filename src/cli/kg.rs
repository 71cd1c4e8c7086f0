//! `vistawise kg check|stats|pool`: the knowledge graph and its retrieval.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use vistawise::knowledge::{self, KnowledgeGraph, PathLimits, Relation, Strategy, VisualState};
use vistawise::perception::Perception;
use vistawise::tasks::TaskList;

use super::AppContext;

#[derive(Subcommand)]
pub enum KgCommand {
    /// Validate the graph, its detector-class mapping and the task targets.
    Check(GraphArgs),
    /// Sizes, relations, and the pooled size of every task.
    Stats(GraphArgs),
    /// Pool the graph for a task (and detections) and print the prompt text or Graphviz.
    Pool(PoolArgs),
    /// False positive / negative rates of the retrieval strategies on labelled cases.
    Eval(EvalArgs),
}

#[derive(Args)]
pub struct EvalArgs {
    /// Labelled cases (e.g. kg/eval/minecraft-cases.toml).
    pub cases: PathBuf,
    #[command(flatten)]
    pub graph: GraphArgs,
    /// Print the rates as JSON.
    #[arg(long)]
    pub json: bool,
    /// Cosine threshold of the similarity baseline [default: pooling.similarity_threshold].
    #[arg(long, value_name = "COS")]
    pub similarity_threshold: Option<f32>,
    /// Sentence-embedding model folder [default: embedding.model_dir].
    #[arg(long, value_name = "DIR")]
    pub embedding_model: Option<PathBuf>,
    /// Leave out the similarity baseline (no embedding model needed).
    #[arg(long)]
    pub no_similarity: bool,
}

#[derive(Args)]
pub struct GraphArgs {
    /// Graph file [default: kg/<game.profile>.toml under --root].
    #[arg(long, value_name = "FILE")]
    pub kg: Option<PathBuf>,
    /// Tasks file [default: config/tasks.toml under --root].
    #[arg(long, value_name = "FILE")]
    pub tasks: Option<PathBuf>,
}

#[derive(Args)]
pub struct PoolArgs {
    #[command(flatten)]
    pub graph: GraphArgs,
    /// Task id from the tasks file.
    #[arg(long)]
    pub task: String,
    /// Detections of the current frame: a line of `vistawise detect --json` output.
    #[arg(long, value_name = "FILE.json")]
    pub detections: Option<PathBuf>,
    /// Print Graphviz (dot) with the pooled part highlighted instead of text.
    #[arg(long)]
    pub dot: bool,
    /// Retrieval strategy (the paper's best is psp-emp).
    #[arg(long, value_enum, default_value_t = StrategyArg::PspEmp)]
    pub strategy: StrategyArg,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum StrategyArg {
    PspEmp,
    EmpPsp,
    Psp,
    Emp,
}

impl From<StrategyArg> for Strategy {
    fn from(s: StrategyArg) -> Self {
        match s {
            StrategyArg::PspEmp => Strategy::PspThenEmp,
            StrategyArg::EmpPsp => Strategy::EmpThenPsp,
            StrategyArg::Psp => Strategy::PspOnly,
            StrategyArg::Emp => Strategy::EmpOnly,
        }
    }
}

pub fn run(ctx: &AppContext, cmd: &KgCommand) -> Result<ExitCode> {
    match cmd {
        KgCommand::Check(args) => check(ctx, args),
        KgCommand::Stats(args) => stats(ctx, args),
        KgCommand::Pool(args) => pool(ctx, args),
        KgCommand::Eval(args) => eval(ctx, args),
    }
}

/// `--kg`, else `kg/<profile>.toml` of the profile or, for a profile laid over a base, of the
/// first of its bases that has one.
pub(super) fn load(ctx: &AppContext, args: &GraphArgs) -> Result<(KnowledgeGraph, TaskList)> {
    Ok(ctx.setup().graph_and_tasks(&args.files())?)
}

pub(super) fn limits(ctx: &AppContext) -> PathLimits {
    PathLimits {
        max_length: ctx.config().pooling.max_path_length,
        max_paths: ctx.config().pooling.max_paths,
    }
}

fn check(ctx: &AppContext, args: &GraphArgs) -> Result<ExitCode> {
    let (kg, tasks) = load(ctx, args)?;
    let profile = &ctx.config().game.profile;
    let mut problems = Vec::new();
    // Every class the detector can report must land on a node (or its sightings are lost).
    if let Some(classes) = detector_classes(ctx) {
        for c in kg.unmapped_classes(&classes) {
            problems.push(format!(
                "{}: detector class {c} (from {}) maps to no node: add it to [detector_classes]",
                kg.source.display(),
                ctx.config().detector.model.display()
            ));
        }
    }
    let mut checked = 0;
    for t in tasks.for_profile(profile) {
        checked += 1;
        let Some(target) = kg.node(&t.target) else {
            problems.push(format!(
                "{}:{}: task {} targets \"{}\", which is not a node of {}",
                tasks.source.display(),
                t.line,
                t.id,
                t.target,
                kg.source.display()
            ));
            continue;
        };
        let (found, report) = knowledge::path_search(&kg, kg.player(), target, None, limits(ctx));
        if found.nodes.is_empty() {
            problems.push(format!(
                "{}:{}: task {}: no path from Player to \"{}\" within {} edges",
                tasks.source.display(),
                t.line,
                t.id,
                t.target,
                ctx.config().pooling.max_path_length
            ));
        } else if report.was_cut() {
            println!(
                "note: task {}: path search was cut ({} paths kept; raise pooling.max_path_length or pooling.max_paths)",
                t.id, report.paths
            );
        }
    }
    if !problems.is_empty() {
        for p in &problems {
            eprintln!("{p}");
        }
        bail!("{} problem(s) in the knowledge graph", problems.len());
    }
    println!(
        "{}: ok ({} nodes, {} edges, {} detector classes mapped, {checked} {profile} tasks reachable from Player)",
        kg.source.display(),
        kg.graph.node_count(),
        kg.graph.edge_count(),
        kg.detector_classes.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// Class names of the configured detector, when its file is there and ONNX Runtime loads (found
/// the same way as for every other command).
fn detector_classes(ctx: &AppContext) -> Option<Vec<String>> {
    let model = &ctx.config().detector.model;
    if !model.is_file() {
        return None;
    }
    vistawise::perception::runtime::init(ctx.ort_lib().as_deref()).ok()?;
    vistawise::perception::Detector::load(model, 1)
        .ok()
        .map(|d| d.info().class_names.clone())
}

fn stats(ctx: &AppContext, args: &GraphArgs) -> Result<ExitCode> {
    let (kg, tasks) = load(ctx, args)?;
    println!(
        "{}: {} nodes, {} edges, {} detector classes",
        kg.source.display(),
        kg.graph.node_count(),
        kg.graph.edge_count(),
        kg.detector_classes.len()
    );
    for r in Relation::ALL {
        let n = kg.graph.edge_weights().filter(|w| **w == r).count();
        println!("  {:<22} {n}", format!("\"{r}\""));
    }
    println!(
        "\n{:<16} {:<16} {:>6} {:>6} {:>7} {:>9} {:>9}",
        "task", "target", "paths", "nodes", "edges", "cut", "time"
    );
    for t in tasks.for_profile(&ctx.config().game.profile) {
        let Some(target) = kg.node(&t.target) else {
            println!("{:<16} {:<16} (not a node)", t.id, t.target);
            continue;
        };
        let start = std::time::Instant::now();
        let (found, report) = knowledge::path_search(&kg, kg.player(), target, None, limits(ctx));
        let took = start.elapsed();
        println!(
            "{:<16} {:<16} {:>6} {:>6} {:>7} {:>9} {:>7.1}us",
            t.id,
            t.target,
            report.paths,
            found.nodes.len(),
            found.edges.len(),
            if report.was_cut() { "yes" } else { "no" },
            took.as_secs_f64() * 1e6
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn pool(ctx: &AppContext, args: &PoolArgs) -> Result<ExitCode> {
    let (kg, tasks) = load(ctx, &args.graph)?;
    let lineage = vistawise::toml_lines::profile_lineage(
        std::path::Path::new("config/games"),
        &ctx.config().game.profile,
    );
    let task = tasks.get_inherited(&lineage, &args.task)?;
    let target = kg.node(&task.target).with_context(|| {
        format!(
            "task {} targets \"{}\", which is not a node of {}",
            task.id,
            task.target,
            kg.source.display()
        )
    })?;
    let mut screen = knowledge::ScreenText::default();
    let visual = match &args.detections {
        Some(path) => {
            let perception = read_perception(path)?;
            screen.crosshair = Some((
                perception.frame_w as f32 / 2.0,
                perception.frame_h as f32 / 2.0,
            ));
            let v = knowledge::embed(&kg, &perception);
            if !v.unmapped_classes.is_empty() {
                eprintln!(
                    "warning: detector classes with no node in {}: {}",
                    kg.source.display(),
                    v.unmapped_classes.join(", ")
                );
            }
            v
        }
        None => VisualState::default(),
    };
    let (pooled, report) = knowledge::pool(
        &kg,
        target,
        &task.description,
        &visual,
        limits(ctx),
        args.strategy.into(),
    );
    if args.dot {
        print!("{}", knowledge::to_dot(&kg, &pooled, &visual));
        return Ok(ExitCode::SUCCESS);
    }
    let text = knowledge::textualize(&kg, &pooled, &visual, &screen);
    println!(
        "task: {} ({}), target {}",
        task.id, task.description, task.target
    );
    println!(
        "pooled: {} nodes, {} edges from {} paths{}",
        pooled.nodes.len(),
        pooled.edges.len(),
        report.paths,
        if report.was_cut() {
            " (path search was CUT by pooling.max_path_length / max_paths)"
        } else {
            ""
        }
    );
    println!("\nknowledge:\n{}", text.knowledge);
    println!("\ninventory status: {}", text.inventory);
    println!("environment status: {}", text.environment);
    Ok(ExitCode::SUCCESS)
}

/// Reads the perception of one frame: a `vistawise detect --json` line (its `perception`
/// field) or a bare perception object.
pub fn read_perception(path: &Path) -> Result<Perception> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .with_context(|| format!("{} is empty", path.display()))?;
    let value: serde_json::Value = serde_json::from_str(first)
        .or_else(|_| serde_json::from_str(&text))
        .with_context(|| format!("{} is not JSON", path.display()))?;
    let inner = value.get("perception").cloned().unwrap_or(value);
    serde_json::from_value(inner).with_context(|| {
        format!(
            "{}: expected the output of `vistawise detect --json` (with a perception field)",
            path.display()
        )
    })
}

fn eval(ctx: &AppContext, args: &EvalArgs) -> Result<ExitCode> {
    use vistawise::knowledge::evaluate;
    let (kg, tasks) = load(ctx, &args.graph)?;
    let profile = &ctx.config().game.profile;
    let cases = evaluate::load_cases(&args.cases, &kg, &tasks, profile)?;
    if cases.is_empty() {
        bail!("{} holds no cases", args.cases.display());
    }
    let mut rates = evaluate::evaluate(&kg, &tasks, profile, &cases, limits(ctx));
    if !args.no_similarity {
        rates.push(similarity_rates(ctx, args, &kg, &tasks, &cases)?);
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "cases": cases.len(),
                "graph": kg.source,
                "rates": rates,
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} cases from {} on {} (nodes and edges counted together)",
        cases.len(),
        args.cases.display(),
        kg.source.display()
    );
    println!(
        "{:<16} {:>7} {:>7} {:>10} {:>10}",
        "method", "FPR", "FNR", "retrieved", "labelled"
    );
    for r in &rates {
        println!(
            "{:<16} {:>7.3} {:>7.3} {:>10} {:>10}",
            r.method, r.fpr, r.fnr, r.retrieved, r.expected
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The similarity baseline's rates; needs ONNX Runtime and the MiniLM model folder.
fn similarity_rates(
    ctx: &AppContext,
    args: &EvalArgs,
    kg: &KnowledgeGraph,
    tasks: &TaskList,
    cases: &[vistawise::knowledge::evaluate::Case],
) -> Result<vistawise::knowledge::evaluate::Rates> {
    use vistawise::embedding::SentenceEncoder;
    use vistawise::knowledge::SimilarityRetriever;
    let config = ctx.config();
    let threshold = args
        .similarity_threshold
        .unwrap_or(config.pooling.similarity_threshold);
    if !(-1.0..=1.0).contains(&threshold) {
        bail!("--similarity-threshold {threshold}: must be a cosine similarity in [-1, 1]");
    }
    let dir = args
        .embedding_model
        .clone()
        .unwrap_or_else(|| config.embedding.model_dir.clone());
    vistawise::perception::runtime::init(ctx.ort_lib().as_deref())
        .context("the similarity baseline needs ONNX Runtime (or pass --no-similarity)")?;
    let mut encoder = SentenceEncoder::load(&dir, config.embedding.threads)
        .context("the similarity baseline needs the MiniLM model (or pass --no-similarity)")?;
    let mut retriever = SimilarityRetriever::new(&mut encoder);
    Ok(vistawise::knowledge::evaluate::evaluate_similarity(
        kg,
        tasks,
        &config.game.profile,
        cases,
        &mut retriever,
        threshold,
    )?)
}
