//! vistawise: a desktop Minecraft agent after the VistaWise paper (EMNLP 2025).
//!
//! The pipeline, one module per stage: [`capture`] -> [`perception`] -> knowledge graph ->
//! [`policy`] -> skills, with session recording around it. [`config`] holds every tunable.

pub mod agent;
pub mod annotate;
pub mod atomic_file;
pub mod capture;
pub mod config;
pub mod dataset;
pub mod embedding;
pub mod eval;
pub mod game;
pub mod knowledge;
pub mod llm;
pub mod longterm;
pub mod perception;
pub mod policy;
pub mod profile_file;
pub mod skills;
pub mod tasks;
pub mod testworld;
pub mod toml_lines;
