//! Which policy decides a session's steps ([`PolicyChoice`]) and the one place a policy is built
//! from that choice ([`build_policy`]); and [`Recorded`], the policy that replays a session's
//! answers (it reads the session format, so it lives beside it).

use std::path::PathBuf;

use super::pipeline::Parts;
use super::session::{Session, StepRecord};
use crate::llm::answers_in_json;
use crate::policy::SubgoalPolicy;
use crate::policy::validate_answer;
use crate::policy::{
    Asker, DecideError, Decision, LlmPolicy, LlmSetupError, Observation, Policy, Validation,
};
use crate::toml_lines::DataFileError;

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
            Some(step) => recorded_decision(obs, step),
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

/// The recorded decision, re-validated against today's skill library on this window.
fn recorded_decision(obs: &Observation<'_>, step: &StepRecord) -> Decision {
    let json = answers_in_json(obs.llm.output_mode, obs.llm.constrain);
    if !step.attempts.is_empty() {
        for a in &step.attempts {
            if let Ok(action) = validate_answer(&a.answer, json, obs.skills, obs.expand) {
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
        Some(call) => obs.validate(call.clone(), step.reasoning.clone()),
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
