//! The ICAL appendix's analogy exemplars: a successful episode summarised as a contextual state
//! descriptor (CSD) along five dimensions (structural, attribute, procedural, functional,
//! interaction) with its action sequence; retrieved by similarity to the current CSD and laid
//! out in the appendix's prompt format, both as a prompt section while playing and for the
//! exploration mode that proposes the next feasible task (`vistawise memory explore`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::db::Db;
use super::episode::Episode;
use super::{Embedder, MemoryError, Query, cosine, text_helpers};
use crate::config::MemoryConfig;
use crate::knowledge::KnowledgeGraph;

pub const MODULE: &str = "exemplars";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Csd {
    pub structural: String,
    pub attribute: String,
    pub procedural: String,
    pub functional: String,
    pub interaction: String,
}

impl Csd {
    pub fn text(&self) -> String {
        format!(
            "[CSD-STRUCT]\n{}\n\n[CSD-ATTR]\n{}\n\n[CSD-PROC]\n{}\n\n[CSD-FUNC]\n{}\n\n[CSD-INTER]\n{}",
            self.structural, self.attribute, self.procedural, self.functional, self.interaction
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exemplar {
    pub goal: String,
    pub csd: Csd,
    pub actions: Vec<String>,
}

/// Graph facts among a set of names.
fn functional(kg: &KnowledgeGraph, names: &BTreeSet<String>) -> String {
    let mut facts: Vec<String> = kg
        .graph
        .edge_indices()
        .filter_map(|e| kg.edge_triple(e))
        .filter(|(a, _, b)| names.contains(*a) && names.contains(*b))
        .map(|(a, r, b)| format!("{a} {} {b}.", r.as_str()))
        .collect();
    facts.sort();
    facts.dedup();
    if facts.is_empty() {
        "no known relations".into()
    } else {
        facts.join(" ")
    }
}

fn seen_text(env: &[(String, bool)]) -> (String, String) {
    let names: BTreeSet<&str> = env.iter().map(|(n, _)| n.as_str()).collect();
    let near: BTreeSet<&str> = env
        .iter()
        .filter(|(_, r)| *r)
        .map(|(n, _)| n.as_str())
        .collect();
    let far: BTreeSet<&str> = names.difference(&near).copied().collect();
    (
        format!("in view: {}", text_helpers::list_or_none(&names)),
        format!(
            "within reach: {}; beyond reach: {}",
            text_helpers::list_or_none(&near),
            text_helpers::list_or_none(&far)
        ),
    )
}

/// The CSD of a finished episode.
pub fn summarise(episode: &Episode, kg: &KnowledgeGraph) -> Exemplar {
    let mut env: Vec<(String, bool)> = Vec::new();
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut transitions = Vec::new();
    let mut skills: BTreeMap<String, usize> = BTreeMap::new();
    let mut before: BTreeSet<String> = episode
        .steps
        .first()
        .map(|s| s.inventory.clone())
        .unwrap_or_default();
    let start = before.clone();
    for s in &episode.steps {
        env.extend(s.environment.iter().cloned());
        names.extend(s.environment.iter().map(|(n, _)| n.clone()));
        names.extend(s.inventory.iter().cloned());
        let gained: Vec<&String> = s.inventory.difference(&before).collect();
        if !gained.is_empty() {
            transitions.push(format!("+{}", text_helpers::list_or_none(&gained)));
        }
        before = s.inventory.clone();
        if let Some(a) = &s.action {
            transitions.push(a.clone());
            let skill = a.split('(').next().unwrap_or(a).to_string();
            *skills.entry(skill).or_default() += 1;
        }
    }
    names.extend(episode.final_inventory.iter().cloned());
    let gained: Vec<&String> = episode.final_inventory.difference(&before).collect();
    if !gained.is_empty() {
        transitions.push(format!("+{}", text_helpers::list_or_none(&gained)));
    }
    let (structural, reach) = seen_text(&env);
    let tools: Vec<&String> = episode
        .final_inventory
        .iter()
        .filter(|i| i.contains("Pickaxe") || i.contains("Axe") || i.contains("Table"))
        .collect();
    Exemplar {
        goal: episode.goal.clone(),
        csd: Csd {
            structural,
            attribute: format!(
                "{reach}; inventory at the start: {}; at the end: {}",
                text_helpers::list_or_none(&start),
                text_helpers::list_or_none(&episode.final_inventory)
            ),
            procedural: format!(
                "{} -> {}",
                text_helpers::list_or_none(&start),
                transitions.join(" -> ")
            ),
            functional: functional(kg, &names),
            interaction: format!(
                "skills used: {}; tools and stations obtained: {}",
                text_helpers::list_or_none(skills.iter().map(|(k, n)| format!("{k} x{n}"))),
                text_helpers::list_or_none(&tools)
            ),
        },
        actions: episode
            .steps
            .iter()
            .filter_map(|s| s.action.clone())
            .collect(),
    }
}

/// The CSD of the present moment.
pub fn current(q: &Query, kg: &KnowledgeGraph) -> Csd {
    let (structural, reach) = seen_text(&q.environment);
    let mut names: BTreeSet<String> = q.inventory.clone();
    names.extend(q.environment.iter().map(|(n, _)| n.clone()));
    let tools: Vec<&String> = q
        .inventory
        .iter()
        .filter(|i| i.contains("Pickaxe") || i.contains("Axe") || i.contains("Table"))
        .collect();
    Csd {
        structural,
        attribute: format!(
            "{reach}; inventory: {}",
            text_helpers::list_or_none(&q.inventory)
        ),
        procedural: format!(
            "current inventory: {}; next: {}",
            text_helpers::list_or_none(&q.inventory),
            q.subgoal.as_deref().unwrap_or("unknown")
        ),
        functional: functional(kg, &names),
        interaction: format!(
            "tools and stations at hand: {}",
            text_helpers::list_or_none(&tools)
        ),
    }
}

fn embed_text(e: &Exemplar) -> String {
    format!("{}\n{}", e.goal, e.csd.text())
}

pub fn store(
    db: &Db,
    emb: &mut dyn Embedder,
    episode: &Episode,
    kg: &KnowledgeGraph,
) -> Result<i64, MemoryError> {
    let ex = summarise(episode, kg);
    let v = emb.embed(&embed_text(&ex))?;
    db.insert(
        MODULE,
        &ex.goal,
        &serde_json::to_value(&ex).unwrap_or_default(),
        Some(&v),
    )
}

/// The `k` stored exemplars most similar to a CSD, best first.
pub fn retrieve(
    db: &Db,
    emb: &mut dyn Embedder,
    goal: &str,
    csd: &Csd,
    k: usize,
) -> Result<Vec<(i64, Exemplar, f32)>, MemoryError> {
    let q = emb.embed(&format!("{goal}\n{}", csd.text()))?;
    let mut out: Vec<(i64, Exemplar, f32)> = db
        .list_embedded(MODULE, "exemplar", q.len(), |ex: &Exemplar| {
            emb.embed(&embed_text(ex))
        })?
        .into_iter()
        .map(|(id, ex, v)| (id, ex, cosine(&q, &v)))
        .collect();
    out.sort_by(|a, b| b.2.total_cmp(&a.2).then(b.0.cmp(&a.0)));
    out.truncate(k);
    Ok(out)
}

/// One exemplar block of the appendix's template.
pub fn example_block(k: usize, e: &Exemplar) -> String {
    let actions: Vec<String> = e
        .actions
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{}. {a}", i + 1))
        .collect();
    format!(
        "[EXAMPLE {k}]\n\n[GOAL]\n{}\n\n{}\n\n[SUCCESSFUL ACTION SEQUENCE]\n{}\n\n[END EXAMPLE {k}]",
        e.goal,
        e.csd.text(),
        actions.join("\n")
    )
}

pub const SYSTEM: &str = "[SYSTEM]
You are a planning agent in Minecraft.
You receive past tasks described by Contextual State Descriptors (CSD)
along five explicit transfer dimensions:

- STRUCTURAL: how entities are spatially arranged and organized.
- ATTRIBUTE: visual and physical properties of entities.
- PROCEDURAL: the sequence of state transitions and actions.
- FUNCTIONAL: what entities are used for and what roles they play.
- INTERACTION: how the agent interacts with the world and tools.

Your goal is to:
1) Reason by analogy across these five dimensions,
2) Propose new actionable plans for the current state, and
3) Output an executable action sequence that follows the required schema.
Follow the output format strictly.";

pub const INSTRUCTIONS: &str = "[INSTRUCTIONS]

1. Compare the current CSD with each EXAMPLE along the STRUCTURAL, ATTRIBUTE, PROCEDURAL, FUNCTIONAL, and INTERACTION dimensions.
2. Identify transferable patterns (e.g., same recipe shape, same material family, same process structure, same tool function).
3. By analogy, propose ONE new high-level task that is feasible in the current world state.
4. For this task, output:
  - A short TASK_DESCRIPTION.
  - A step-by-step ACTION_SEQUENCE that can be executed.

[OUTPUT FORMAT]

Return a JSON object with the following schema:

{
  \"task_description\": \"...\",
  \"action_sequence\": [
    \"step 1: ...\",
    \"step 2: ...\",
    \"...\",
    \"step M: ...\"
  ],
  \"self_checks\": [
    \"check 1: ...\",
    \"check 2: ...\"
  ]
}

Only output the JSON object.";

/// The exploration prompt: system instruction, retrieved exemplars, the current CSD and the
/// instructions, as in the appendix.
pub fn explore_prompt(exemplars: &[Exemplar], current: &Csd) -> String {
    let mut parts = vec![SYSTEM.to_string()];
    parts.extend(
        exemplars
            .iter()
            .enumerate()
            .map(|(i, e)| example_block(i + 1, e)),
    );
    parts.push(format!("[CURRENT STATE CSD]\n\n{}", current.text()));
    parts.push(INSTRUCTIONS.to_string());
    parts.join("\n\n")
}

/// The model's proposal of a next task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proposal {
    pub task_description: String,
    pub action_sequence: Vec<String>,
    #[serde(default)]
    pub self_checks: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProposalError {
    #[error("the answer holds no JSON object")]
    NoJson,
    #[error("the answer is not the proposal schema: {0}")]
    Shape(String),
    #[error("the proposal has an empty task description or action sequence")]
    Empty,
}

/// Reads a proposal; anything off the schema is refused.
pub fn parse_proposal(answer: &str) -> Result<Proposal, ProposalError> {
    let start = answer.find('{').ok_or(ProposalError::NoJson)?;
    let end = answer.rfind('}').ok_or(ProposalError::NoJson)?;
    if end < start {
        return Err(ProposalError::NoJson);
    }
    let p: Proposal = serde_json::from_str(&answer[start..=end])
        .map_err(|e| ProposalError::Shape(e.to_string()))?;
    if p.task_description.trim().is_empty()
        || p.action_sequence.is_empty()
        || p.action_sequence.iter().any(|s| s.trim().is_empty())
    {
        return Err(ProposalError::Empty);
    }
    Ok(p)
}

/// The prompt section while playing: the most similar exemplars, in the appendix's blocks.
pub fn section(
    db: &Db,
    emb: &mut dyn Embedder,
    q: &Query,
    kg: &KnowledgeGraph,
    cfg: &MemoryConfig,
) -> Result<String, MemoryError> {
    let found = retrieve(db, emb, &q.task, &current(q, kg), cfg.exemplar_k)?;
    let body: Vec<String> = found
        .iter()
        .enumerate()
        .map(|(i, (_, e, _))| example_block(i + 1, e))
        .collect();
    Ok(text_helpers::section(
        "Long-term memory - analogous successful episodes (analogy exemplars):",
        &body.join("\n\n"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposals_follow_the_schema_or_are_refused() {
        let p = parse_proposal(
            "{\"task_description\": \"craft a stone axe\", \"action_sequence\": [\"step 1: mine stone\"], \"self_checks\": []}",
        )
        .expect("ok");
        assert_eq!(p.action_sequence.len(), 1);
        assert_eq!(parse_proposal("sure"), Err(ProposalError::NoJson));
        assert!(matches!(
            parse_proposal("{\"task_description\": 3, \"action_sequence\": []}"),
            Err(ProposalError::Shape(_))
        ));
        assert_eq!(
            parse_proposal("{\"task_description\": \"x\", \"action_sequence\": []}"),
            Err(ProposalError::Empty)
        );
    }

    #[test]
    fn the_prompt_has_the_appendix_layout() {
        let e = Exemplar {
            goal: "Obtain a wooden pickaxe".into(),
            csd: Csd::default(),
            actions: vec!["mine_log(2.0)".into()],
        };
        let p = explore_prompt(&[e], &Csd::default());
        for part in [
            "[SYSTEM]",
            "[EXAMPLE 1]",
            "[GOAL]\nObtain a wooden pickaxe",
            "[CSD-STRUCT]",
            "[CSD-INTER]",
            "[SUCCESSFUL ACTION SEQUENCE]\n1. mine_log(2.0)",
            "[END EXAMPLE 1]",
            "[CURRENT STATE CSD]",
            "[INSTRUCTIONS]",
            "Only output the JSON object.",
        ] {
            assert!(p.contains(part), "{part}");
        }
    }
}
