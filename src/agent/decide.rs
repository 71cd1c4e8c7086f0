//! The policy seam: every way of choosing a step's action (the planner, the LLM choosing every
//! skill call, the sub-goal split between them, the answers a session recorded) is a [`Policy`],
//! asked the same way by `play` and `replay` with what the step saw. The success check and
//! MINDSTORES' revision sit around a policy, not inside one.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use super::pipeline::{self, Decision, GraphView, Parts};
use super::session::{Session, Validation};
use crate::llm::LlmError;
use crate::llm::answers_in_json;
use crate::perception::Perception;
use crate::policy::llm_policy::validate_answer;
use crate::policy::memory::summarize;
use crate::policy::planner::{PlanStep, Planner, View};
use crate::policy::subgoal::{self, SubgoalPolicy};
use crate::policy::{Choice, LlmPolicy, LlmSetupError, MemoryStack};
use crate::skills::{StopFlag, StopReason};
use crate::toml_lines::DataFileError;

/// What a policy decides from: one step's view and the prompt rendered from it.
#[derive(Clone, Copy)]
pub struct Observation<'a> {
    pub parts: &'a Parts,
    /// The step's number in its session (1 = first).
    pub step: u64,
    pub perception: &'a Perception,
    pub graph: &'a GraphView,
    /// The episode's earlier decisions (the LIFO memory stack).
    pub memory: &'a MemoryStack,
    /// The long-term memory's `{long_term_memory}` text ("" without modules).
    pub long_term: &'a str,
    /// The step's prompt.
    pub prompt: &'a str,
}

/// Runs the requests of an LLM-backed policy until they end or a stop is asked for.
pub struct Asker<'a> {
    pub runtime: &'a tokio::runtime::Runtime,
    pub stop: &'a StopFlag,
}

impl Asker<'_> {
    pub fn ask<T>(
        &self,
        request: impl Future<Output = Result<T, LlmError>>,
    ) -> Result<T, DecideError> {
        match until_stopped(self.runtime, self.stop, request) {
            Some(answer) => Ok(answer?),
            None => Err(DecideError::Stopped),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error("stopped while asking the LLM")]
    Stopped,
}

/// A way of choosing a step's action.
pub trait Policy {
    /// The name a session records (`meta.json`'s `policy`).
    fn name(&self) -> &'static str;

    fn decide(&mut self, obs: &Observation<'_>, asker: &Asker<'_>)
    -> Result<Decision, DecideError>;

    /// Whether MINDSTORES' outcome prediction may send the chosen action back with the
    /// prediction (a policy that reads the prompt: the LLM choosing every call).
    fn revisable(&self) -> bool {
        false
    }

    /// Whether the policy decides the steps the success check would decide itself (the
    /// recorded answers reproduce what the session did, its looks in the inventory included).
    fn decides_checked_steps(&self) -> bool {
        false
    }
}

impl Policy for Planner {
    fn name(&self) -> &'static str {
        "planner"
    }

    fn decide(&mut self, obs: &Observation<'_>, _: &Asker<'_>) -> Result<Decision, DecideError> {
        Ok(planner_decision(obs.parts, self, obs.perception, obs.graph))
    }
}

impl Policy for LlmPolicy {
    fn name(&self) -> &'static str {
        "llm"
    }

    fn decide(
        &mut self,
        obs: &Observation<'_>,
        asker: &Asker<'_>,
    ) -> Result<Decision, DecideError> {
        asker.ask(llm_decision(obs.parts, self, obs.prompt, obs.perception))
    }

    fn revisable(&self) -> bool {
        true
    }
}

impl Policy for SubgoalPolicy {
    fn name(&self) -> &'static str {
        "subgoal"
    }

    fn decide(
        &mut self,
        obs: &Observation<'_>,
        asker: &Asker<'_>,
    ) -> Result<Decision, DecideError> {
        asker.ask(subgoal_decision(obs, self))
    }
}

/// The answers a session recorded, re-validated against today's skill library: a replay that
/// changes the detector or the graph and keeps the decisions.
pub struct Recorded<'s> {
    pub session: &'s Session,
}

impl Policy for Recorded<'_> {
    fn name(&self) -> &'static str {
        "recorded"
    }

    fn decide(&mut self, obs: &Observation<'_>, _: &Asker<'_>) -> Result<Decision, DecideError> {
        let step = self.session.steps.iter().find(|s| s.step == obs.step);
        Ok(match step {
            Some(step) => recorded_decision(obs.parts, step),
            None => Decision {
                validation: Validation::NoAnswer,
                ..Decision::default()
            },
        })
    }

    fn decides_checked_steps(&self) -> bool {
        true
    }
}

/// A policy's decision, or one with no action that says why there is none: an LLM that cannot
/// be reached ends no session by itself (the step records why and the loop goes on; the
/// limits still apply).
pub fn or_no_action(decided: Result<Decision, DecideError>) -> Decision {
    match decided {
        Ok(d) => d,
        Err(DecideError::Stopped) => Decision::no_action(Validation::Stopped),
        Err(DecideError::Llm(e)) => Decision::no_action(Validation::LlmFailed(e.to_string())),
    }
}

/// Runs an LLM request until it ends or a stop is requested (looked at every 50 ms): Ctrl-C or
/// the emergency stop cut a slow request or a retry's back-off at once instead of after it.
/// `None` when stopped. A lost focus is no stop here: the loop pauses on it before acting.
pub fn until_stopped<F: Future>(
    runtime: &tokio::runtime::Runtime,
    stop: &StopFlag,
    request: F,
) -> Option<F::Output> {
    let stopped = async {
        while matches!(stop.reason(), None | Some(StopReason::WindowLost)) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    runtime.block_on(async {
        tokio::select! {
            out = request => Some(out),
            () = stopped => None,
        }
    })
}

pub fn planner_decision(
    parts: &Parts,
    planner: &mut Planner,
    perception: &Perception,
    graph: &GraphView,
) -> Decision {
    let layout = pipeline::layout(parts, perception);
    let view = View {
        kg: &parts.kg,
        visual: &graph.visual,
        perception,
        layout: &layout,
    };
    match planner.next(parts.target, &view) {
        PlanStep::Act(call, why) => pipeline::validate_call(parts, call, why, perception),
        PlanStep::Done => Decision::done(),
        PlanStep::Stuck(why) => Decision {
            reasoning: why.clone(),
            ..Decision::no_action(Validation::PlannerStuck(why))
        },
    }
}

/// The sub-goal policy's step: the planner works toward the current goal; when the goal is
/// obtained, the planner is stuck, or there is none, the LLM is asked (at most once a step) to
/// name the next item from the options, with the step's prompt whose action list and answer
/// format are the goal question's.
async fn subgoal_decision(
    obs: &Observation<'_>,
    policy: &mut SubgoalPolicy,
) -> Result<Decision, LlmError> {
    let Observation {
        parts,
        perception,
        graph,
        ..
    } = *obs;
    let layout = pipeline::layout(parts, perception);
    let view = View {
        kg: &parts.kg,
        visual: &graph.visual,
        perception,
        layout: &layout,
    };
    let mut asked: Option<Choice> = None;
    loop {
        let reasoning = asked.as_ref().map(|c| c.reasoning.as_str());
        if let Some(mut d) = pursue_goal(parts, policy, &view, reasoning) {
            add_choice(&mut d, asked);
            return Ok(d);
        }
        if asked.is_some() {
            break;
        }
        let options = policy.options(&parts.kg, &graph.pooled, parts.target, &|n| view.has(n));
        let json = answers_in_json(parts.config.llm.output_mode, parts.config.llm.constrain);
        let mut values =
            pipeline::prompt_values(parts, perception, graph, obs.memory, obs.long_term);
        values.skill_library = subgoal::goal_library_text(&options);
        values.output_format = subgoal::goal_format_text(json, policy.last_outcome.as_deref());
        let question = parts.template.render(&values);
        let mut choice = policy.llm.choose(&question, &options).await?;
        policy
            .llm
            .count_unreported_choice(&mut choice, &parts.counter);
        policy.goal = choice.goal.as_deref().and_then(|g| parts.kg.node(g));
        policy.goal_steps = 0;
        let none = policy.goal.is_none();
        asked = Some(choice);
        if none {
            break;
        }
    }
    let mut d = Decision::no_action(Validation::NoGoal(policy.last_outcome.clone()));
    add_choice(&mut d, asked);
    Ok(d)
}

/// The planner's step toward the sub-goal: an action, or done when the goal is the task's
/// target; `None` (the goal cleared, its outcome kept for the next question) when there is no
/// goal, it is obtained, the planner is stuck on it or it had its steps. `asked`: the reasoning
/// of the question asked this step.
fn pursue_goal(
    parts: &Parts,
    policy: &mut SubgoalPolicy,
    view: &View<'_>,
    asked: Option<&str>,
) -> Option<Decision> {
    let goal = policy.goal?;
    let name = parts.kg.name(goal).to_string();
    policy.last_outcome = Some(match policy.planner.next(goal, view) {
        PlanStep::Act(..) if policy.spent_a_step() => format!(
            "the controller took {} steps toward {name} without getting it",
            policy.max_goal_steps
        ),
        PlanStep::Act(call, why) => {
            let reasoning = match asked {
                Some(r) => format!("goal {name} (asked: {})\n{why}", summarize(r)),
                None => format!("goal {name}: {why}"),
            };
            return Some(pipeline::validate_call(
                parts,
                call,
                reasoning,
                view.perception,
            ));
        }
        PlanStep::Done if goal == parts.target => return Some(Decision::done()),
        PlanStep::Done => format!("{name} was obtained"),
        PlanStep::Stuck(why) => format!("the controller could not get {name}: {why}"),
    });
    policy.goal = None;
    None
}

/// Puts the goal question's answers, tokens and cost into the step's decision.
fn add_choice(d: &mut Decision, choice: Option<Choice>) {
    if let Some(c) = choice {
        d.attempts = c.attempts;
        d.add_spent(c.usage, c.cost_usd);
    }
}

pub async fn llm_decision(
    parts: &Parts,
    policy: &LlmPolicy,
    prompt: &str,
    perception: &Perception,
) -> Result<Decision, LlmError> {
    let layout = pipeline::layout(parts, perception);
    let ctx = pipeline::expand_context(parts, &layout, perception.frame_w, perception.frame_h);
    let mut turn = policy.decide(prompt, &parts.profile.skills, &ctx).await?;
    policy.count_unreported(&mut turn, &parts.counter);
    let validation = match (&turn.action, turn.attempts.last()) {
        (Some(_), _) => Validation::Valid,
        (None, Some(a)) => a
            .rejected
            .clone()
            .map_or(Validation::NoAnswer, Validation::Refused),
        (None, None) => Validation::NoAnswer,
    };
    Ok(Decision {
        reasoning: turn
            .action
            .as_ref()
            .map(|a| a.reasoning.clone())
            .unwrap_or_default(),
        action: turn.action,
        attempts: turn.attempts,
        validation,
        usage: turn.usage,
        cost_usd: turn.cost_usd,
        done: false,
    })
}

/// The recorded decision, re-validated against today's skill library.
fn recorded_decision(parts: &Parts, step: &super::session::StepRecord) -> Decision {
    let json = answers_in_json(parts.config.llm.output_mode, parts.config.llm.constrain);
    let layout = pipeline::layout(parts, &step.perception);
    let ctx = pipeline::expand_context(parts, &layout, step.frame_w, step.frame_h);
    if !step.attempts.is_empty() {
        for a in &step.attempts {
            if let Ok(action) = validate_answer(&a.answer, json, &parts.profile.skills, &ctx) {
                return Decision {
                    reasoning: action.reasoning.clone(),
                    action: Some(action),
                    validation: Validation::Valid,
                    ..Decision::default()
                };
            }
        }
        return Decision {
            validation: Validation::NoValidRecordedAnswer,
            ..Decision::default()
        };
    }
    match &step.action {
        Some(call) => pipeline::validate_call(
            parts,
            call.clone(),
            step.reasoning.clone(),
            &step.perception,
        ),
        None => Decision {
            validation: step.validation.clone(),
            ..Decision::default()
        },
    }
}

/// Which policy decides a session's steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyChoice {
    /// The deterministic planner of the game profile's `[planner]`.
    Planner,
    /// The LLM of `[llm]` chooses every skill call.
    Llm,
    /// The LLM names the next item to obtain, the planner obtains it.
    Subgoal,
    /// The answers a recorded session holds.
    Recorded,
}

/// Why the chosen policy cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error(transparent)]
    Planner(#[from] DataFileError),
    #[error(transparent)]
    Llm(#[from] LlmSetupError),
    #[error("the recorded policy replays a session's answers, and no session was given")]
    NoSession,
}

/// What an LLM-backed policy is built with besides the config's `[llm]`.
#[derive(Debug, Clone, Default)]
pub struct LlmOptions {
    /// Every exchange with the endpoint is recorded under this folder.
    pub record_to: Option<PathBuf>,
    /// A cost cap in US dollars (0: none); with one, the model must have a price.
    pub cost_cap_usd: f64,
}

/// The policy `choice` for the task of `parts`: the one place a policy is built from a choice,
/// with its LLM client and prices. `session` is what [`PolicyChoice::Recorded`] replays.
pub fn build_policy<'s>(
    choice: PolicyChoice,
    parts: &Parts,
    llm: &LlmOptions,
    session: Option<&'s Session>,
) -> Result<Box<dyn Policy + 's>, PolicyError> {
    let llm_policy = || {
        LlmPolicy::from_config(
            &parts.config.llm,
            llm.record_to.as_deref(),
            llm.cost_cap_usd,
        )
    };
    Ok(match choice {
        PolicyChoice::Planner => Box::new(parts.planner()?),
        PolicyChoice::Llm => Box::new(llm_policy()?),
        PolicyChoice::Subgoal => Box::new(SubgoalPolicy::new(
            llm_policy()?,
            parts.planner()?,
            parts.config.llm.subgoal_max_steps,
        )),
        PolicyChoice::Recorded => Box::new(Recorded {
            session: session.ok_or(PolicyError::NoSession)?,
        }),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::Config;
    use crate::knowledge::{KnowledgeGraph, Subgraph};
    use crate::llm::{LlmClient, PriceTable};
    use crate::tasks::TaskList;

    fn iron_ore_parts() -> Parts {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let kg = KnowledgeGraph::load(&repo.join("kg/minecraft.toml")).expect("kg");
        let tasks = TaskList::load(&repo.join("config/tasks.toml")).expect("tasks");
        let mut config = Config::builtin();
        config.llm.prompt_template = repo.join(&config.llm.prompt_template);
        Parts::assemble(config, kg, &tasks, repo, "iron_ore").expect("parts")
    }

    /// The client's iron ore task: the model named the stone pickaxe in the bag at every
    /// question ("obtained" at once, asked again) until the task's time ran out.
    #[test]
    fn the_subgoal_options_leave_out_what_the_bag_holds_but_never_the_target() {
        let parts = iron_ore_parts();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let llm = LlmPolicy::new(
            LlmClient::new(&parts.config.llm).expect("client"),
            PriceTable::load(&repo.join("config/prices.toml")).expect("prices"),
            &parts.config.llm,
        );
        let policy = SubgoalPolicy::new(llm, parts.planner().expect("planner"), 25);
        let node = |n: &str| parts.kg.node(n).expect(n);
        let pooled = Subgraph {
            nodes: ["Stone Pickaxe", "Cobblestone", "Iron Ore"]
                .map(node)
                .into_iter()
                .collect(),
            ..Subgraph::default()
        };
        let pickaxe = node("Stone Pickaxe");
        let none = policy.options(&parts.kg, &pooled, parts.target, &|_| false);
        assert!(none.contains(&"Stone Pickaxe".to_string()), "{none:?}");
        let held = policy.options(&parts.kg, &pooled, parts.target, &|n| {
            n == pickaxe || n == parts.target
        });
        assert!(!held.contains(&"Stone Pickaxe".to_string()), "{held:?}");
        assert!(held.contains(&"Iron Ore".to_string()), "{held:?}");
        assert!(held.contains(&"Cobblestone".to_string()), "{held:?}");
    }
}
