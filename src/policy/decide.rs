//! The policy seam: every way of choosing a step's action (the planner, the LLM choosing every
//! skill call, the sub-goal split between them, and the answers a recorded session holds) is a
//! [`Policy`], asked the same way by `play` and `replay` with what the step saw (an
//! [`Observation`]). The success check and MINDSTORES' revision sit around a policy, not inside
//! one.

use petgraph::graph::NodeIndex;

use super::decision::{Asker, DecideError, Decision, Validation, validate_call};
use super::llm_policy::{Choice, LlmPolicy};
use super::memory_stack::summarize;
use super::planner::{PlanStep, Planner, View};
use super::prompt::{PromptTemplate, PromptValues, TokenCounter};
use super::subgoal::{self, SubgoalPolicy};
use crate::config::LlmConfig;
use crate::knowledge::{KnowledgeGraph, Subgraph, VisualState};
use crate::llm::{LlmError, answers_in_json};
use crate::perception::Perception;
use crate::skills::GuiLayout;
use crate::skills::{ExpandContext, SkillCall, SkillLibrary};

/// What a policy decides from: one step's view of the game and of the graph, the task's parts
/// a policy reads, and the prompt rendered from them.
#[derive(Clone, Copy)]
pub struct Observation<'a> {
    /// The step's number in its session (1 = first).
    pub step: u64,
    pub kg: &'a KnowledgeGraph,
    /// The task's target item.
    pub target: NodeIndex,
    pub perception: &'a Perception,
    /// The visual attributes the detections gave the graph's nodes.
    pub visual: &'a VisualState,
    /// The graph pooled for this step.
    pub pooled: &'a Subgraph,
    /// Where the frame's GUI draws its slots.
    pub layout: &'a GuiLayout<'a>,
    /// What a skill call expands with on this window.
    pub expand: &'a ExpandContext<'a>,
    pub skills: &'a SkillLibrary,
    pub llm: &'a LlmConfig,
    pub template: &'a PromptTemplate,
    pub counter: &'a TokenCounter,
    /// The template's values for this step (the sub-goal question renders its own prompt
    /// from them).
    pub values: &'a PromptValues,
    /// The step's prompt.
    pub prompt: &'a str,
}

impl<'a> Observation<'a> {
    /// What the planner reads of this step.
    pub fn view(&self) -> View<'a> {
        View {
            kg: self.kg,
            visual: self.visual,
            perception: self.perception,
            layout: self.layout,
        }
    }

    /// `call` validated against this window and the skill library.
    pub fn validate(&self, call: SkillCall, reasoning: String) -> Decision {
        validate_call(self.skills, self.expand, call, reasoning)
    }
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
        Ok(match self.next(obs.target, &obs.view()) {
            PlanStep::Act(call, why) => obs.validate(call, why),
            PlanStep::Done => Decision::done(),
            PlanStep::Stuck(why) => Decision {
                reasoning: why.clone(),
                ..Decision::no_action(Validation::PlannerStuck(why))
            },
        })
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
        asker.ask(llm_decision(
            self,
            obs.prompt,
            obs.skills,
            obs.expand,
            obs.counter,
        ))
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

/// The LLM's skill call for `prompt`, validated against `skills` on this window (`ctx`), with
/// the tokens and cost of every answer it took.
pub async fn llm_decision(
    policy: &LlmPolicy,
    prompt: &str,
    skills: &SkillLibrary,
    ctx: &ExpandContext<'_>,
    counter: &TokenCounter,
) -> Result<Decision, LlmError> {
    let mut turn = policy.decide(prompt, skills, ctx).await?;
    policy.count_unreported(&mut turn, counter);
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

/// The sub-goal policy's step: the planner works toward the current goal; when the goal is
/// obtained, the planner is stuck, or there is none, the LLM is asked (at most once a step) to
/// name the next item from the options, with the step's prompt whose action list and answer
/// format are the goal question's.
async fn subgoal_decision(
    obs: &Observation<'_>,
    policy: &mut SubgoalPolicy,
) -> Result<Decision, LlmError> {
    let view = obs.view();
    let mut asked: Option<Choice> = None;
    loop {
        let reasoning = asked.as_ref().map(|c| c.reasoning.as_str());
        if let Some(mut d) = pursue_goal(obs, policy, &view, reasoning) {
            add_choice(&mut d, asked);
            return Ok(d);
        }
        if asked.is_some() {
            break;
        }
        let options = policy.options(obs.kg, obs.pooled, obs.target, &|n| view.has(n));
        let json = answers_in_json(obs.llm.output_mode, obs.llm.constrain);
        let mut values = obs.values.clone();
        values.skill_library = subgoal::goal_library_text(&options);
        values.output_format = subgoal::goal_format_text(json, policy.last_outcome.as_deref());
        let question = obs.template.render(&values);
        let mut choice = policy.llm.choose(&question, &options).await?;
        policy.llm.count_unreported_choice(&mut choice, obs.counter);
        policy.goal = choice.goal.as_deref().and_then(|g| obs.kg.node(g));
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
    obs: &Observation<'_>,
    policy: &mut SubgoalPolicy,
    view: &View<'_>,
    asked: Option<&str>,
) -> Option<Decision> {
    let goal = policy.goal?;
    let name = obs.kg.name(goal).to_string();
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
            return Some(obs.validate(call, reasoning));
        }
        PlanStep::Done if goal == obs.target => return Some(Decision::done()),
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
