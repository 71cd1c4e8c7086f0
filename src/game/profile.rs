//! A game profile: its controls, skills and every other section of `config/games/<game>.toml`,
//! loaded and checked once. The controls and skills are what skill expansion needs; the
//! planner's rules and the labeller's configuration are handed out checked against the graph and
//! label set they are used with.

use std::path::{Path, PathBuf};

use super::success_rule::SuccessRule;
use crate::knowledge::KnowledgeGraph;
use crate::perception::{CountStyle, PositionStyle};
use crate::policy::PlannerConfig;
use crate::profile_file::ProfileFile;
use crate::skills::GuiGeometry;
use crate::skills::expand::{Camera, ExpandContext, SlotGeometry};
use crate::skills::{Key, KeyMap};
use crate::skills::{LibraryError, SkillLibrary};
use crate::toml_lines::{self, DataFileError};

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error(transparent)]
    File(#[from] DataFileError),
    #[error(transparent)]
    Library(#[from] LibraryError),
}

/// One game's profile: controls and skills for skill expansion, and the file itself, whose other
/// sections are read by their users ([planner] through [`GameProfile::planner`], [autolabel] by
/// the labeller, [settings] by the config).
#[derive(Debug, Clone)]
pub struct GameProfile {
    pub name: String,
    pub gui: GuiGeometry,
    pub keys: KeyMap,
    pub camera: Camera,
    pub skills: SkillLibrary,
    /// How the game draws stack counts (`[counts]`), when the profile says.
    pub counts: Option<CountStyle>,
    /// Where the game's debug screen prints the player's position (`[position]`), when the
    /// profile says.
    pub position: Option<PositionStyle>,
    /// How a sighting of the task's target on the HUD is confirmed (`[success]`).
    pub success: Option<SuccessRule>,
    /// The profile file, read once.
    pub file: ProfileFile,
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

    /// `config/games/<name>.toml` under `root`: the file every other part of this profile is
    /// read from.
    pub fn path(root: &Path, name: &str) -> PathBuf {
        root.join("config/games").join(format!("{name}.toml"))
    }

    /// Loads `config/games/<name>.toml` and `skills/<name>/` under `root`. A profile laid over
    /// a base (`base = "minecraft"`) gets the base's skills too: `skills/<base>/` first, then its
    /// own folder, if it has one, whose skills replace the base's of the same name.
    pub fn load(root: &Path, name: &str) -> Result<Self, ProfileError> {
        let lineage = toml_lines::profile_lineage(&root.join("config/games"), name);
        let mut dirs: Vec<PathBuf> = lineage
            .iter()
            .rev()
            .map(|n| root.join("skills").join(n))
            .filter(|d| d.is_dir())
            .collect();
        if dirs.is_empty() {
            dirs.push(root.join("skills").join(name));
        }
        Self::load_layers(&Self::path(root, name), &dirs, name)
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
        let file = ProfileFile::read(controls_file)?;
        let gui = GuiGeometry::from_profile(&file)?;
        let keys: KeyMap = file.required("keys")?;
        let camera: Camera = file.required("camera")?;
        let counts: Option<CountStyle> = file.section("counts")?;
        let position: Option<PositionStyle> = file.section("position")?;
        let success: Option<SuccessRule> = file.section("success")?;
        // Read now so that a wrong value in [planner] is an error of every command, as the
        // others are; it is checked against the graph where the planner is built.
        file.section::<PlannerConfig>("planner")?;
        check_camera(&camera).map_err(|m| file.error(file.header_line("[camera]"), m))?;
        // A bad binding is reported where it is written, not at the first skill that uses it.
        for (action, bound) in &keys.0 {
            if Key::parse(bound).is_none() {
                return Err(file
                    .error(
                        file.key_line("[keys]", action),
                        format!("[keys] {action} = \"{bound}\": unknown key name"),
                    )
                    .into());
            }
        }
        if let Some(counts) = &counts {
            counts
                .check()
                .map_err(|e| file.error(file.header_line("[counts]"), format!("[counts]: {e}")))?;
        }
        if let Some(position) = &position {
            position.check().map_err(|e| {
                file.error(file.header_line("[position]"), format!("[position]: {e}"))
            })?;
        }
        let mut skills = SkillLibrary::load(&skills_dirs[0], &keys, &gui)?;
        for dir in &skills_dirs[1..] {
            skills.overlay(SkillLibrary::load(dir, &keys, &gui)?);
        }
        if let Some(rule) = &success {
            check_success(rule, &skills, &gui)
                .map_err(|m| file.error(file.header_line("[success]"), m))?;
        }
        Ok(GameProfile {
            name: name.to_string(),
            gui,
            keys,
            camera,
            skills,
            counts,
            position,
            success,
            file,
        })
    }

    /// The profile's `[planner]` rules, checked against the graph they plan over and this
    /// profile's skills and screens.
    pub fn planner(&self, kg: &KnowledgeGraph) -> Result<PlannerConfig, DataFileError> {
        PlannerConfig::from_profile(&self.file, kg, &self.skills, &self.gui)
    }
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
    if let Some(death) = &rule.death_screen
        && !gui.has_marker(death)
    {
        return Err(format!(
            "success.death_screen: no screen \"{death}\" with a marker in [gui.screens]"
        ));
    }
    Ok(())
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
