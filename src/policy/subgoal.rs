//! The sub-goal policy: the LLM names the next item to obtain, from the items of the pooled
//! graph the planner has a rule for; the planner obtains it, one skill call a step, and the LLM
//! is asked again when the item is obtained or the planner is stuck. A split planner-controller
//! agents use, for a model too small to choose every skill call (docs/policy.md); it is counted
//! apart from the per-step LLM policy.

use petgraph::graph::NodeIndex;

use super::llm_policy::LlmPolicy;
use super::planner::Planner;
use crate::knowledge::{KnowledgeGraph, Subgraph};

pub struct SubgoalPolicy {
    pub llm: LlmPolicy,
    pub planner: Planner,
    /// The item the planner is obtaining; `None`: ask the LLM.
    pub goal: Option<NodeIndex>,
    /// What became of the last goal, told to the LLM with the next question.
    pub last_outcome: Option<String>,
    /// Steps the planner has acted toward the current goal.
    pub goal_steps: u32,
    /// Ask again after this many steps on one goal without it (0: never).
    pub max_goal_steps: u32,
}

impl SubgoalPolicy {
    pub fn new(llm: LlmPolicy, planner: Planner, max_goal_steps: u32) -> Self {
        SubgoalPolicy {
            llm,
            planner,
            goal: None,
            last_outcome: None,
            goal_steps: 0,
            max_goal_steps,
        }
    }

    /// Counts a step acted toward the goal; true when the goal has had its steps and the LLM
    /// is to be asked again.
    pub fn spent_a_step(&mut self) -> bool {
        self.goal_steps += 1;
        self.max_goal_steps > 0 && self.goal_steps > self.max_goal_steps
    }

    /// The items the LLM may choose: those of the pooled graph (the task's target always) that
    /// the planner has a gather or craft rule for and the bag does not hold yet (`held`: the
    /// planner's own reading), in the graph's order. A held item would be "obtained" at once and
    /// the question asked again: the iron ore task's model named its stone pickaxe at every
    /// question until the task's time ran out.
    pub fn options(
        &self,
        kg: &KnowledgeGraph,
        pooled: &Subgraph,
        target: NodeIndex,
        held: &dyn Fn(NodeIndex) -> bool,
    ) -> Vec<String> {
        let rules = self.planner.obtainable();
        let mut nodes: Vec<NodeIndex> = pooled.nodes.iter().copied().collect();
        if !nodes.contains(&target) {
            nodes.push(target);
        }
        nodes.sort();
        nodes
            .into_iter()
            .filter(|&n| n == target || !held(n))
            .map(|n| kg.name(n).to_string())
            .filter(|name| rules.iter().any(|r| r == name))
            .collect()
    }
}

/// The `{skill_library}` text of the question: the one action the LLM has.
pub fn goal_library_text(options: &[String]) -> String {
    format!(
        "- set_goal(item): a controller obtains the item for you, one skill call a step (it \
         finds, approaches and mines it, or crafts it from what the bag holds, after what it \
         needs first); you are asked again once it is obtained. Items: {}",
        options.join(", ")
    )
}

/// The `{output_format}` text of the question.
pub fn goal_format_text(json: bool, last_outcome: Option<&str>) -> String {
    let outcome = last_outcome
        .map(|o| format!("The last goal: {o}.\n"))
        .unwrap_or_default();
    match json {
        false => format!(
            "{outcome}Answer the questions briefly, then name the next item to obtain on the last \
             line, in the form:\nGoal: <item>"
        ),
        true => format!(
            "{outcome}Answer with one JSON object: {{\"reasoning\": \"<brief answers to the \
             questions>\", \"goal\": \"<item>\"}}"
        ),
    }
}
