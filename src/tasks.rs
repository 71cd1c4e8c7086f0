//! Tasks (`config/tasks.toml`): what the agent is asked to obtain, per game profile.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::toml_lines::{self, DataFileError};

#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error(transparent)]
    File(#[from] DataFileError),
    #[error("no task \"{id}\" for profile {profile} in {path} (known: {})", .known.join(", "))]
    Unknown {
        id: String,
        profile: String,
        path: PathBuf,
        known: Vec<String>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub id: String,
    pub profile: String,
    /// Knowledge-graph node to obtain.
    pub target: String,
    /// The task prompt.
    pub description: String,
    /// Chain-of-thought questions the prompt ends with.
    pub cot: Vec<String>,
    /// Line of the task in its file (for errors found later, e.g. a target missing from the KG).
    pub line: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTasks {
    task: Vec<Spanned<RawTask>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    id: String,
    profile: String,
    target: String,
    description: String,
    #[serde(default)]
    cot: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct TaskList {
    pub tasks: Vec<Task>,
    pub source: PathBuf,
}

impl TaskList {
    pub fn load(path: &Path) -> Result<Self, TaskError> {
        let text = toml_lines::read(path)?;
        let invalid = |line: usize, message: String| DataFileError::at(path, line, message);
        let raw: RawTasks = toml_lines::from_str(&text).map_err(|(line, m)| invalid(line, m))?;
        let mut seen: HashMap<(String, String), usize> = HashMap::new();
        let mut tasks = Vec::new();
        for t in raw.task {
            let line = toml_lines::line_at(&text, t.span().start);
            let t = t.into_inner();
            if t.id.trim().is_empty() || t.target.trim().is_empty() {
                return Err(TaskError::File(invalid(
                    line,
                    "id and target must not be empty".into(),
                )));
            }
            if let Some(first) = seen.insert((t.profile.clone(), t.id.clone()), line) {
                return Err(TaskError::File(invalid(
                    line,
                    format!(
                        "task \"{}\" of profile {} is defined twice (first at line {first})",
                        t.id, t.profile
                    ),
                )));
            }
            tasks.push(Task {
                id: t.id,
                profile: t.profile,
                target: t.target,
                description: t.description,
                cot: t.cot,
                line,
            });
        }
        Ok(TaskList {
            tasks,
            source: path.to_path_buf(),
        })
    }

    pub fn for_profile<'a>(&'a self, profile: &'a str) -> impl Iterator<Item = &'a Task> + 'a {
        self.tasks.iter().filter(move |t| t.profile == profile)
    }

    fn find(&self, profile: &str, id: &str) -> Option<&Task> {
        self.tasks
            .iter()
            .find(|t| t.profile == profile && t.id == id)
    }

    /// The task `id` of the first profile of `lineage` (a profile, then its bases) that has it.
    pub fn get_inherited(&self, lineage: &[String], id: &str) -> Result<&Task, TaskError> {
        lineage
            .iter()
            .find_map(|p| self.find(p, id))
            .map_or_else(|| self.get(&lineage[0], id), Ok)
    }

    pub fn get(&self, profile: &str, id: &str) -> Result<&Task, TaskError> {
        self.find(profile, id).ok_or_else(|| TaskError::Unknown {
            id: id.to_string(),
            profile: profile.to_string(),
            path: self.source.clone(),
            known: self.for_profile(profile).map(|t| t.id.clone()).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_tasks_load_and_unknown_ids_list_the_known_ones() {
        let list = TaskList::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("config/tasks.toml"))
            .expect("tasks");
        assert_eq!(
            list.get("minecraft", "diamond").expect("task").target,
            "Diamond"
        );
        let err = list
            .get("minecraft", "netherite")
            .expect_err("unknown")
            .to_string();
        assert!(err.contains("known: log, planks"), "{err}");
    }

    #[test]
    fn duplicates_and_bad_keys_name_the_line() {
        let dir = tempfile::tempdir().expect("temp");
        let p = dir.path().join("tasks.toml");
        let t = "[[task]]\nid = \"a\"\nprofile = \"m\"\ntarget = \"X\"\ndescription = \"d\"\n";
        std::fs::write(&p, format!("{t}{t}")).expect("write");
        let err = TaskList::load(&p).expect_err("duplicate").to_string();
        assert!(
            err.contains("tasks.toml:6:") && err.contains("first at line 1"),
            "{err}"
        );
        std::fs::write(&p, "[[task]]\nid = \"a\"\ngoal = \"X\"\n").expect("write");
        let err = TaskList::load(&p).expect_err("bad key").to_string();
        assert!(err.contains("tasks.toml:3:"), "{err}");
    }
}
