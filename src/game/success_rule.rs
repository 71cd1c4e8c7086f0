//! `[success]` of a game profile: how a sighting of the task's target is confirmed before the
//! task counts as done (the agent's success check, `agent::success`, applies it).

use serde::Deserialize;

/// `[success]` in `config/games/<game>.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuccessRule {
    /// The skill (no parameters) that opens the screen whose bag is looked at.
    pub confirm_skill: String,
    /// The screen whose slots are drawn over the world (`hud`).
    #[serde(default = "default_hud_screen")]
    pub hud_screen: String,
    /// Steps after a refuted sighting during which HUD sightings of the target are left out.
    #[serde(default = "default_ignore_steps")]
    pub ignore_steps: u32,
    /// With a screen the policy opened, a HUD-only sighting counts: for a game that draws the
    /// HUD hotbar under its screens and a detector that misses items in the screen's small
    /// slots. Otherwise (the default) something read only there with a screen open is not in
    /// the bag: Minecraft hides the HUD behind screens, and Minetest's dimmed HUD under its
    /// inventory showed a coal lump on an empty slot that the inventory's own row did not.
    #[serde(default)]
    pub hud_under_screens: bool,
    /// The skill (no parameters) that closes the screen `confirm_skill` opened, run on the
    /// step after a look that refuted the sighting: the policy then finds the game as it left
    /// it. Left out, the screen stays open and the policy goes on from there (the Minecraft
    /// client's planner went on with the calls it had queued, and a furnace's take-back dig
    /// ran as clicks in the inventory).
    #[serde(default)]
    pub close_skill: Option<String>,
    /// The screen (by its `[gui]` marker) the game shows when the player died: a frame that
    /// shows it ends the session as a failure (`died`), recorded as the session's end. Left
    /// out: deaths are not told.
    #[serde(default)]
    pub death_screen: Option<String>,
}

fn default_hud_screen() -> String {
    "hud".into()
}

fn default_ignore_steps() -> u32 {
    3
}

impl SuccessRule {
    /// The checks that need nothing but the rule; the skill and the screen are checked where
    /// the skill library and the GUI geometry are known.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=100).contains(&self.ignore_steps) {
            return Err(format!(
                "success.ignore_steps {} must be 1-100",
                self.ignore_steps
            ));
        }
        Ok(())
    }
}
