//! `vistawise policy prompt|ask|schema|grammar|cases|eval`: the policy's prompt for a frame, one
//! LLM decision on it (validated, nothing sent to the game), the output constraints, and the
//! decision benchmark.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use vistawise::agent::pipeline::{self, Parts};
use vistawise::game::GameProfile;
use vistawise::perception::Perception;
use vistawise::policy::constrain;
use vistawise::policy::{LlmPolicy, MemoryStack};

use super::AppContext;
use super::kg::{GraphArgs, read_perception};

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Print the action prompt for a task and a frame's detections, with its token count.
    Prompt(StepArgs),
    /// Ask the configured LLM for one action on that prompt; print the validated action
    /// (nothing is sent to the game).
    Ask(StepArgs),
    /// What the planner policy would do on that frame (its first step from a fresh start).
    Plan(StepArgs),
    /// Print the JSON schema structured mode sends (response_format).
    Schema(WindowArgs),
    /// Print the GBNF grammar structured mode sends to llama.cpp servers.
    Grammar(WindowArgs),
    /// Write the decision benchmark's cases from winning sessions (one file per session).
    Cases(super::policy_eval::CasesArgs),
    /// Score the configured LLM on the decision benchmark's cases: valid calls, same skill,
    /// agreement with the accepted calls, tokens (cached too), time and cost.
    Eval(super::policy_eval::EvalArgs),
}

#[derive(Args)]
pub struct WindowArgs {
    /// Game window size the coordinates are checked against.
    #[arg(long, value_name = "WxH", default_value = "1280x720")]
    pub window_size: String,
}

#[derive(Args)]
pub struct StepArgs {
    #[command(flatten)]
    pub graph: GraphArgs,
    #[command(flatten)]
    pub window: WindowArgs,
    /// Task id from the tasks file.
    #[arg(long)]
    pub task: String,
    /// Detections of the frame: a line of `vistawise detect --json` output.
    #[arg(long, value_name = "FILE.json")]
    pub detections: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// With `ask`: write every LLM exchange (request, status, response; never the key) into DIR.
    #[arg(long, value_name = "DIR")]
    pub record_llm: Option<PathBuf>,
}

pub fn run(ctx: &AppContext, cmd: &PolicyCommand) -> Result<ExitCode> {
    match cmd {
        PolicyCommand::Prompt(args) => prompt_cmd(ctx, args, false),
        PolicyCommand::Ask(args) => prompt_cmd(ctx, args, true),
        PolicyCommand::Plan(args) => plan_cmd(ctx, args),
        PolicyCommand::Cases(args) => super::policy_eval::cases(ctx, args),
        PolicyCommand::Eval(args) => super::policy_eval::eval(ctx, args),
        PolicyCommand::Schema(args) => {
            let (profile, (w, h)) = profile_and_size(ctx, args)?;
            let bound = ctx.config().llm.reasoning_max_chars;
            let schema = constrain::response_format(&profile.skills, w, h, bound);
            println!("{}", serde_json::to_string_pretty(&schema)?);
            Ok(ExitCode::SUCCESS)
        }
        PolicyCommand::Grammar(args) => {
            let (profile, (w, h)) = profile_and_size(ctx, args)?;
            let bound = ctx.config().llm.reasoning_max_chars;
            print!("{}", constrain::gbnf(&profile.skills, w, h, bound));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn profile_and_size(ctx: &AppContext, args: &WindowArgs) -> Result<(GameProfile, (u32, u32))> {
    let name = &ctx.config().game.profile;
    let profile = GameProfile::load(ctx.root(), name)
        .with_context(|| format!("cannot load the skills of game profile \"{name}\""))?;
    let size = super::skills::parse_size(&args.window_size)?;
    Ok((profile, size))
}

/// The agent's parts for the task, and the frame's perception (an empty frame of the window
/// size when no detections are given).
fn step_setup(ctx: &AppContext, args: &StepArgs) -> Result<(Parts, Perception)> {
    let parts = super::setup::load_parts(ctx, &args.graph, &args.task)?;
    let (w, h) = super::skills::parse_size(&args.window.window_size)?;
    let perception = match &args.detections {
        Some(path) => read_perception(path)?,
        None => Perception {
            frame_w: w,
            frame_h: h,
            ..Perception::default()
        },
    };
    Ok((parts, perception))
}

fn prompt_cmd(ctx: &AppContext, args: &StepArgs, ask: bool) -> Result<ExitCode> {
    let (parts, perception) = step_setup(ctx, args)?;
    let config = &parts.config;
    let graph = pipeline::graph_view(&parts, &perception);
    let (text, tokens) =
        pipeline::build_prompt(&parts, &perception, &graph, &MemoryStack::default());
    if !ask {
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(
                    &serde_json::json!({"prompt": text, "tokens_o200k": tokens})
                )?
            );
        } else {
            println!("{text}");
            eprintln!("{tokens} tokens (o200k_base)");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let policy = LlmPolicy::from_config(&config.llm, args.record_llm.as_deref(), 0.0)?;
    let layout = pipeline::layout(&parts, &perception);
    let expand_ctx =
        pipeline::expand_context(&parts, &layout, perception.frame_w, perception.frame_h);
    let runtime = ctx.setup().async_runtime()?;
    let mut turn = runtime.block_on(policy.decide(&text, &parts.profile.skills, &expand_ctx))?;
    policy.count_unreported(&mut turn, &parts.counter);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&turn)?);
    } else {
        for (i, a) in turn.attempts.iter().enumerate() {
            println!("--- answer {} ---\n{}", i + 1, a.answer.trim());
            if let Some(why) = &a.rejected {
                println!("(rejected: {why})");
            }
        }
        match &turn.action {
            Some(action) => println!(
                "\nvalid action: {} ({} events)",
                action.call,
                action.events.len()
            ),
            None => println!("\nno valid action after {} answers", turn.attempts.len()),
        }
        println!(
            "tokens: {} prompt + {} completion{}; cost: {}",
            turn.usage.prompt_tokens,
            turn.usage.completion_tokens,
            if turn.usage.estimated {
                " (counted by the agent: the endpoint reported no usage)"
            } else {
                ""
            },
            turn.cost_usd.map_or(
                "unknown (no price for this model)".to_string(),
                |c| format!("${c:.5}")
            )
        );
    }
    Ok(if turn.action.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
}

fn plan_cmd(ctx: &AppContext, args: &StepArgs) -> Result<ExitCode> {
    use vistawise::policy::{PlanStep, View};
    let (parts, perception) = step_setup(ctx, args)?;
    let mut planner = parts.planner()?;
    let graph = pipeline::graph_view(&parts, &perception);
    let layout = pipeline::layout(&parts, &perception);
    let view = View {
        kg: &parts.kg,
        visual: &graph.visual,
        perception: &perception,
        layout: &layout,
    };
    let needs = planner.needs_from_world(parts.target, &view);
    if !needs.is_empty() {
        let list: Vec<String> = needs.iter().map(|(n, k)| format!("{n} x{k}")).collect();
        println!(
            "# {} needs from the world in all: {}",
            parts.task.target,
            list.join(", ")
        );
    }
    let step = planner.next(parts.target, &view);
    match step {
        PlanStep::Act(call, why) => println!("{call}    # {why}"),
        PlanStep::Done => println!("done: {} is in the inventory", parts.task.target),
        PlanStep::Stuck(why) => {
            println!("stuck: {why}");
            return Ok(ExitCode::from(3));
        }
    }
    Ok(ExitCode::SUCCESS)
}
