//! Scripted episodes ([`crate::longterm::scripted`]) through the real pipeline with the
//! long-term memory: what the prompt would be at each step, with no game, detector or policy.

use crate::longterm::scripted::{self, ScriptedEpisode};
use crate::policy::MemoryStack;
use crate::skills::StopFlag;

use super::end::EndReason;
use super::memory_step::LongTerm;
use super::pipeline::{self, Parts};

/// One scripted step's prompt size.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTokens {
    pub step: usize,
    /// The whole prompt (o200k_base).
    pub prompt_tokens: usize,
    /// The `{long_term_memory}` text alone.
    pub memory_tokens: usize,
    pub prompt: String,
}

/// Runs one episode: each step is perceived, the memory observes it and fills its section, the
/// prompt is built, and the scripted action is reported as done. The episode's end is stored.
pub fn run_episode(
    parts: &Parts,
    long_term: &mut LongTerm,
    episode: &ScriptedEpisode,
    runtime: &tokio::runtime::Runtime,
) -> Vec<StepTokens> {
    let stack = MemoryStack::default();
    let mut out = Vec::new();
    for (i, step) in episode.steps.iter().enumerate() {
        let perception = scripted::perception(step);
        let graph = pipeline::graph_view(parts, &perception);
        let query = pipeline::memory_query(parts, &perception, &graph);
        // Nothing stops a scripted episode but its end.
        let (text, _) = long_term.step(parts, &query, runtime, &StopFlag::default());
        let (prompt, prompt_tokens) =
            pipeline::build_prompt_with(parts, &perception, &graph, &stack, &text);
        out.push(StepTokens {
            step: i + 1,
            prompt_tokens,
            memory_tokens: parts.counter.count(&text),
            prompt,
        });
        if let Some(action) = step.action {
            long_term.acted(&query, action, &step.result);
        }
    }
    let end = if episode.success {
        EndReason::Success
    } else {
        EndReason::StepLimit(episode.steps.len() as u64)
    };
    long_term.finish(&end, &parts.kg);
    out
}
