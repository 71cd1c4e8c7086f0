//! A game profile file, `config/games/<game>.toml` with its bases merged in, read and
//! deserialised once into typed sections. Each section's type belongs to the subsystem that uses
//! it ([`RawGui`] the skills' screen geometry, [`PlannerConfig`] the planner, [`AutoLabelConfig`]
//! the labeller, ...); the file as a whole is strict, so a misspelt section is an error at its
//! line instead of a section nobody reads.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::autolabel::AutoLabelConfig;
use crate::agent::success::SuccessRule;
use crate::perception::CountStyle;
use crate::policy::planner::PlannerConfig;
use crate::skills::gui::RawGui;
use crate::skills::{Camera, KeyMap};
use crate::toml_lines::{self, DataFileError};

/// Every section a game profile may have, each typed by its user.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sections {
    /// Screens, regions and slots (checked by [`crate::skills::gui::GuiGeometry`]).
    pub gui: Spanned<RawGui>,
    /// Game actions -> keys.
    pub keys: KeyMap,
    /// Field of view and mouse sensitivity.
    pub camera: Camera,
    /// Config keys the game needs (`vistawise --game GAME` lays them over the config file).
    #[serde(default)]
    pub settings: Option<toml::Table>,
    /// How the game draws stack counts.
    #[serde(default)]
    pub counts: Option<CountStyle>,
    /// How a sighting of the target is confirmed.
    #[serde(default)]
    pub success: Option<SuccessRule>,
    /// How the planner gets each item.
    #[serde(default)]
    pub planner: Option<PlannerConfig>,
    /// What the auto-labeller labels and where.
    #[serde(default)]
    pub autolabel: Option<AutoLabelConfig>,
}

/// A profile file's text (merged with its bases) and its sections.
#[derive(Debug, Clone)]
pub struct ProfileFile {
    pub path: PathBuf,
    /// What the sections were read from: later checks point at its lines.
    pub text: String,
    pub sections: Sections,
}

impl ProfileFile {
    /// Reads and deserialises the profile at `path` (bases merged in, see
    /// [`toml_lines::read_profile`]).
    pub fn read(path: &Path) -> Result<Self, DataFileError> {
        let text = toml_lines::read_profile(path)?;
        let sections: Sections =
            toml_lines::from_str(&text).map_err(|(line, m)| DataFileError::at(path, line, m))?;
        Ok(ProfileFile {
            path: path.to_path_buf(),
            text,
            sections,
        })
    }

    /// An error at `line` of this file.
    pub fn error(&self, line: usize, message: impl Into<String>) -> DataFileError {
        DataFileError::at(&self.path, line, message)
    }

    /// The line of a table header (`[planner]`, `[planner.screens.inventory]`), else 1.
    pub fn header_line(&self, header: &str) -> usize {
        toml_lines::header_line(&self.text, header).unwrap_or(1)
    }

    /// The line of `key = ...` inside the table under `header` (else the header's line).
    pub fn key_line(&self, header: &str, key: &str) -> usize {
        let start = self.header_line(header);
        self.text
            .lines()
            .enumerate()
            .skip(start)
            .take_while(|(_, l)| !l.trim_start().starts_with('['))
            .find(|(_, l)| {
                l.trim_start()
                    .strip_prefix(key)
                    .is_some_and(|rest| rest.trim_start().starts_with('='))
            })
            .map_or(start, |(i, _)| i + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn a_layered_profile_reads_every_section_of_both_files_once() {
        let file = ProfileFile::read(&repo().join("config/games/minecraft-web.toml"))
            .unwrap_or_else(|e| panic!("{e}"));
        let s = &file.sections;
        // [keys] and [success] come from the base, minecraft.toml; [autolabel] and [settings]
        // from the client's own file; [camera] is the client's over the base's.
        assert!(s.keys.0.contains_key("inventory"), "{:?}", s.keys);
        assert!(s.success.is_some());
        assert!(s.autolabel.is_some());
        assert_eq!(
            s.settings
                .as_ref()
                .and_then(|t| t.get("game.window_title"))
                .and_then(|v| v.as_str()),
            Some("Prismarine Web Client")
        );
        assert!((s.camera.fov_deg - 75.0).abs() < 1e-9);
        assert!(s.planner.as_ref().is_some_and(|p| !p.gather.is_empty()));
    }

    #[test]
    fn a_misspelt_section_is_refused_at_its_line() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("minetest.toml");
        let mut text =
            std::fs::read_to_string(repo().join("config/games/minetest.toml")).expect("read");
        let line = text.lines().count() + 2;
        text.push_str("\n[planer]\nexplore = []\n");
        std::fs::write(&path, text).expect("write");
        let err = ProfileFile::read(&path)
            .expect_err("unknown section")
            .to_string();
        assert!(err.contains("planer"), "{err}");
        assert!(err.contains(&format!("minetest.toml:{line}:")), "{err}");
    }

    #[test]
    fn key_lines_are_found_inside_their_table_only() {
        let file = ProfileFile {
            path: PathBuf::from("g.toml"),
            text: "[a]\nx = 1\n[b]\ny = 2\nx = 3\n".into(),
            sections: ProfileFile::read(&repo().join("config/games/minetest.toml"))
                .expect("shipped")
                .sections,
        };
        assert_eq!(file.header_line("[b]"), 3);
        assert_eq!(file.key_line("[b]", "x"), 5);
        assert_eq!(file.key_line("[a]", "x"), 2);
        assert_eq!(
            file.key_line("[a]", "y"),
            1,
            "not in [a]: the header's line"
        );
        assert_eq!(file.header_line("[c]"), 1);
    }
}
