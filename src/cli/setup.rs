//! The agent's parts for a command, from the library's [`Setup`] over the command's config and
//! `--root`: the CLI only turns its flags into what `Setup` asks for, and prints.

use anyhow::Result;
use vistawise::agent::GraphFiles;
use vistawise::agent::pipeline::Parts;
use vistawise::agent::play::LongTerm;
use vistawise::longterm::Embedder;

use super::AppContext;
use super::kg::GraphArgs;

impl GraphArgs {
    pub fn files(&self) -> GraphFiles {
        GraphFiles {
            kg: self.kg.clone(),
            tasks: self.tasks.clone(),
        }
    }
}

/// The fixed parts of the agent for a task: config, graph, task, game profile, prompt template.
pub(super) fn load_parts(ctx: &AppContext, graph: &GraphArgs, task_id: &str) -> Result<Parts> {
    Ok(ctx.setup().parts(&graph.files(), task_id)?)
}

/// The play loop's long-term memory: nothing when `memory.modules` is empty.
pub(super) fn open_long_term(ctx: &AppContext, parts: &Parts) -> Result<LongTerm> {
    let long_term = ctx.setup().long_term(parts)?;
    if let Some(db) = long_term.memory.db() {
        eprintln!(
            "long-term memory: {} in {}",
            long_term
                .memory
                .modules()
                .iter()
                .map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            db.path.display()
        );
    }
    Ok(long_term)
}

/// The MiniLM sentence encoder the long-term memory embeds with.
pub(super) fn encoder(ctx: &AppContext) -> Result<Box<dyn Embedder>> {
    Ok(ctx.setup().encoder()?)
}
