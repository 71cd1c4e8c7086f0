//! M2PA's episodic memory of plans: every sub-goal reached is stored with its context (task,
//! sub-goal, inventory) and the actions that reached it. A query matches the stored contexts
//! whose cosine distance is under `memory.plan_match_distance`, and the newest match wins (the
//! recency effect). A new plan within `memory.plan_merge_distance` of a stored one replaces it
//! (reconsolidation: merged, not piled up), and at most `memory.max_plans` are kept (the
//! oldest go first).

use serde::{Deserialize, Serialize};

use super::db::Db;
use super::{Embedder, MemoryError, Query, cosine, text_helpers};
use crate::config::MemoryConfig;

pub const MODULE: &str = "plans";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodicPlan {
    pub context: String,
    pub subgoal: String,
    pub steps: Vec<String>,
    /// How many plans were merged into this one.
    #[serde(default)]
    pub merged: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    Inserted(i64),
    Merged(i64),
}

impl Stored {
    pub fn id(self) -> i64 {
        match self {
            Stored::Inserted(id) | Stored::Merged(id) => id,
        }
    }
}

/// Every stored plan with its context's vector (`dim` values: the embedder's size).
fn load(
    db: &Db,
    emb: &mut dyn Embedder,
    dim: usize,
) -> Result<Vec<(i64, EpisodicPlan, Vec<f32>)>, MemoryError> {
    db.list_embedded(MODULE, "plan", dim, |p: &EpisodicPlan| {
        emb.embed(&p.context)
    })
}

/// Stores a successful sub-goal plan: merged into a near-duplicate (same sub-goal, context
/// within the merge distance), else inserted; then the oldest beyond the cap are evicted.
pub fn store(
    db: &Db,
    emb: &mut dyn Embedder,
    plan: &EpisodicPlan,
    cfg: &MemoryConfig,
) -> Result<Stored, MemoryError> {
    let v = emb.embed(&plan.context)?;
    let nearest = load(db, emb, v.len())?
        .into_iter()
        .filter(|(_, p, _)| p.subgoal.eq_ignore_ascii_case(&plan.subgoal))
        .map(|(id, p, pv)| (id, p, 1.0 - cosine(&v, &pv)))
        .min_by(|a, b| a.2.total_cmp(&b.2));
    let stored = match nearest {
        Some((id, old, d)) if d <= cfg.plan_merge_distance => {
            let merged = EpisodicPlan {
                merged: old.merged + 1,
                ..plan.clone()
            };
            db.update(
                id,
                &serde_json::to_value(&merged).unwrap_or_default(),
                Some(&v),
            )?;
            Stored::Merged(id)
        }
        _ => Stored::Inserted(db.insert(
            MODULE,
            &plan.subgoal.to_lowercase(),
            &serde_json::to_value(plan).unwrap_or_default(),
            Some(&v),
        )?),
    };
    let all = db.list(Some(MODULE))?; // oldest (least recently updated) first
    for e in all.iter().take(all.len().saturating_sub(cfg.max_plans)) {
        db.delete(e.id)?;
    }
    Ok(stored)
}

/// The newest stored plan (for `subgoal`, when given) whose context is within the match
/// distance of the query's.
pub fn query(
    db: &Db,
    emb: &mut dyn Embedder,
    context: &str,
    subgoal: Option<&str>,
    cfg: &MemoryConfig,
) -> Result<Option<(i64, EpisodicPlan, f32)>, MemoryError> {
    let q = emb.embed(context)?;
    // `load` lists oldest first: the last match is the newest.
    Ok(load(db, emb, q.len())?
        .into_iter()
        .filter(|(_, p, _)| subgoal.is_none_or(|g| p.subgoal.eq_ignore_ascii_case(g)))
        .map(|(id, p, v)| (id, p, 1.0 - cosine(&q, &v)))
        .rfind(|(_, _, d)| *d <= cfg.plan_match_distance))
}

pub fn section(
    db: &Db,
    emb: &mut dyn Embedder,
    q: &Query,
    cfg: &MemoryConfig,
) -> Result<String, MemoryError> {
    if q.subgoal.is_none() {
        return Ok(String::new());
    }
    let Some((_, p, _)) = query(db, emb, &q.context_text(), q.subgoal.as_deref(), cfg)? else {
        return Ok(String::new());
    };
    let mut body = vec![format!(
        "A plan that reached \"{}\" before, in a similar situation ({}):",
        p.subgoal, p.context
    )];
    body.extend(
        p.steps
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{}. {s}", i + 1)),
    );
    Ok(text_helpers::section(
        "Long-term memory - a successful plan from an earlier episode (episodic plans):",
        &body.join("\n"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::longterm::BagOfWords;

    fn plan(ctx: &str, steps: &[&str]) -> EpisodicPlan {
        EpisodicPlan {
            context: ctx.into(),
            subgoal: "Oak Planks".into(),
            steps: steps.iter().map(|s| s.to_string()).collect(),
            merged: 0,
        }
    }

    #[test]
    fn duplicates_merge_the_newest_match_wins_and_the_cap_evicts_the_oldest() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = Db::open(&dir.path().join("t.sqlite")).expect("db");
        let mut emb = BagOfWords;
        let mut cfg = crate::config::Config::builtin().memory;
        cfg.max_plans = 2;
        let ctx = "Obtain planks. Inventory: Oak Log.";
        let a = store(&db, &mut emb, &plan(ctx, &["open_inventory()"]), &cfg).expect("a");
        let b = store(&db, &mut emb, &plan(ctx, &["craft_plank()"]), &cfg).expect("b");
        assert!(matches!(a, Stored::Inserted(_)));
        assert_eq!(b, Stored::Merged(a.id()));
        let (id, p, _) = query(&db, &mut emb, ctx, Some("oak planks"), &cfg)
            .expect("q")
            .expect("match");
        assert_eq!(
            (id, p.merged, p.steps[0].as_str()),
            (a.id(), 1, "craft_plank()")
        );
        // Nothing close: no match.
        assert!(
            query(&db, &mut emb, "swim far away", None, &cfg)
                .expect("q")
                .is_none()
        );
        let c = store(
            &db,
            &mut emb,
            &plan(
                "Obtain planks. Inventory: Birch Log, Stick, Stone.",
                &["x()"],
            ),
            &cfg,
        )
        .expect("c");
        let d = store(
            &db,
            &mut emb,
            &plan(
                "Obtain planks. Inventory: Dirt, Sand, Gravel, Torch.",
                &["y()"],
            ),
            &cfg,
        )
        .expect("d");
        assert!(matches!(c, Stored::Inserted(_)) && matches!(d, Stored::Inserted(_)));
        let ids: Vec<i64> = db
            .list(Some(MODULE))
            .expect("l")
            .iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(ids, vec![c.id(), d.id()], "the oldest was evicted");
    }

    #[test]
    fn a_plan_stored_under_another_embedder_is_embedded_again_and_found() {
        // A vector of another size (another embedder model) would match nothing; it is replaced.
        let dir = tempfile::tempdir().expect("tmp");
        let db = Db::open(&dir.path().join("t.sqlite")).expect("db");
        let ctx = "Obtain planks. Inventory: Oak Log.";
        let p = plan(ctx, &["craft_plank()"]);
        let stale = [1.0f32, 0.0, 0.0];
        let id = db
            .insert(
                MODULE,
                "oak planks",
                &serde_json::to_value(&p).expect("json"),
                Some(&stale),
            )
            .expect("insert");
        let cfg = crate::config::Config::builtin().memory;
        let mut emb = BagOfWords;
        let (found, _, distance) = query(&db, &mut emb, ctx, None, &cfg)
            .expect("q")
            .expect("match");
        assert_eq!(found, id);
        assert!(distance < 1e-6, "{distance}");
        let saved = db.get(id).expect("get").expect("entry").embedding;
        assert_eq!(saved, Some(emb.embed(ctx).expect("embed")));
    }
}
