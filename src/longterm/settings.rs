//! `[memory]` of the config: the short-term stack's recall and the long-term modules.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::validate::check;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    pub recall_steps: usize,
    /// Long-term memory modules (docs/memory.md): experiences, howto, plans, exemplars.
    pub modules: Vec<crate::longterm::Module>,
    /// Folder of the per-profile databases; empty: $XDG_DATA_HOME/vistawise/memory.
    pub db_dir: PathBuf,
    pub top_k: usize,
    pub lambda_state: f32,
    pub lambda_task: f32,
    pub lambda_plan: f32,
    pub max_revisions: u32,
    pub predict_min_score: f32,
    pub predict_plan_similarity: f32,
    pub plan_match_distance: f32,
    pub plan_merge_distance: f32,
    pub max_plans: usize,
    pub exemplar_k: usize,
}

impl MemoryConfig {
    pub(crate) fn validate(&self) -> Result<(), (String, String)> {
        check(
            self.recall_steps <= 100,
            "memory.recall_steps",
            "must be 0-100",
        )?;
        let m = self;
        check(
            (1..=100).contains(&m.top_k),
            "memory.top_k",
            "must be 1-100",
        )?;
        for (v, key) in [
            (m.lambda_state, "memory.lambda_state"),
            (m.lambda_task, "memory.lambda_task"),
            (m.lambda_plan, "memory.lambda_plan"),
            (m.predict_min_score, "memory.predict_min_score"),
            (m.predict_plan_similarity, "memory.predict_plan_similarity"),
            (m.plan_match_distance, "memory.plan_match_distance"),
            (m.plan_merge_distance, "memory.plan_merge_distance"),
        ] {
            check((0.0..=1.0).contains(&v), key, "must be 0-1")?;
        }
        check(
            m.max_revisions <= 10,
            "memory.max_revisions",
            "must be 0-10",
        )?;
        check(
            (1..=100_000).contains(&m.max_plans),
            "memory.max_plans",
            "must be 1-100000",
        )?;
        check(
            (1..=10).contains(&m.exemplar_k),
            "memory.exemplar_k",
            "must be 1-10",
        )?;
        Ok(())
    }
}
