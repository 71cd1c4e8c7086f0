//! Long-term memory across episodes, from four papers, each a selectable module
//! (`memory.modules`) persisted in one SQLite file per game profile ([`db`]) and rendered into
//! its own delimited prompt section (`{long_term_memory}` in the prompt template):
//!
//! - `experiences` ([`experience`], MINDSTORES): (state, task, plan, outcome) tuples of every
//!   attempted sub-task, retrieved by weighted cosine, turned into insights, and used to
//!   predict a plan's outcome (a predicted failure asks for a revision, a bounded number of
//!   times);
//! - `howto` ([`howto`], How^2): abstract answers of a teacher (the LLM answering from the
//!   knowledge graph) to "how do I get X?", stored under the item and its tags, checked for
//!   relevance before reuse;
//! - `plans` ([`plans`], M2PA): successful sub-goal plans with their context; the newest match
//!   under a distance threshold wins; near-duplicates merge; a cap evicts the oldest;
//! - `exemplars` ([`exemplars`], ICAL appendix): successful episodes as contextual state
//!   descriptors, retrieved as exemplars, and the exploration prompt that proposes a next task.
//!
//! With no module selected nothing is opened and the prompt is unchanged.

pub mod db;
mod episode;
pub mod exemplars;
mod experience;
pub mod howto;
mod plans;
pub mod scripted;
pub(crate) mod settings;
mod text_helpers;

pub use db::{Db, Entry};
pub use episode::{Tracker, TrackerEvent, missing_tool, next_missing};
pub use text_helpers::list_or_none;

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::MemoryConfig;
use crate::embedding::{EmbeddingError, SentenceEncoder};
use crate::knowledge::KnowledgeGraph;

/// The selectable modules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Module {
    Experiences,
    Howto,
    Plans,
    Exemplars,
}

impl Module {
    pub const ALL: [Module; 4] = [
        Module::Experiences,
        Module::Howto,
        Module::Plans,
        Module::Exemplars,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Module::Experiences => "experiences",
            Module::Howto => "howto",
            Module::Plans => "plans",
            Module::Exemplars => "exemplars",
        }
    }

    pub fn parse(s: &str) -> Option<Module> {
        Module::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// Whether the module embeds text (and so needs the sentence encoder).
    pub fn embeds(self) -> bool {
        !matches!(self, Module::Howto)
    }
}

impl std::fmt::Display for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("memory database {path}: {source}")]
    Sql {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("cannot create {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "memory database {path} has schema version {found}, newer than this build's {supported}"
    )]
    NewerSchema {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("memory database {path}: entry {id} is unreadable: {reason}")]
    Corrupt {
        path: PathBuf,
        id: i64,
        reason: String,
    },
    #[error("no data folder: set memory.db_dir, XDG_DATA_HOME or HOME")]
    NoDataDir,
    #[error("game profile \"{0}\" is not a usable file name")]
    BadProfile(String),
    #[error("module {0} needs the sentence encoder (embedding.model_dir)")]
    NoEncoder(Module),
    #[error(transparent)]
    Embedding(#[from] EmbeddingError),
}

/// Text to vector; the MiniLM encoder in the agent, a bag of words in unit tests.
pub trait Embedder {
    fn embed(&mut self, text: &str) -> Result<Vec<f32>, MemoryError>;
}

impl Embedder for SentenceEncoder {
    fn embed(&mut self, text: &str) -> Result<Vec<f32>, MemoryError> {
        Ok(SentenceEncoder::embed(self, text)?)
    }
}

/// A deterministic hashed bag-of-words embedder (unit length). No model needed: for unit tests
/// and for trying the commands without the MiniLM folder; the agent uses MiniLM.
#[derive(Debug, Clone, Default)]
pub struct BagOfWords;

impl Embedder for BagOfWords {
    fn embed(&mut self, text: &str) -> Result<Vec<f32>, MemoryError> {
        let mut v = vec![0f32; 256];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let h = word
                .to_lowercase()
                .bytes()
                .fold(0xcbf29ce484222325u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
                });
            v[(h % 256) as usize] += 1.0;
        }
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if n > 0.0 {
            v.iter_mut().for_each(|x| *x /= n);
        }
        Ok(v)
    }
}

/// Cosine of two vectors of any length (0 when either is zero or they differ in size).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

/// What the modules are asked about in one step.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// The task description.
    pub task: String,
    /// The item the agent is after now (the first missing one on the way to the target).
    pub subgoal: Option<String>,
    /// The state as text (inventory and environment).
    pub state: String,
    /// Item names in the inventory now.
    pub inventory: BTreeSet<String>,
    /// World objects seen now: name and whether in reach.
    pub environment: Vec<(String, bool)>,
}

impl Query {
    /// The task text of a sub-task: the task and the sub-goal.
    pub fn task_text(&self) -> String {
        match &self.subgoal {
            Some(g) => format!("{} Sub-goal: obtain {g}.", self.task),
            None => self.task.clone(),
        }
    }

    /// The M2PA context: task, sub-goal and inventory.
    pub fn context_text(&self) -> String {
        format!(
            "{} Inventory: {}.",
            self.task_text(),
            text_helpers::list_or_none(&self.inventory)
        )
    }
}

/// The selected modules over one open database.
pub struct LongTermMemory {
    pub config: MemoryConfig,
    modules: Vec<Module>,
    db: Option<Db>,
    embedder: Option<Box<dyn Embedder>>,
}

impl LongTermMemory {
    /// No module: nothing stored, empty sections.
    pub fn disabled(config: &MemoryConfig) -> Self {
        LongTermMemory {
            config: config.clone(),
            modules: Vec::new(),
            db: None,
            embedder: None,
        }
    }

    /// Opens the profile's database when a module is selected. Modules that embed need
    /// `embedder`.
    pub fn open(
        config: &MemoryConfig,
        profile: &str,
        embedder: Option<Box<dyn Embedder>>,
    ) -> Result<Self, MemoryError> {
        let mut modules = config.modules.clone();
        modules.sort();
        modules.dedup();
        if modules.is_empty() {
            return Ok(Self::disabled(config));
        }
        if let Some(m) = modules.iter().find(|m| m.embeds())
            && embedder.is_none()
        {
            return Err(MemoryError::NoEncoder(*m));
        }
        let db = Db::open(&db::db_path(&config.db_dir, profile)?)?;
        Ok(LongTermMemory {
            config: config.clone(),
            modules,
            db: Some(db),
            embedder,
        })
    }

    pub fn modules(&self) -> &[Module] {
        &self.modules
    }

    pub fn is_enabled(&self, m: Module) -> bool {
        self.modules.contains(&m)
    }

    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    pub fn db(&self) -> Option<&Db> {
        self.db.as_ref()
    }

    /// The database and the embedder of an enabled module.
    fn parts(&mut self, m: Module) -> Option<(&Db, &mut dyn Embedder)> {
        if !self.is_enabled(m) {
            return None;
        }
        let db = self.db.as_ref()?;
        let emb = self.embedder.as_deref_mut()?;
        Some((db, emb))
    }

    /// One module's prompt section ("" when off or when it has nothing to say).
    pub fn module_section(
        &mut self,
        m: Module,
        q: &Query,
        kg: &KnowledgeGraph,
    ) -> Result<String, MemoryError> {
        let cfg = self.config.clone();
        if m == Module::Howto {
            if !self.is_enabled(m) {
                return Ok(String::new());
            }
            let Some(db) = self.db.as_ref() else {
                return Ok(String::new());
            };
            return howto::section(db, q, kg);
        }
        let Some((db, emb)) = self.parts(m) else {
            return Ok(String::new());
        };
        match m {
            Module::Experiences => experience::section(db, emb, q, &cfg),
            Module::Plans => plans::section(db, emb, q, &cfg),
            Module::Exemplars => exemplars::section(db, emb, q, kg, &cfg),
            Module::Howto => Ok(String::new()),
        }
    }

    /// The whole `{long_term_memory}` text: each module's section, in a fixed order; "" when
    /// none has anything.
    pub fn section(&mut self, q: &Query, kg: &KnowledgeGraph) -> Result<String, MemoryError> {
        let mut out = String::new();
        for m in self.modules.clone() {
            out.push_str(&self.module_section(m, q, kg)?);
        }
        Ok(out)
    }

    /// Stores what the tracker saw finish (attempts, sub-goal plans, episodes) in the enabled
    /// modules; returns the ids written.
    pub fn store(
        &mut self,
        event: &TrackerEvent,
        kg: &KnowledgeGraph,
    ) -> Result<Vec<i64>, MemoryError> {
        let cfg = self.config.clone();
        let mut ids = Vec::new();
        match event {
            TrackerEvent::Attempt(exp) => {
                if let Some((db, emb)) = self.parts(Module::Experiences) {
                    ids.push(experience::record(db, emb, exp)?);
                }
            }
            TrackerEvent::SubgoalDone(plan) => {
                if let Some((db, emb)) = self.parts(Module::Plans) {
                    ids.push(plans::store(db, emb, plan, &cfg)?.id());
                }
            }
            TrackerEvent::EpisodeDone(episode) => {
                if let Some((db, emb)) = self.parts(Module::Exemplars) {
                    ids.push(exemplars::store(db, emb, episode, kg)?);
                }
            }
        }
        Ok(ids)
    }

    /// MINDSTORES outcome prediction of `plan` (None when the module is off).
    pub fn predict(
        &mut self,
        q: &Query,
        plan: &str,
    ) -> Result<Option<experience::Prediction>, MemoryError> {
        let cfg = self.config.clone();
        let Some((db, emb)) = self.parts(Module::Experiences) else {
            return Ok(None);
        };
        experience::predict(db, emb, &q.state, &q.task_text(), plan, &cfg).map(Some)
    }

    /// MINDSTORES' revision loop over a proposer (see [`experience::revise`]); the proposal is
    /// kept as is when the module is off.
    pub fn revise<E: From<MemoryError>>(
        &mut self,
        q: &Query,
        mut propose: impl FnMut(Option<&str>) -> Result<Option<String>, E>,
    ) -> Result<Option<experience::Revised>, E> {
        let cfg = self.config.clone();
        match self.parts(Module::Experiences) {
            Some((db, emb)) => experience::revise(db, emb, q, &cfg, propose),
            None => Ok(propose(None)?.map(|plan| experience::Revised {
                plan,
                rejected: Vec::new(),
            })),
        }
    }

    /// Whether the how-to memory lacks a relevant entry for `item` (false when it is off).
    pub fn lacks_howto(&self, item: &str, kg: &KnowledgeGraph) -> Result<bool, MemoryError> {
        match (&self.db, self.is_enabled(Module::Howto)) {
            (Some(db), true) => Ok(howto::lookup(db, item, kg)?.is_none()),
            _ => Ok(false),
        }
    }

    /// Parses and stores a teacher's answer; a malformed one is refused and nothing is stored.
    pub fn store_howto(
        &self,
        item: &str,
        answer: &str,
    ) -> Result<Result<i64, howto::AnswerError>, MemoryError> {
        let Some(db) = self.db.as_ref().filter(|_| self.is_enabled(Module::Howto)) else {
            return Ok(Err(howto::AnswerError::Off));
        };
        match howto::parse_answer(answer, item) {
            Ok(h) => howto::store(db, &h).map(Ok),
            Err(e) => Ok(Err(e)),
        }
    }

    /// The embedder (for the exploration prompt).
    pub fn embedder(&mut self) -> Option<&mut (dyn Embedder + 'static)> {
        self.embedder.as_deref_mut()
    }
}
