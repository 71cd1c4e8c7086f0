//! MINDSTORES' experience store: a (state, task, plan, outcome) tuple for every attempted
//! sub-task, success or failure with its reason; state, task and plan embedded. Retrieval is
//! top-k by weighted cosine (paper: lambda_state 0.4, lambda_task 0.4, lambda_plan 0.2; the
//! first retrieval uses state and task, outcome prediction all three). Insights are drawn from
//! the retrieved experiences; outcome prediction votes among similar past plans, and a
//! predicted failure asks the policy to revise its plan (at most `memory.max_revisions` times).

use serde::{Deserialize, Serialize};

use super::db::Db;
use super::{Embedder, MemoryError, Query, cosine, text_helpers};
use crate::config::MemoryConfig;

pub const MODULE: &str = "experiences";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Experience {
    pub state: String,
    pub task: String,
    pub plan: String,
    pub success: bool,
    /// Why it failed (or what it achieved).
    pub reason: String,
}

impl Experience {
    pub fn outcome(&self) -> String {
        match self.success {
            true => format!("succeeded ({})", self.reason),
            false => format!("failed: {}", self.reason),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub id: i64,
    pub experience: Experience,
    /// Weighted cosine, normalised by the weights used (so 1.0 is identical).
    pub score: f32,
    /// Cosine of the plans alone.
    pub plan_similarity: f32,
}

/// Stores one attempt with its three embeddings (state, task, plan, concatenated).
pub fn record(db: &Db, emb: &mut dyn Embedder, e: &Experience) -> Result<i64, MemoryError> {
    let vectors = embed_three(emb, e)?;
    let data = serde_json::to_value(e).unwrap_or_default();
    db.insert(MODULE, &e.task, &data, Some(&vectors))
}

fn embed_three(emb: &mut dyn Embedder, e: &Experience) -> Result<Vec<f32>, MemoryError> {
    let mut v = emb.embed(&e.state)?;
    v.extend(emb.embed(&e.task)?);
    v.extend(emb.embed(&e.plan)?);
    Ok(v)
}

/// Top-k experiences for (state, task[, plan]) by weighted cosine.
pub fn retrieve(
    db: &Db,
    emb: &mut dyn Embedder,
    state: &str,
    task: &str,
    plan: Option<&str>,
    cfg: &MemoryConfig,
) -> Result<Vec<Scored>, MemoryError> {
    let qs = emb.embed(state)?;
    let qt = emb.embed(task)?;
    let qp = plan.map(|p| emb.embed(p)).transpose()?;
    let dim = qs.len();
    // Each entry's vector is its state, task and plan embeddings one after another.
    let mut scored: Vec<Scored> = db
        .list_embedded(MODULE, "experience", 3 * dim, |e| embed_three(emb, e))?
        .into_iter()
        .map(|(id, experience, v)| {
            let (vs, rest) = v.split_at(dim);
            let (vt, vp) = rest.split_at(dim);
            let plan_similarity = qp.as_ref().map_or(0.0, |qp| cosine(qp, vp));
            let mut score = cfg.lambda_state * cosine(&qs, vs) + cfg.lambda_task * cosine(&qt, vt);
            let mut weights = cfg.lambda_state + cfg.lambda_task;
            if qp.is_some() {
                score += cfg.lambda_plan * plan_similarity;
                weights += cfg.lambda_plan;
            }
            Scored {
                id,
                experience,
                score: if weights > 0.0 { score / weights } else { 0.0 },
                plan_similarity,
            }
        })
        .collect();
    // Best first; the newer of equals first.
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.id.cmp(&a.id)));
    scored.truncate(cfg.top_k);
    Ok(scored)
}

/// What the retrieved experiences teach: failures to avoid (with their reasons) and plans that
/// worked, one line each, failures first, without repeats.
pub fn insights(retrieved: &[Scored]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for s in retrieved.iter().filter(|s| !s.experience.success) {
        let e = &s.experience;
        let also_worked = retrieved
            .iter()
            .any(|o| o.experience.success && o.experience.plan == e.plan);
        push(if also_worked {
            format!(
                "`{}` is unreliable here: it once failed ({}) and once worked; check the cause first.",
                e.plan, e.reason
            )
        } else {
            format!(
                "Avoid `{}` in a state like this: it failed ({}). Remove the cause first.",
                e.plan, e.reason
            )
        });
    }
    for s in retrieved.iter().filter(|s| s.experience.success) {
        push(format!(
            "`{}` worked for \"{}\".",
            s.experience.plan, s.experience.task
        ));
    }
    out
}

/// The predicted outcome of a plan and the experiences it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub success: bool,
    /// Summed scores voting for success and for failure.
    pub for_success: f32,
    pub for_failure: f32,
    pub evidence: Vec<Scored>,
}

impl Prediction {
    /// The feedback a revision request carries.
    pub fn feedback(&self, plan: &str) -> String {
        let reasons: Vec<String> = self
            .evidence
            .iter()
            .filter(|s| !s.experience.success)
            .map(|s| format!("`{}` failed: {}", s.experience.plan, s.experience.reason))
            .collect();
        format!(
            "Outcome prediction from past experience: `{plan}` is likely to fail ({}). Choose a different action that removes the cause.",
            reasons.join("; ")
        )
    }
}

/// Outcome prediction: the top-k experiences by state, task and plan, kept when their overall
/// score reaches `memory.predict_min_score` and their plan is the same kind of plan
/// (`memory.predict_plan_similarity`), vote with their scores. No evidence predicts success.
pub fn predict(
    db: &Db,
    emb: &mut dyn Embedder,
    state: &str,
    task: &str,
    plan: &str,
    cfg: &MemoryConfig,
) -> Result<Prediction, MemoryError> {
    let evidence: Vec<Scored> = retrieve(db, emb, state, task, Some(plan), cfg)?
        .into_iter()
        .filter(|s| {
            s.score >= cfg.predict_min_score && s.plan_similarity >= cfg.predict_plan_similarity
        })
        .collect();
    let vote = |ok: bool| -> f32 {
        evidence
            .iter()
            .filter(|s| s.experience.success == ok)
            .map(|s| s.score)
            .sum()
    };
    let (for_success, for_failure) = (vote(true), vote(false));
    Ok(Prediction {
        success: for_failure <= for_success,
        for_success,
        for_failure,
        evidence,
    })
}

/// A plan choice after outcome prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Revised {
    pub plan: String,
    /// The plans dropped because they were predicted to fail, with the feedback.
    pub rejected: Vec<(String, String)>,
}

/// MINDSTORES' loop: predict the outcome of `propose(None)`; while it is predicted to fail and
/// revisions are left, ask `propose(Some(feedback))` for another plan. The last plan is kept
/// when the revisions run out (or when the proposer has nothing else).
pub fn revise<E>(
    db: &Db,
    emb: &mut dyn Embedder,
    q: &Query,
    cfg: &MemoryConfig,
    mut propose: impl FnMut(Option<&str>) -> Result<Option<String>, E>,
) -> Result<Option<Revised>, E>
where
    E: From<MemoryError>,
{
    let Some(mut plan) = propose(None)? else {
        return Ok(None);
    };
    let mut rejected = Vec::new();
    for _ in 0..cfg.max_revisions {
        let p = predict(db, emb, &q.state, &q.task_text(), &plan, cfg)?;
        if p.success {
            break;
        }
        let feedback = p.feedback(&plan);
        match propose(Some(&feedback))? {
            Some(next) => rejected.push((std::mem::replace(&mut plan, next), feedback)),
            None => break,
        }
    }
    Ok(Some(Revised { plan, rejected }))
}

/// The prompt section: the retrieved experiences and the insights drawn from them.
pub fn section(
    db: &Db,
    emb: &mut dyn Embedder,
    q: &Query,
    cfg: &MemoryConfig,
) -> Result<String, MemoryError> {
    let found = retrieve(db, emb, &q.state, &q.task_text(), None, cfg)?;
    if found.is_empty() {
        return Ok(String::new());
    }
    let mut body: Vec<String> = found
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let e = &s.experience;
            format!(
                "{}. [{}] task: {} | state: {} | plan: {}",
                i + 1,
                e.outcome(),
                e.task,
                e.state,
                e.plan
            )
        })
        .collect();
    body.push("Insights:".into());
    body.extend(insights(&found).into_iter().map(|l| format!("- {l}")));
    Ok(text_helpers::section(
        "Long-term memory - past experiences in similar situations (experience store):",
        &body.join("\n"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::longterm::BagOfWords;

    fn cfg() -> MemoryConfig {
        crate::config::Config::builtin().memory
    }

    fn exp(state: &str, plan: &str, success: bool, reason: &str) -> Experience {
        Experience {
            state: state.into(),
            task: "Obtain an iron pickaxe. Sub-goal: obtain Iron Ore.".into(),
            plan: plan.into(),
            success,
            reason: reason.into(),
        }
    }

    #[test]
    fn retrieval_is_weighted_and_bounded_and_insights_name_failures() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = Db::open(&dir.path().join("t.sqlite")).expect("db");
        let mut emb = BagOfWords;
        let mut c = cfg();
        c.top_k = 2;
        record(
            &db,
            &mut emb,
            &exp(
                "inventory: Wooden Pickaxe",
                "mine_iron_ore()",
                false,
                "a wooden pickaxe cannot mine iron ore",
            ),
        )
        .expect("rec");
        record(
            &db,
            &mut emb,
            &exp(
                "inventory: Oak Log",
                "craft_plank()",
                true,
                "got Oak Planks",
            ),
        )
        .expect("rec");
        let mut far = exp("sky", "jump()", true, "x");
        far.task = "dance".into();
        record(&db, &mut emb, &far).expect("rec");
        let got = retrieve(
            &db,
            &mut emb,
            "inventory: Wooden Pickaxe",
            "Obtain an iron pickaxe. Sub-goal: obtain Iron Ore.",
            None,
            &c,
        )
        .expect("retrieve");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].experience.plan, "mine_iron_ore()");
        assert!(got[0].score > got[1].score);
        let ins = insights(&got);
        assert!(ins[0].contains("Avoid `mine_iron_ore()`"), "{ins:?}");
        assert!(ins[0].contains("wooden pickaxe cannot mine"), "{ins:?}");
    }

    #[test]
    fn a_predicted_failure_revises_the_plan_a_bounded_number_of_times() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = Db::open(&dir.path().join("t.sqlite")).expect("db");
        let mut emb = BagOfWords;
        let c = cfg();
        let state = "inventory: Wooden Pickaxe";
        record(
            &db,
            &mut emb,
            &exp(state, "mine_iron_ore()", false, "needs a Stone Pickaxe"),
        )
        .expect("rec");
        let q = Query {
            task: "Obtain an iron pickaxe.".into(),
            subgoal: Some("Iron Ore".into()),
            state: state.into(),
            ..Query::default()
        };
        // A proposer that never changes its mind: revisions stop at the bound.
        let mut calls = 0;
        let r = revise::<MemoryError>(&db, &mut emb, &q, &c, |_| {
            calls += 1;
            Ok(Some("mine_iron_ore()".into()))
        })
        .expect("ok")
        .expect("plan");
        assert_eq!(calls as u32, 1 + c.max_revisions);
        assert_eq!(r.rejected.len() as u32, c.max_revisions);
        // One that listens: the feedback names the failure and the plan changes.
        let r = revise::<MemoryError>(&db, &mut emb, &q, &c, |fb| {
            Ok(Some(match fb {
                Some(f) if f.contains("Stone Pickaxe") => "craft_stone_pickaxe()".into(),
                _ => "mine_iron_ore()".into(),
            }))
        })
        .expect("ok")
        .expect("plan");
        assert_eq!(r.plan, "craft_stone_pickaxe()");
        assert_eq!(r.rejected.len(), 1);
    }
}
