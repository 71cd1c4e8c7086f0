//! Composition: one [`Setup`] built from the loaded config and the project root hands out the
//! agent's parts (graph, task list, [`Parts`]), the detector, the long-term memory with its
//! teacher, the sentence encoder and the async runtime, so that every command builds them the
//! same way and `cli/` keeps arguments and printing only.

use std::path::{Path, PathBuf};

use super::memory_step::LongTerm;
use super::pipeline::{Parts, SetupError as PartsError};
use crate::config::{Config, under_root};
use crate::embedding::{EmbeddingError, SentenceEncoder};
use crate::knowledge::{GraphError, KnowledgeGraph};
use crate::llm::{LlmClient, LlmError};
use crate::longterm::{Embedder, LongTermMemory, MemoryError, Module};
use crate::perception::{Detector, DetectorError, runtime};
use crate::tasks::{TaskError, TaskList};

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error(transparent)]
    Tasks(#[from] TaskError),
    #[error(transparent)]
    Parts(#[from] PartsError),
    #[error(transparent)]
    Runtime(#[from] runtime::RuntimeError),
    #[error(transparent)]
    Detector(#[from] DetectorError),
    #[error("the long-term memory needs the MiniLM encoder (embedding.model_dir): {0}")]
    Encoder(#[from] EmbeddingError),
    #[error("cannot open the long-term memory: {0}")]
    Memory(#[from] MemoryError),
    #[error("the how-to memory's teacher (the [llm] endpoint): {0}")]
    Teacher(#[source] LlmError),
    #[error("cannot start the async runtime: {0}")]
    AsyncRuntime(String),
}

/// Where the graph and the task list come from: the files given, else the profile's own
/// under the project root.
#[derive(Debug, Clone, Default)]
pub struct GraphFiles {
    /// The graph file [default: `kg/<profile>.toml`, or the first of the profile's lineage].
    pub kg: Option<PathBuf>,
    /// The tasks file [default: `config/tasks.toml`].
    pub tasks: Option<PathBuf>,
}

/// The loaded config, the project root and the ONNX Runtime library asked for.
pub struct Setup<'c> {
    pub config: &'c Config,
    pub root: &'c Path,
    /// `--ort-lib`, else `onnxruntime.library` (`None`: search).
    pub ort_lib: Option<PathBuf>,
}

impl Setup<'_> {
    /// `relative` under the project root.
    pub fn in_root(&self, relative: impl AsRef<Path>) -> PathBuf {
        under_root(self.root, relative.as_ref())
    }

    /// The graph file: the one given, else the first `kg/<profile>.toml` of the profile's
    /// lineage that exists (a profile laid over another shares its graph).
    pub fn graph_path(&self, files: &GraphFiles) -> PathBuf {
        files.kg.clone().unwrap_or_else(|| {
            let profile = &self.config.game.profile;
            crate::toml_lines::profile_lineage(&self.root.join("config/games"), profile)
                .iter()
                .map(|p| self.in_root(format!("kg/{p}.toml")))
                .find(|p| p.is_file())
                .unwrap_or_else(|| self.in_root(format!("kg/{profile}.toml")))
        })
    }

    pub fn graph_and_tasks(
        &self,
        files: &GraphFiles,
    ) -> Result<(KnowledgeGraph, TaskList), SetupError> {
        let kg = KnowledgeGraph::load(&self.graph_path(files))?;
        let tasks_path = match &files.tasks {
            Some(path) => path.clone(),
            None => self.in_root("config/tasks.toml"),
        };
        Ok((kg, TaskList::load(&tasks_path)?))
    }

    /// The fixed parts of the agent for task `task_id`: config, graph, task, game profile,
    /// prompt template.
    pub fn parts(&self, files: &GraphFiles, task_id: &str) -> Result<Parts, SetupError> {
        let (kg, tasks) = self.graph_and_tasks(files)?;
        Ok(Parts::assemble(
            self.config.clone(),
            kg,
            &tasks,
            self.root,
            task_id,
        )?)
    }

    /// ONNX Runtime, loaded once for the process.
    pub fn onnx_runtime(&self) -> Result<runtime::RuntimeInfo, SetupError> {
        Ok(runtime::init(self.ort_lib.as_deref())?)
    }

    /// The configured detector (`[detector]`: model, threads, input size).
    pub fn detector(&self) -> Result<Detector, SetupError> {
        self.onnx_runtime()?;
        Ok(Detector::from_config(&self.config.detector)?)
    }

    /// The MiniLM sentence encoder the long-term memory embeds with.
    pub fn encoder(&self) -> Result<Box<dyn Embedder>, SetupError> {
        self.onnx_runtime()?;
        let c = &self.config.embedding;
        Ok(Box::new(SentenceEncoder::load(&c.model_dir, c.threads)?))
    }

    /// The play loop's long-term memory (`memory.modules`; disabled when there is none), with
    /// the teacher the how-to memory asks.
    pub fn long_term(&self, parts: &Parts) -> Result<LongTerm, SetupError> {
        let c = &parts.config;
        if c.memory.modules.is_empty() {
            return Ok(LongTerm::disabled(&c.memory));
        }
        let embedder = if c.memory.modules.iter().any(|m| m.embeds()) {
            Some(self.encoder()?)
        } else {
            None
        };
        let memory = LongTermMemory::open(&c.memory, &c.game.profile, embedder)?;
        let teacher = if memory.is_enabled(Module::Howto) {
            Some(LlmClient::new(&c.llm).map_err(SetupError::Teacher)?)
        } else {
            None
        };
        Ok(LongTerm::new(memory, teacher, &parts.task.description))
    }

    /// The one async runtime a command's LLM requests run on.
    pub fn async_runtime(&self) -> Result<tokio::runtime::Runtime, SetupError> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| SetupError::AsyncRuntime(e.to_string()))
    }
}
