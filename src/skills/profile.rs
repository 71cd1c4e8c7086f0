//! A game profile's controls and skills, all data: `config/games/<game>.toml` ([gui], [keys],
//! [camera]) and `skills/<game>/*.toml`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::expand::{Camera, SlotGeometry};
use super::gui::{GuiGeometry, GuiLayout};
use super::keys::KeyMap;
use super::library::{LibraryError, SkillLibrary, SlotNames};
use crate::perception::CountStyle;
use crate::toml_lines::{self, DataFileError};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawControls {
    /// Read by [`GuiGeometry`].
    #[allow(dead_code)]
    gui: toml::Value,
    keys: KeyMap,
    camera: Camera,
    /// Read by the planner policy.
    #[allow(dead_code)]
    #[serde(default)]
    planner: Option<toml::Value>,
    /// Read by the Minetest auto-labeller.
    #[allow(dead_code)]
    #[serde(default)]
    autolabel: Option<toml::Value>,
    /// Config keys applied by `--game`.
    #[allow(dead_code)]
    #[serde(default)]
    settings: Option<toml::Value>,
    /// How the game draws stack counts.
    #[serde(default)]
    counts: Option<CountStyle>,
}

impl SlotNames for GuiGeometry {
    fn has_slot(&self, location: &str) -> bool {
        self.check(location).is_ok()
    }
}

impl SlotNames for GuiLayout<'_> {
    fn has_slot(&self, location: &str) -> bool {
        self.slot_center(location).is_ok()
    }
}

impl SlotGeometry for GuiLayout<'_> {
    fn slot_center(&self, location: &str) -> Result<(f32, f32), String> {
        GuiLayout::slot_center(self, location).map_err(|e| e.to_string())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error(transparent)]
    File(#[from] DataFileError),
    #[error(transparent)]
    Library(#[from] LibraryError),
}

/// Everything the skills of one game need besides the window.
#[derive(Debug, Clone)]
pub struct GameProfile {
    pub name: String,
    pub gui: GuiGeometry,
    pub keys: KeyMap,
    pub camera: Camera,
    pub skills: SkillLibrary,
    /// How the game draws stack counts (`[counts]`), when the profile says.
    pub counts: Option<CountStyle>,
    pub controls_file: PathBuf,
}

impl GameProfile {
    /// Loads `config/games/<name>.toml` and `skills/<name>/` under `root`.
    pub fn load(root: &Path, name: &str) -> Result<Self, ProfileError> {
        let controls_file = root.join("config/games").join(format!("{name}.toml"));
        Self::load_from(&controls_file, &root.join("skills").join(name), name)
    }

    pub fn load_from(
        controls_file: &Path,
        skills_dir: &Path,
        name: &str,
    ) -> Result<Self, ProfileError> {
        let gui = GuiGeometry::load(controls_file)?;
        let text = toml_lines::read(controls_file)?;
        let raw: RawControls = toml_lines::from_str(&text)
            .map_err(|(line, m)| DataFileError::at(controls_file, line, m))?;
        check_camera(&raw.camera)
            .map_err(|m| DataFileError::at(controls_file, camera_line(&text), m))?;
        if let Some(counts) = &raw.counts {
            // The section's header line (comments elsewhere mention `[counts]` too).
            let line = text
                .find("\n[counts]")
                .map_or(1, |o| toml_lines::line_at(&text, o + 1));
            counts
                .check()
                .map_err(|e| DataFileError::at(controls_file, line, format!("[counts]: {e}")))?;
        }
        let skills = SkillLibrary::load(skills_dir, &raw.keys, &gui)?;
        Ok(GameProfile {
            name: name.to_string(),
            gui,
            keys: raw.keys,
            camera: raw.camera,
            skills,
            counts: raw.counts,
            controls_file: controls_file.to_path_buf(),
        })
    }
}

fn camera_line(text: &str) -> usize {
    text.find("[camera]")
        .map_or(1, |offset| toml_lines::line_at(text, offset))
}

fn check_camera(c: &Camera) -> Result<(), String> {
    if !(c.fov_deg > 1.0 && c.fov_deg < 179.0) {
        return Err(format!("camera.fov_deg {} must be in (1, 179)", c.fov_deg));
    }
    if !(c.degrees_per_count > 0.0 && c.degrees_per_count.is_finite()) {
        return Err("camera.degrees_per_count must be a positive number".into());
    }
    if !(1..=10_000).contains(&c.max_counts_per_move) {
        return Err("camera.max_counts_per_move must be 1-10000".into());
    }
    if c.move_interval_ms > 1_000 {
        return Err("camera.move_interval_ms must be 0-1000".into());
    }
    if c.pointer_settle_ms > 1_000 {
        return Err("camera.pointer_settle_ms must be 0-1000".into());
    }
    Ok(())
}
