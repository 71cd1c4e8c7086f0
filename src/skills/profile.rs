//! A game profile's controls and skills, all data: `config/games/<game>.toml` ([gui], [keys],
//! [camera]) and `skills/<game>/*.toml`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::expand::{Camera, ExpandContext, SlotGeometry};
use super::gui::{GuiGeometry, GuiLayout};
use super::keys::{Key, KeyMap};
use super::library::{LibraryError, SkillLibrary, SlotNames};
use crate::agent::success::SuccessRule;
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
    /// How a sighting of the target is confirmed.
    #[serde(default)]
    success: Option<SuccessRule>,
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
    /// How a sighting of the task's target on the HUD is confirmed (`[success]`).
    pub success: Option<SuccessRule>,
    pub controls_file: PathBuf,
}

impl GameProfile {
    /// What skill expansion needs from this profile for a `w` x `h` window laid out as
    /// `layout`.
    pub fn expand_context<'a>(
        &'a self,
        layout: &'a dyn SlotGeometry,
        w: u32,
        h: u32,
    ) -> ExpandContext<'a> {
        ExpandContext {
            window_w: w,
            window_h: h,
            keys: &self.keys,
            slots: layout,
            camera: self.camera,
        }
    }

    /// Loads `config/games/<name>.toml` and `skills/<name>/` under `root`. A profile laid over
    /// a base (`base = "minecraft"`) gets the base's skills too: `skills/<base>/` first, then its
    /// own folder, if it has one, whose skills replace the base's of the same name.
    pub fn load(root: &Path, name: &str) -> Result<Self, ProfileError> {
        let games = root.join("config/games");
        let controls_file = games.join(format!("{name}.toml"));
        let lineage = toml_lines::profile_lineage(&games, name);
        let mut dirs: Vec<PathBuf> = lineage
            .iter()
            .rev()
            .map(|n| root.join("skills").join(n))
            .filter(|d| d.is_dir())
            .collect();
        if dirs.is_empty() {
            dirs.push(root.join("skills").join(name));
        }
        Self::load_layers(&controls_file, &dirs, name)
    }

    pub fn load_from(
        controls_file: &Path,
        skills_dir: &Path,
        name: &str,
    ) -> Result<Self, ProfileError> {
        Self::load_layers(controls_file, &[skills_dir.to_path_buf()], name)
    }

    fn load_layers(
        controls_file: &Path,
        skills_dirs: &[PathBuf],
        name: &str,
    ) -> Result<Self, ProfileError> {
        let text = toml_lines::read_profile(controls_file)?;
        let gui = GuiGeometry::parse(&text, controls_file)?;
        let raw: RawControls = toml_lines::from_str(&text)
            .map_err(|(line, m)| DataFileError::at(controls_file, line, m))?;
        check_camera(&raw.camera)
            .map_err(|m| DataFileError::at(controls_file, camera_line(&text), m))?;
        // A bad binding is reported where it is written, not at the first skill that uses it.
        for (action, bound) in &raw.keys.0 {
            if Key::parse(bound).is_none() {
                return Err(DataFileError::at(
                    controls_file,
                    binding_line(&text, action),
                    format!("[keys] {action} = \"{bound}\": unknown key name"),
                )
                .into());
            }
        }
        if let Some(counts) = &raw.counts {
            let line = section_line(&text, "counts");
            counts
                .check()
                .map_err(|e| DataFileError::at(controls_file, line, format!("[counts]: {e}")))?;
        }
        let mut skills = SkillLibrary::load(&skills_dirs[0], &raw.keys, &gui)?;
        for dir in &skills_dirs[1..] {
            skills.overlay(SkillLibrary::load(dir, &raw.keys, &gui)?);
        }
        if let Some(rule) = &raw.success {
            check_success(rule, &skills, &gui)
                .map_err(|m| DataFileError::at(controls_file, section_line(&text, "success"), m))?;
        }
        Ok(GameProfile {
            name: name.to_string(),
            gui,
            keys: raw.keys,
            camera: raw.camera,
            skills,
            counts: raw.counts,
            success: raw.success,
            controls_file: controls_file.to_path_buf(),
        })
    }
}

/// The line of `action = ...` in `[keys]` (else the header's).
fn binding_line(text: &str, action: &str) -> usize {
    let start = toml_lines::header_line(text, "[keys]").unwrap_or(1);
    text.lines()
        .enumerate()
        .skip(start)
        .find(|(_, l)| {
            l.trim_start()
                .strip_prefix(action)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(start, |(i, _)| i + 1)
}

/// The line of a `[section]` header (comments elsewhere may mention `[section]` too).
fn section_line(text: &str, section: &str) -> usize {
    text.find(&format!("\n[{section}]"))
        .map_or(1, |o| toml_lines::line_at(text, o + 1))
}

/// `success.<field>` names a skill of the library that takes no parameters.
fn parameterless_skill(field: &str, name: &str, skills: &SkillLibrary) -> Result<(), String> {
    let skill = skills.get(name).ok_or_else(|| {
        format!(
            "success.{field}: no skill \"{name}\" (skills: {})",
            skills.names().join(", ")
        )
    })?;
    if !skill.params.is_empty() {
        return Err(format!(
            "success.{field}: \"{name}\" takes parameters; it must take none"
        ));
    }
    Ok(())
}

/// `[success]` names a skill that takes nothing, a screen that exists, and needs the bag's
/// regions to tell the HUD's slots from an open screen's.
fn check_success(
    rule: &SuccessRule,
    skills: &SkillLibrary,
    gui: &GuiGeometry,
) -> Result<(), String> {
    rule.check()?;
    parameterless_skill("confirm_skill", &rule.confirm_skill, skills)?;
    if let Some(close) = &rule.close_skill {
        parameterless_skill("close_skill", close, skills)?;
    }
    if !gui.has_screen(&rule.hud_screen) {
        return Err(format!(
            "success.hud_screen: no screen \"{}\" in [gui.screens]",
            rule.hud_screen
        ));
    }
    if !gui.has_bag_regions() {
        return Err("[success] needs [gui] bag_regions (which slots the player owns)".into());
    }
    Ok(())
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
