//! A game profile file, `config/games/<game>.toml` with its bases merged in, read once. Each
//! section is deserialised by the subsystem that uses it, into its own type
//! ([`ProfileFile::section`]), from the whole text so that its errors keep their lines. The file
//! itself only knows the sections' names: a misspelt section is an error at its line instead of
//! a section nobody reads.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::toml_lines::{self, DataFileError};

/// Every section a game profile may have.
pub const SECTIONS: &[&str] = &[
    "gui",
    "keys",
    "camera",
    "settings",
    "counts",
    "position",
    "success",
    "planner",
    "autolabel",
];

/// A profile file's text (merged with its bases).
#[derive(Debug, Clone)]
pub struct ProfileFile {
    pub path: PathBuf,
    /// What the sections are read from: later checks point at its lines.
    pub text: String,
}

impl ProfileFile {
    /// Reads the profile at `path` (bases merged in, see [`toml_lines::read_profile`]) and
    /// checks that it is TOML whose sections are all known ([`SECTIONS`]).
    pub fn read(path: &Path) -> Result<Self, DataFileError> {
        let text = toml_lines::read_profile(path)?;
        let keys = toml_lines::top_level_keys(&text)
            .map_err(|(line, m)| DataFileError::at(path, line, m))?;
        if let Some((key, line)) = keys.iter().find(|(k, _)| !SECTIONS.contains(&k.as_str())) {
            return Err(DataFileError::at(
                path,
                *line,
                format!(
                    "unknown section `{key}`, expected one of {}",
                    SECTIONS
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(ProfileFile {
            path: path.to_path_buf(),
            text,
        })
    }

    /// The section `name` as its user's type, or `None` when the profile has none.
    pub fn section<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, DataFileError> {
        toml_lines::section_from_str(&self.text, name)
            .map_err(|(line, m)| self.error(line, format!("[{name}]: {m}")))
    }

    /// The section `name`, which every profile must have.
    pub fn required<T: DeserializeOwned>(&self, name: &str) -> Result<T, DataFileError> {
        self.section(name)?
            .ok_or_else(|| self.error(1, format!("missing section [{name}]")))
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
    fn a_layered_profile_reads_sections_of_both_files() {
        let file = ProfileFile::read(&repo().join("config/games/minecraft-web.toml"))
            .unwrap_or_else(|e| panic!("{e}"));
        // [keys] and [success] come from the base, minecraft.toml; [autolabel] and [settings]
        // from the client's own file; [camera] is the client's over the base's.
        let keys: toml::Table = file.required("keys").unwrap_or_else(|e| panic!("{e}"));
        assert!(keys.contains_key("inventory"), "{keys:?}");
        assert!(
            file.section::<toml::Table>("success")
                .expect("ok")
                .is_some()
        );
        assert!(
            file.section::<toml::Table>("autolabel")
                .expect("ok")
                .is_some()
        );
        let settings: toml::Table = file.required("settings").expect("settings");
        assert_eq!(
            settings.get("game.window_title").and_then(|v| v.as_str()),
            Some("Prismarine Web Client")
        );
        let camera: toml::Table = file.required("camera").expect("camera");
        assert_eq!(camera.get("fov_deg").and_then(|v| v.as_float()), Some(75.0));
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
    fn a_wrong_value_in_a_section_is_reported_at_its_line() {
        let file = ProfileFile {
            path: PathBuf::from("g.toml"),
            text: "[a]\nx = 1\n\n[b]\ny = \"two\"\n".into(),
        };
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct B {
            y: u32,
        }
        let err = file
            .section::<B>("b")
            .expect_err("a string is not a number");
        assert!(err.to_string().starts_with("g.toml:5: [b]:"), "{err}");
        assert!(file.section::<B>("c").expect("absent is fine").is_none());
    }

    #[test]
    fn key_lines_are_found_inside_their_table_only() {
        let file = ProfileFile {
            path: PathBuf::from("g.toml"),
            text: "[a]\nx = 1\n[b]\ny = 2\nx = 3\n".into(),
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
