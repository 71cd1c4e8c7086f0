//! The long-term memory's part in a step: what finished is stored, the teacher is asked where
//! the sub-goal has no how-to, the `{long_term_memory}` text is rendered, and MINDSTORES'
//! outcome prediction sends a doomed LLM action back for revision.

use crate::llm::LlmClient;
use crate::longterm::{LongTermMemory, Query, Tracker, TrackerEvent, howto, missing_tool};
use crate::skills::{ActResult, StopFlag};

use super::end::EndReason;
use super::pipeline::Parts;
use crate::policy::{Asker, DecideError, Decision, Observation, Policy, until_stopped};

/// The long-term memory of a play session: the selected modules, the teacher the how-to memory
/// asks (the LLM endpoint), and what the episode has done so far.
pub struct LongTerm {
    pub memory: LongTermMemory,
    pub teacher: Option<LlmClient>,
    tracker: Tracker,
    asked: std::collections::BTreeSet<String>,
}

impl LongTerm {
    pub fn new(memory: LongTermMemory, teacher: Option<LlmClient>, goal: &str) -> Self {
        LongTerm {
            memory,
            teacher,
            tracker: Tracker::new(goal),
            asked: Default::default(),
        }
    }

    /// No module: the loop behaves as without long-term memory.
    pub fn disabled(config: &crate::config::MemoryConfig) -> Self {
        Self::new(LongTermMemory::disabled(config), None, "")
    }

    fn store(&mut self, events: Vec<TrackerEvent>, kg: &crate::knowledge::KnowledgeGraph) {
        for ev in events {
            if let Err(e) = self.memory.store(&ev, kg) {
                tracing::warn!("long-term memory: cannot store: {e}");
            }
        }
    }

    /// One step: store what finished, ask the teacher when the sub-goal has no how-to, and
    /// render the `{long_term_memory}` text. Memory errors are logged, never fatal. Returns
    /// the text and the teacher's tokens.
    pub fn step(
        &mut self,
        parts: &Parts,
        q: &Query,
        runtime: &tokio::runtime::Runtime,
        stop: &StopFlag,
    ) -> (String, u64) {
        if self.memory.is_empty() {
            return (String::new(), 0);
        }
        let kg = &parts.kg;
        let events = self.tracker.observe(q, &|plan: &str, before: &Query| {
            missing_tool(kg, plan, &before.inventory)
        });
        self.store(events, kg);
        let mut tokens = 0;
        if let (Some(item), Some(teacher)) = (&q.subgoal, &self.teacher)
            && !self.asked.contains(item)
            && self.memory.lacks_howto(item, kg).unwrap_or(false)
        {
            self.asked.insert(item.clone());
            let asked = until_stopped(
                runtime,
                stop,
                howto::ask(teacher, &parts.config.llm, kg, item),
            );
            match asked {
                None => tracing::info!("stopped while asking the teacher about {item}"),
                Some(Ok(c)) => {
                    if let Some(u) = c.response.usage() {
                        tokens = u.total();
                    }
                    let answer = c.response.text();
                    match self.memory.store_howto(item, &answer) {
                        Ok(Ok(id)) => tracing::info!("how-to for {item} stored as entry {id}"),
                        Ok(Err(e)) => tracing::warn!("how-to for {item} refused: {e}"),
                        Err(e) => tracing::warn!("long-term memory: {e}"),
                    }
                }
                Some(Err(e)) => tracing::warn!("the teacher did not answer about {item}: {e}"),
            }
        }
        let text = self.memory.section(q, kg).unwrap_or_else(|e| {
            tracing::warn!("long-term memory: no section this step: {e}");
            String::new()
        });
        (text, tokens)
    }

    /// The step's action ran with this result.
    pub fn acted(&mut self, q: &Query, plan: &str, result: &ActResult) {
        if !self.memory.is_empty() {
            self.tracker.acted(q, plan, result);
        }
    }

    /// The episode is over: store the last attempt and, on success, the exemplar.
    pub fn finish(&mut self, end: &EndReason, kg: &crate::knowledge::KnowledgeGraph) {
        if !self.memory.is_empty() {
            let events = self.tracker.finish(end.is_success(), &end.to_string());
            self.store(events, kg);
        }
    }
}

/// MINDSTORES' outcome prediction on the LLM's action: while the experience store predicts it
/// fails, the LLM is asked again with the prediction, at most `memory.max_revisions` times.
/// Every answer's attempts, tokens and cost are kept.
pub fn revise(
    policy: &mut dyn Policy,
    parts: &Parts,
    obs: &Observation<'_>,
    asker: &Asker<'_>,
    query: &Query,
    long_term: &mut LongTerm,
    mut decision: Decision,
) -> Decision {
    for _ in 0..parts.config.memory.max_revisions {
        let Some(plan) = decision.action.as_ref().map(|a| a.call.to_string()) else {
            break;
        };
        let prediction = match long_term.memory.predict(query, &plan) {
            Ok(Some(p)) if !p.success => p,
            Ok(_) => break,
            Err(e) => {
                tracing::warn!("long-term memory: no outcome prediction: {e}");
                break;
            }
        };
        let feedback = prediction.feedback(&plan);
        let revised_prompt = format!("{}\n\n{feedback}", obs.prompt);
        let revised = Observation {
            prompt: &revised_prompt,
            ..*obs
        };
        match policy.decide(&revised, asker) {
            // Stopped: the first answer stands; the loop ends before it is acted on.
            Err(DecideError::Stopped) => break,
            Ok(mut next) => {
                let mut attempts = std::mem::take(&mut decision.attempts);
                attempts.append(&mut next.attempts);
                next.attempts = attempts;
                next.add_spent(decision.usage, decision.cost_usd);
                next.reasoning = format!("{feedback}\n{}", next.reasoning);
                if next.action.is_none() {
                    // Keep the first action rather than none.
                    next.action = decision.action.take();
                }
                decision = next;
            }
            Err(DecideError::Llm(e)) => {
                tracing::warn!("revision request failed: {e}");
                break;
            }
        }
    }
    decision
}
