//! `vistawise policy cases` and `vistawise policy eval`: the decision benchmark's cases from
//! winning sessions, and a policy's score on them (see `agent::policy_eval`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use vistawise::agent::Session;
use vistawise::agent::decision_bench::{self, CaseFile, CaseResult, Score};
use vistawise::policy::LlmPolicy;

use super::AppContext;
use super::kg::GraphArgs;

#[derive(Args)]
pub struct CasesArgs {
    /// Session folders of winning runs (sessions/<id>).
    #[arg(required = true)]
    pub sessions: Vec<PathBuf>,
    /// Folder the cases files go to, one per session (<session id>.jsonl).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub graph: GraphArgs,
}

#[derive(Args)]
pub struct EvalArgs {
    /// Cases files (`policy cases` output) or folders of them; every file must be of the
    /// configured game (`--game`).
    #[arg(required = true)]
    pub cases: Vec<PathBuf>,
    /// Prompt template to use instead of llm.prompt_template.
    #[arg(long, value_name = "FILE")]
    pub prompt_template: Option<PathBuf>,
    /// Write every case's result as a JSON line here, each as soon as it is known.
    #[arg(long, value_name = "FILE.jsonl")]
    pub results: Option<PathBuf>,
    /// Print the score as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub graph: GraphArgs,
}

pub fn cases(ctx: &AppContext, args: &CasesArgs) -> Result<ExitCode> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let game = &ctx.config().game.profile;
    for dir in &args.sessions {
        let session =
            Session::load(dir).with_context(|| format!("cannot read session {}", dir.display()))?;
        // The game the session was played with is its config's (`meta.profile` is the task's
        // profile, which a profile laid over another shares: minecraft-web plays minecraft's).
        let played = toml::from_str::<toml::Value>(&session.meta.config)
            .ok()
            .and_then(|c| c.get("game")?.get("profile")?.as_str().map(str::to_string))
            .unwrap_or_else(|| session.meta.profile.clone());
        if &played != game {
            bail!(
                "{} was played with game profile \"{played}\": run `vistawise --game {played} policy cases ...`",
                dir.display(),
            );
        }
        let parts = super::setup::load_parts(ctx, &args.graph, &session.meta.task)?;
        let file = CaseFile::from_session(&parts, &session, game);
        let path = args.out.join(format!("{}.jsonl", file.header.source));
        file.save(&path)?;
        println!(
            "{}: {} cases of {} steps (task {})",
            path.display(),
            file.cases.len(),
            session.steps.len(),
            file.header.task
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The cases files named: files as given, folders' `*.jsonl` sorted by name.
fn case_paths(given: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for p in given {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("cannot list {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "jsonl"))
                .collect();
            found.sort();
            if found.is_empty() {
                bail!("{} holds no cases files (*.jsonl)", p.display());
            }
            paths.extend(found);
        } else {
            paths.push(p.clone());
        }
    }
    Ok(paths)
}

/// The cases files of `paths`, each checked to be of the config's game.
fn load_case_files(ctx: &AppContext, paths: &[PathBuf]) -> Result<Vec<CaseFile>> {
    let game = &ctx.config().game.profile;
    let mut files = Vec::new();
    for path in case_paths(paths)? {
        let file = CaseFile::load(&path)?;
        if file.header.game != *game {
            bail!(
                "{} holds cases of game \"{}\": run `vistawise --game {} policy eval ...`",
                path.display(),
                file.header.game,
                file.header.game
            );
        }
        files.push(file);
    }
    Ok(files)
}

/// `--results`: every case's result as a JSON line, flushed as it comes.
struct ResultSink {
    out: Option<(PathBuf, std::fs::File)>,
}

impl ResultSink {
    fn create(path: Option<&Path>) -> Result<Self> {
        let out = match path {
            Some(p) => Some((
                p.to_path_buf(),
                std::fs::File::create(p)
                    .with_context(|| format!("cannot create {}", p.display()))?,
            )),
            None => None,
        };
        Ok(ResultSink { out })
    }

    fn write(&mut self, r: &CaseResult) -> Result<(), decision_bench::EvalError> {
        let Some((path, out)) = self.out.as_mut() else {
            return Ok(());
        };
        let written = serde_json::to_string(r)
            .map_err(std::io::Error::other)
            .and_then(|line| writeln!(out, "{line}"))
            .and_then(|()| out.flush());
        written.map_err(|e| decision_bench::EvalError::Write {
            path: path.clone(),
            reason: e.to_string(),
        })
    }
}

pub fn eval(ctx: &AppContext, args: &EvalArgs) -> Result<ExitCode> {
    let files = load_case_files(ctx, &args.cases)?;
    let total: u64 = files.iter().map(|f| f.cases.len() as u64).sum();
    let mut sink = ResultSink::create(args.results.as_deref())?;
    let runtime = ctx.setup().async_runtime()?;
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} cases {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let llm = &ctx.config().llm;
    let template_path = args
        .prompt_template
        .clone()
        .unwrap_or_else(|| llm.prompt_template.clone());
    let template = vistawise::policy::PromptTemplate::load(&template_path)?;
    let policy = LlmPolicy::from_config(llm, None, 0.0)?;
    let mut all: Vec<CaseResult> = Vec::new();
    let mut per_file: Vec<(String, Score)> = Vec::new();
    for file in &files {
        let mut parts = super::setup::load_parts(ctx, &args.graph, &file.header.task)?;
        parts.config.llm.prompt_template = template_path.clone();
        parts.template = template.clone();
        let results = decision_bench::run_file(&parts, &policy, file, &runtime, &mut |r| {
            sink.write(r)?;
            bar.inc(1);
            bar.set_message(format!(
                "{}: step {} {}",
                r.file,
                r.step,
                if r.agrees { "agrees" } else { "differs" }
            ));
            Ok(())
        })?;
        let name = file
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        per_file.push((name, Score::of(&results)));
        all.extend(results);
    }
    bar.finish_and_clear();
    let label = Label {
        model: &llm.model,
        mode: match llm.output_mode {
            vistawise::config::OutputMode::Text => "text".to_string(),
            vistawise::config::OutputMode::Structured => format!("{:?}", llm.constrain),
        },
        template: template_path,
    };
    let overall = Score::of(&all);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "model": label.model,
                "mode": label.mode,
                "template": label.template,
                "files": per_file,
                "overall": overall,
            }))?
        );
    } else {
        print_table(&label, &per_file, &overall);
    }
    Ok(ExitCode::SUCCESS)
}

struct Label<'a> {
    model: &'a str,
    mode: String,
    template: PathBuf,
}

fn pct(k: usize, n: usize) -> String {
    if n == 0 {
        return "-".into();
    }
    format!("{:.0}%", 100.0 * k as f64 / n as f64)
}

fn print_table(label: &Label, per_file: &[(String, Score)], overall: &Score) {
    println!(
        "model {}, mode {}, template {}",
        label.model,
        label.mode,
        label.template.display()
    );
    println!("| cases | n | valid | same skill | agrees (95% interval) |");
    println!("|---|---:|---:|---:|---:|");
    let row = |name: &str, s: &Score| {
        println!(
            "| {name} | {} | {} | {} | {} ({:.0}-{:.0}%) |",
            s.cases,
            pct(s.valid, s.cases),
            pct(s.same_skill, s.cases),
            pct(s.agrees, s.cases),
            100.0 * s.agreement_interval.0,
            100.0 * s.agreement_interval.1,
        );
    };
    for (name, s) in per_file {
        row(name, s);
    }
    row("all", overall);
    if !overall.invalid_reasons.is_empty() {
        println!("invalid answers:");
        for (reason, n) in &overall.invalid_reasons {
            println!("  {n} x {reason}");
        }
    }
    println!("{}", overall.spent.line());
}
