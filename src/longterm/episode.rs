//! What the play loop tells the long-term memory, turned into things to store: each attempted
//! sub-task (one validated action) gets its outcome when the next frame is seen (success when
//! the inventory gained an item), each sub-goal reached closes a plan, and a successful episode
//! becomes an exemplar.

use std::collections::BTreeSet;

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use serde::{Deserialize, Serialize};

use super::Query;
use super::experience::Experience;
use super::plans::EpisodicPlan;
use super::text_helpers;
use crate::knowledge::{KnowledgeGraph, Relation};
use crate::skills::ActResult;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EpisodeStep {
    pub action: Option<String>,
    pub inventory: BTreeSet<String>,
    pub environment: Vec<(String, bool)>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    pub goal: String,
    pub steps: Vec<EpisodeStep>,
    pub final_inventory: BTreeSet<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TrackerEvent {
    Attempt(Experience),
    SubgoalDone(EpisodicPlan),
    EpisodeDone(Episode),
}

#[derive(Debug, Clone)]
struct Pending {
    before: Query,
    plan: String,
    result: ActResult,
}

#[derive(Debug, Clone)]
struct Subgoal {
    item: String,
    context: String,
    steps: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Tracker {
    goal: String,
    pending: Option<Pending>,
    subgoal: Option<Subgoal>,
    steps: Vec<EpisodeStep>,
}

/// The item to get next on the way to `target`: following what the graph says an item needs
/// ("is used to craft", "is used to produce", "can be used to mine"; for "outputs", the
/// station when it is craftable, else the tool that mines the block) back to the first one the
/// agent does not have.
pub fn next_missing(
    kg: &KnowledgeGraph,
    target: NodeIndex,
    has: &dyn Fn(NodeIndex) -> bool,
) -> Option<NodeIndex> {
    fn incoming(kg: &KnowledgeGraph, n: NodeIndex, rels: &[Relation]) -> Vec<NodeIndex> {
        kg.graph
            .edges_directed(n, Direction::Incoming)
            .filter(|e| rels.contains(e.weight()))
            .map(|e| e.source())
            .collect()
    }
    fn needs(kg: &KnowledgeGraph, item: NodeIndex) -> Vec<NodeIndex> {
        let made = [
            Relation::IsUsedToCraft,
            Relation::IsUsedToProduce,
            Relation::CanBeUsedToMine,
        ];
        let mut out = incoming(kg, item, &made);
        for source in incoming(kg, item, &[Relation::Outputs]) {
            if incoming(kg, source, &[Relation::IsUsedToCraft]).is_empty() {
                out.extend(incoming(kg, source, &[Relation::CanBeUsedToMine]));
            } else {
                out.push(source);
            }
        }
        out
    }
    fn walk(
        kg: &KnowledgeGraph,
        item: NodeIndex,
        has: &dyn Fn(NodeIndex) -> bool,
        seen: &mut BTreeSet<NodeIndex>,
    ) -> Option<NodeIndex> {
        if !seen.insert(item) {
            return None;
        }
        for need in needs(kg, item) {
            if need != kg.player()
                && !has(need)
                && let Some(g) = walk(kg, need, has, seen)
            {
                return Some(g);
            }
        }
        Some(item)
    }
    if has(target) {
        return None;
    }
    walk(kg, target, has, &mut BTreeSet::new())
}

/// Why a `mine_<block>` call made no progress, from the graph: the tool it needs is missing.
pub fn missing_tool(
    kg: &KnowledgeGraph,
    plan: &str,
    inventory: &BTreeSet<String>,
) -> Option<String> {
    let skill = plan.split('(').next()?.trim();
    let block = skill.strip_prefix("mine_")?.replace('_', " ");
    let node = kg
        .names()
        .into_iter()
        .find(|n| n.eq_ignore_ascii_case(&block))
        .and_then(|n| kg.node(n))?;
    let tools: Vec<&str> = kg
        .graph
        .edges_directed(node, Direction::Incoming)
        .filter(|e| *e.weight() == Relation::CanBeUsedToMine)
        .map(|e| kg.name(e.source()))
        .collect();
    if tools.is_empty() || tools.iter().any(|t| inventory.contains(*t)) {
        return None;
    }
    Some(format!(
        "{} needs {} (or better), which is not in the inventory",
        kg.name(node),
        tools.join(" or ")
    ))
}

/// Whether an action is meant to put items in the inventory (mining, digging, crafting,
/// smelting); opening screens, moving and turning are not, and are not failures for gaining none.
pub fn yields_items(plan: &str) -> bool {
    let skill = plan.split('(').next().unwrap_or(plan).trim();
    ["mine_", "dig_", "craft_", "smelt_"]
        .iter()
        .any(|p| skill.starts_with(p))
}

impl Tracker {
    pub fn new(goal: &str) -> Self {
        Tracker {
            goal: goal.to_string(),
            ..Tracker::default()
        }
    }

    /// A new step's view: resolves the last attempt and a reached sub-goal. `why` explains a
    /// failure from the state it was tried in (e.g. [`missing_tool`]).
    pub fn observe(
        &mut self,
        q: &Query,
        why: &dyn Fn(&str, &Query) -> Option<String>,
    ) -> Vec<TrackerEvent> {
        let mut out = Vec::new();
        if let Some(p) = self.pending.take() {
            let gained: Vec<&String> = q.inventory.difference(&p.before.inventory).collect();
            let (success, reason) = if !gained.is_empty() {
                (true, format!("got {}", text_helpers::list_or_none(&gained)))
            } else if !p.result.ran() {
                (false, p.result.to_string())
            } else if !yields_items(&p.plan) {
                (
                    true,
                    "done (this action is not meant to yield items)".into(),
                )
            } else {
                (
                    false,
                    why(&p.plan, &p.before)
                        .unwrap_or_else(|| "no progress: the inventory did not change".into()),
                )
            };
            out.push(TrackerEvent::Attempt(Experience {
                state: p.before.state.clone(),
                task: p.before.task_text(),
                plan: p.plan,
                success,
                reason,
            }));
        }
        if let Some(s) = self.subgoal.take() {
            if q.inventory.contains(&s.item) {
                if !s.steps.is_empty() {
                    out.push(TrackerEvent::SubgoalDone(EpisodicPlan {
                        context: s.context,
                        subgoal: s.item,
                        steps: s.steps,
                        merged: 0,
                    }));
                }
            } else if q.subgoal.as_deref() == Some(s.item.as_str()) {
                self.subgoal = Some(s);
            }
        }
        if self.subgoal.is_none()
            && let Some(item) = &q.subgoal
        {
            self.subgoal = Some(Subgoal {
                item: item.clone(),
                context: q.context_text(),
                steps: Vec::new(),
            });
        }
        self.steps.push(EpisodeStep {
            action: None,
            inventory: q.inventory.clone(),
            environment: q.environment.clone(),
        });
        out
    }

    /// The step's action ran with `result`.
    pub fn acted(&mut self, q: &Query, plan: &str, result: &ActResult) {
        self.pending = Some(Pending {
            before: q.clone(),
            plan: plan.to_string(),
            result: result.clone(),
        });
        if let Some(s) = &mut self.subgoal {
            s.steps.push(plan.to_string());
        }
        if let Some(last) = self.steps.last_mut() {
            last.action = Some(plan.to_string());
        }
    }

    /// The episode ended. An attempt whose outcome was never seen is stored as failed with the
    /// reason the episode ended; a successful episode becomes an exemplar.
    pub fn finish(&mut self, success: bool, end: &str) -> Vec<TrackerEvent> {
        let mut out = Vec::new();
        if let Some(p) = self.pending.take() {
            out.push(TrackerEvent::Attempt(Experience {
                state: p.before.state.clone(),
                task: p.before.task_text(),
                plan: p.plan,
                success,
                reason: if success {
                    "the task's target was obtained".into()
                } else {
                    format!("the episode ended before its outcome showed ({end})")
                },
            }));
        }
        if success {
            out.push(TrackerEvent::EpisodeDone(Episode {
                goal: self.goal.clone(),
                final_inventory: self
                    .steps
                    .last()
                    .map(|s| s.inventory.clone())
                    .unwrap_or_default(),
                steps: std::mem::take(&mut self.steps),
            }));
        }
        self.subgoal = None;
        self.steps.clear();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(inv: &[&str], subgoal: Option<&str>) -> Query {
        Query {
            task: "Obtain planks.".into(),
            subgoal: subgoal.map(str::to_string),
            state: format!("inventory: {}", inv.join(", ")),
            inventory: inv.iter().map(|s| s.to_string()).collect(),
            environment: vec![("Oak Log".into(), true)],
        }
    }

    #[test]
    fn attempts_get_outcomes_and_reached_subgoals_become_plans() {
        let mut t = Tracker::new("Obtain planks.");
        let none = |_: &str, _: &Query| -> Option<String> { None };
        assert!(t.observe(&q(&[], Some("Oak Log")), &none).is_empty());
        t.acted(&q(&[], Some("Oak Log")), "mine_log(2.0)", &ActResult::Done);
        let ev = t.observe(&q(&[], Some("Oak Log")), &none);
        assert!(
            matches!(&ev[..], [TrackerEvent::Attempt(e)] if !e.success && e.reason.contains("no progress")),
            "{ev:?}"
        );
        t.acted(&q(&[], Some("Oak Log")), "mine_log(3.0)", &ActResult::Done);
        let ev = t.observe(&q(&["Oak Log"], Some("Oak Planks")), &none);
        assert!(
            matches!(&ev[0], TrackerEvent::Attempt(e) if e.success && e.reason == "got Oak Log")
        );
        assert!(
            matches!(&ev[1], TrackerEvent::SubgoalDone(p) if p.subgoal == "Oak Log" && p.steps == ["mine_log(2.0)", "mine_log(3.0)"]),
            "{ev:?}"
        );
        t.acted(
            &q(&["Oak Log"], Some("Oak Planks")),
            "open_inventory()",
            &ActResult::Done,
        );
        let ev = t.observe(&q(&["Oak Log"], Some("Oak Planks")), &none);
        assert!(
            matches!(&ev[..], [TrackerEvent::Attempt(e)] if e.success && e.reason.contains("not meant")),
            "{ev:?}"
        );
        t.acted(
            &q(&["Oak Log"], Some("Oak Planks")),
            "craft_plank()",
            &ActResult::Done,
        );
        let ev = t.finish(true, "success");
        assert!(matches!(&ev[0], TrackerEvent::Attempt(e) if e.success));
        assert!(matches!(&ev[1], TrackerEvent::EpisodeDone(e) if e.steps.len() == 4));
    }
}
