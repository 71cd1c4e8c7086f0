//! `vistawise replay SESSION`: re-run perception, graph, prompt and policy on a recorded
//! session's frames and report where the new run differs. Exit status 0: no decision changed;
//! 1: some decision changed.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use vistawise::agent::Session;
use vistawise::agent::pipeline::Parts;
use vistawise::agent::{LlmOptions, PolicyChoice, build_policy};
use vistawise::agent::{StepDiff, replay};
use vistawise::llm::{Spent, UsageSummary};
use vistawise::perception::Detector;
use vistawise::policy::Policy;

use super::AppContext;
use super::kg::GraphArgs;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReplayPolicyArg {
    /// Re-validate the recorded answers (deterministic, no network).
    Recorded,
    /// Ask the configured LLM again.
    Llm,
    /// The deterministic planner.
    Planner,
}

#[derive(Args)]
pub struct ReplayArgs {
    /// Session folder (sessions/<id>).
    pub session: PathBuf,
    #[arg(long, value_enum, default_value_t = ReplayPolicyArg::Recorded)]
    pub policy: ReplayPolicyArg,
    /// Detector to use instead of detector.model.
    #[arg(long, value_name = "ONNX")]
    pub model: Option<PathBuf>,
    #[command(flatten)]
    pub graph: GraphArgs,
    /// Prompt template to use instead of llm.prompt_template.
    #[arg(long, value_name = "FILE")]
    pub prompt_template: Option<PathBuf>,
    /// Decisions recalled into the prompt instead of memory.recall_steps.
    #[arg(long)]
    pub recall_steps: Option<usize>,
    /// Print the differences as JSON.
    #[arg(long)]
    pub json: bool,
}

fn print_step(d: &StepDiff) {
    let mut parts = Vec::new();
    if !d.detections.is_empty() {
        parts.push(format!("detections {}", d.detections.join(", ")));
    }
    if d.knowledge_changed {
        parts.push("pooled knowledge changed".into());
    }
    if d.status_changed {
        parts.push("status lines changed".into());
    }
    if let Some(p) = &d.prompt {
        parts.push(format!("prompt {p}"));
    }
    let show = |a: &Option<vistawise::skills::SkillCall>| {
        a.as_ref().map_or("(none)".into(), |c| c.to_string())
    };
    let action = if d.decision_changed() {
        format!(
            "DECISION CHANGED: recorded {}, now {} ({})",
            show(&d.recorded_action),
            show(&d.replayed_action),
            d.replayed_validation
        )
    } else {
        format!("same action {}", show(&d.recorded_action))
    };
    parts.push(action);
    println!("step {}: {}", d.step, parts.join("; "));
}

/// The policy `--policy` names: the session's own answers, the planner, or the configured LLM.
fn replay_policy<'s>(
    choice: ReplayPolicyArg,
    parts: &Parts,
    session: &'s Session,
) -> Result<Box<dyn Policy + 's>> {
    let choice = match choice {
        ReplayPolicyArg::Recorded => PolicyChoice::Recorded,
        ReplayPolicyArg::Planner => PolicyChoice::Planner,
        ReplayPolicyArg::Llm => PolicyChoice::Llm,
    };
    Ok(build_policy(
        choice,
        parts,
        &LlmOptions::default(),
        Some(session),
    )?)
}

/// What the replayed LLM spent, over the steps it was asked (a step the success check decided
/// asked nothing).
fn llm_spent(diffs: &[StepDiff]) -> UsageSummary {
    let asked: Vec<Spent> = diffs
        .iter()
        .filter(|d| d.usage.total() > 0)
        .map(|d| Spent {
            usage: d.usage,
            seconds: d.policy_s,
            cost_usd: d.cost_usd,
        })
        .collect();
    UsageSummary::of(&asked)
}

pub fn run(ctx: &AppContext, args: &ReplayArgs) -> Result<ExitCode> {
    let session = Session::load(&args.session)
        .with_context(|| format!("cannot read session {}", args.session.display()))?;
    if session.truncated_tail {
        eprintln!("note: the session's last line was cut off (crash?) and is skipped");
    }
    let mut parts = super::setup::load_parts(ctx, &args.graph, &session.meta.task)?;
    if let Some(t) = &args.prompt_template {
        parts.config.llm.prompt_template = t.clone();
        parts.template = vistawise::policy::PromptTemplate::load(t)?;
    }
    if let Some(n) = args.recall_steps {
        parts.config.memory.recall_steps = n;
    }
    let model = args
        .model
        .clone()
        .unwrap_or_else(|| parts.config.detector.model.clone());
    ctx.setup().onnx_runtime()?;
    let mut detector = Detector::from_config(&vistawise::config::DetectorConfig {
        model: model.clone(),
        ..parts.config.detector.clone()
    })?;
    let mut policy = replay_policy(args.policy, &parts, &session)?;
    if !args.json {
        println!(
            "replaying {} ({} steps, task {}, recorded with the {} policy) with detector {}",
            args.session.display(),
            session.steps.len(),
            session.meta.task,
            session.meta.policy,
            model.display()
        );
    }
    let json = args.json;
    let diffs = replay(&parts, &mut detector, &session, policy.as_mut(), &mut |d| {
        if !json {
            print_step(d);
        }
    })?;
    let changed = diffs.iter().filter(|d| d.decision_changed()).count();
    let spent = (args.policy == ReplayPolicyArg::Llm).then(|| llm_spent(&diffs));
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "session": args.session,
                "steps": diffs.len(),
                "decisions_changed": changed,
                "llm": spent,
                "diffs": diffs,
            }))?
        );
    } else {
        println!("{changed} of {} decisions changed", diffs.len());
        if let Some(s) = &spent {
            println!("LLM {}", s.line());
        }
    }
    Ok(if changed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
