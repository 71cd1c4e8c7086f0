//! The agent's parts put together for a command: config, graph, task, game profile, prompt
//! template (`load_parts`), and the long-term memory of a play session.

use anyhow::{Context, Result};
use vistawise::agent::pipeline::Parts;
use vistawise::agent::play::LongTerm;
use vistawise::embedding::SentenceEncoder;
use vistawise::longterm::{Embedder, LongTermMemory, Module};
use vistawise::perception::runtime;
use vistawise::policy::LlmClient;

use super::AppContext;
use super::kg::{GraphArgs, load};

/// The fixed parts of the agent for a task: config, graph, task, game profile, prompt template.
pub(super) fn load_parts(ctx: &AppContext, graph: &GraphArgs, task_id: &str) -> Result<Parts> {
    let (kg, tasks) = load(ctx, graph)?;
    Ok(Parts::assemble(
        ctx.config().clone(),
        kg,
        &tasks,
        ctx.root(),
        task_id,
    )?)
}

/// The play loop's long-term memory: nothing when `memory.modules` is empty.
pub(super) fn open_long_term(ctx: &AppContext, parts: &Parts) -> Result<LongTerm> {
    let c = &parts.config;
    if c.memory.modules.is_empty() {
        return Ok(LongTerm::disabled(&c.memory));
    }
    let embedder = if c.memory.modules.iter().any(|m| m.embeds()) {
        Some(encoder(ctx)?)
    } else {
        None
    };
    let memory = LongTermMemory::open(&c.memory, &c.game.profile, embedder)
        .context("cannot open the long-term memory")?;
    if let Some(db) = memory.db() {
        eprintln!(
            "long-term memory: {} in {}",
            memory
                .modules()
                .iter()
                .map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            db.path.display()
        );
    }
    let teacher = if memory.is_enabled(Module::Howto) {
        Some(LlmClient::new(&c.llm).context("the how-to memory's teacher (the [llm] endpoint)")?)
    } else {
        None
    };
    Ok(LongTerm::new(memory, teacher, &parts.task.description))
}

/// The MiniLM sentence encoder the long-term memory embeds with.
pub(super) fn encoder(ctx: &AppContext) -> Result<Box<dyn Embedder>> {
    runtime::init(ctx.ort_lib().as_deref())?;
    let c = &ctx.config().embedding;
    let enc = SentenceEncoder::load(&c.model_dir, c.threads)
        .context("the long-term memory needs the MiniLM encoder (embedding.model_dir)")?;
    Ok(Box::new(enc))
}
