//! Whether the task's target is obtained, read off the screen before each decision.
//!
//! The HUD hotbar is drawn over the world, and an empty slot there shows what is behind it
//! (Minetest's slots are translucent): a dark stone wall behind one was read as a coal lump and
//! ended tasks with nothing obtained. With `[success] confirm_skill` in the game profile, a
//! sighting on the HUD alone is not taken as success: the agent runs that skill (opens the
//! inventory), and only the target in an open screen's bag ends the task. A sighting the open
//! inventory refutes is left out of the perception for `ignore_steps` steps, so that neither the
//! policy nor the next check acts on it.

use super::pipeline::{GraphView, Parts, layout, validate_call};
use crate::game::SuccessRule;
use crate::perception::Perception;
use crate::policy::{Decision, Validation};
use crate::skills::SkillCall;
use crate::skills::{GuiLayout, Slot};

/// What one frame says about the target.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// In an open screen's bag (without a rule: in any bag slot).
    Obtained,
    /// On the HUD hotbar only: run `skill` (the rule's) and look again.
    Confirm { why: String, skill: String },
    /// The look refuted the sighting: run `skill` (the rule's `close_skill`) to close the
    /// screen the look opened.
    Refuted { why: String, skill: String },
    /// Not obtained; `note` says why a sighting was set aside, if one was.
    NotYet { note: Option<String> },
    /// The game shows its death screen (`[success] death_screen`): the session ends, failed.
    Died,
}

impl Verdict {
    /// The step's decision when the verdict makes one (done, or the look in the inventory);
    /// `None`: the policy decides.
    pub fn decision(&self, parts: &Parts, perception: &Perception) -> Option<Decision> {
        match self {
            Verdict::Obtained => Some(Decision::done()),
            Verdict::Confirm { why, skill } | Verdict::Refuted { why, skill } => {
                Some(validate_call(
                    parts,
                    SkillCall {
                        skill: skill.clone(),
                        args: Vec::new(),
                    },
                    why.clone(),
                    perception,
                ))
            }
            Verdict::NotYet { .. } => None,
            Verdict::Died => Some(Decision::no_action(Validation::Died)),
        }
    }

    /// What the step record keeps (`success_note`).
    pub fn note(&self) -> Option<String> {
        match self {
            Verdict::NotYet { note } => note.clone(),
            Verdict::Refuted { why, .. } => Some(why.clone()),
            _ => None,
        }
    }
}

/// The check's memory across steps: whether the last step asked for a look, and how long a
/// refuted sighting is still ignored.
#[derive(Debug, Default)]
pub struct SuccessCheck {
    confirming: bool,
    ignore_left: u32,
    drop_now: bool,
    /// Where this frame's target icons share their slot with an icon of another class: the
    /// detector is unsure what lies there, so the sighting proves nothing and is left out.
    contested: Vec<(f32, f32)>,
    /// Looks the open inventory refuted so far: each one ignores the HUD twice as long as the
    /// one before (seed 219: a stick read as the wooden pickaxe at 0.31 sent the agent to its
    /// inventory every fourth step, 38 times, and the planner never got past `look_level`).
    refuted: u32,
}

/// A read of a slot that one-icon-a-slot set aside doubts the target read there when its
/// confidence is at least this share of the target's (measured on the client: a stone pickaxe
/// read 0.69 under an iron pickaxe read 0.75).
const RIVAL_SHARE: f32 = 0.75;

/// The most steps a refuted sighting is ignored for, however often it came back.
const MAX_IGNORE_STEPS: u32 = 48;

impl SuccessCheck {
    /// Judges this step's frame; call [`Self::drop_refuted`] after it.
    pub fn judge(&mut self, parts: &Parts, graph: &GraphView, perception: &Perception) -> Verdict {
        let layout = layout(parts, perception);
        // A slot read as the target and as something else (the client's used stone pickaxe in
        // the furnace screen read as an iron pickaxe, 0.80, beside itself, 0.76: the iron
        // pickaxe task ended at its first step with none) proves nothing.
        self.contested = contested_target_icons(parts, graph, perception, &layout);
        let all_icons = graph
            .visual
            .attributes
            .get(&parts.target)
            .map(|a| a.icons.as_slice())
            .unwrap_or_default();
        let icons: Vec<&crate::perception::InventoryIcon> = all_icons
            .iter()
            .filter(|i| !self.contested.contains(&(i.x, i.y)))
            .collect();
        let confirming = std::mem::take(&mut self.confirming);
        let ignoring = self.ignore_left > 0;
        self.ignore_left = self.ignore_left.saturating_sub(1);
        self.drop_now = ignoring;
        if let Some(death) = parts
            .profile
            .success
            .as_ref()
            .and_then(|r| r.death_screen.as_ref())
            && perception.marked_screens.contains(death)
        {
            return Verdict::Died;
        }
        let Some(rule) = &parts.profile.success else {
            return match icons.iter().any(|i| layout.in_bag(i.x, i.y)) {
                true => Verdict::Obtained,
                false => Verdict::NotYet { note: None },
            };
        };
        let screens: Vec<&str> = icons
            .iter()
            .filter_map(|i| layout.bag_screen(i.x, i.y))
            .collect();
        if screens.iter().any(|s| *s != rule.hud_screen) {
            return Verdict::Obtained;
        }
        let name = parts.kg.name(parts.target);
        // The look is over and the open bag does not show it: the sighting was a misreading,
        // whether or not the HUD under the screen still shows it (the Minecraft client's stone
        // pickaxe read as an iron one over the world and as itself under the inventory; taken
        // as nothing seen, the look came back every third step for 60 steps).
        if confirming {
            if hud_settles_contest(
                parts,
                perception,
                &layout,
                &self.contested,
                &rule.hud_screen,
            ) {
                return Verdict::Obtained;
            }
            return self.refuted(rule, name);
        }
        if screens.is_empty() {
            return Verdict::NotYet { note: None };
        }
        if ignoring {
            return Verdict::NotYet {
                note: Some(format!(
                    "{name} on the {} left out: the open inventory did not show it",
                    rule.hud_screen
                )),
            };
        }
        // A screen the policy opened (the confirming look is judged above): the skill would
        // toggle it closed, not open it.
        if screen_open(&layout, graph, &rule.hud_screen) {
            // Not counted means not seen: the planner would take it for the item otherwise.
            self.drop_now = !rule.hud_under_screens;
            return match rule.hud_under_screens {
                true => Verdict::Obtained,
                false => Verdict::NotYet {
                    note: Some(format!(
                        "{name} read on the {} only, with a screen open whose bag does not \
                         show it: not counted",
                        rule.hud_screen
                    )),
                },
            };
        }
        self.confirming = true;
        Verdict::Confirm {
            why: format!(
                "{name} shows on the {} only, which is drawn over the world: {} to see the bag",
                rule.hud_screen, rule.confirm_skill
            ),
            skill: rule.confirm_skill.clone(),
        }
    }

    /// A look in the bag that did not show the target: its HUD sightings are left out for a
    /// while, twice as long as after the refutation before, and the rule's `close_skill`
    /// closes the screen the look opened.
    fn refuted(&mut self, rule: &SuccessRule, name: &str) -> Verdict {
        self.ignore_left = rule
            .ignore_steps
            .saturating_mul(1 << self.refuted.min(8))
            .min(MAX_IGNORE_STEPS.max(rule.ignore_steps));
        self.refuted += 1;
        self.drop_now = true;
        let note = format!(
            "{name} seen on the {} but not in the open inventory's bag: a misreading, \
             left out for {} steps",
            rule.hud_screen, self.ignore_left
        );
        match &rule.close_skill {
            Some(skill) => Verdict::Refuted {
                why: format!("{note}; {skill} closes the screen the look opened"),
                skill: skill.clone(),
            },
            None => Verdict::NotYet { note: Some(note) },
        }
    }

    /// Leaves the target's HUD sightings out of `perception` while [`Self::judge`] found them
    /// refuted or not counted; returns how many were left out (the caller rebuilds the graph
    /// when any were).
    pub fn drop_refuted(&self, parts: &Parts, perception: &mut Perception) -> usize {
        let before = perception.icons.len();
        let is_target = |i: &crate::perception::InventoryIcon| {
            parts.kg.detector_classes.get(&i.class) == Some(&parts.target)
        };
        perception
            .icons
            .retain(|i| !(is_target(i) && self.contested.contains(&(i.x, i.y))));
        if let Some(rule) = parts.profile.success.as_ref().filter(|_| self.drop_now) {
            let layout = layout(parts, perception);
            perception.icons.retain(|i| {
                !is_target(i) || layout.bag_screen(i.x, i.y) != Some(rule.hud_screen.as_str())
            });
        }
        before - perception.icons.len()
    }
}

/// The positions of the target's icons that sit on a slot with an icon of another class, kept or
/// set aside as the less confident read of the slot (`Perception::set_aside`: a crafted stone
/// pickaxe read as an iron pickaxe, 0.75, over itself, 0.69, ended an iron pickaxe run from
/// nothing at its stone pickaxe).
fn contested_target_icons(
    parts: &Parts,
    graph: &GraphView,
    perception: &Perception,
    layout: &GuiLayout,
) -> Vec<(f32, f32)> {
    let Some(target) = graph.visual.attributes.get(&parts.target) else {
        return Vec::new();
    };
    let others: Vec<(f32, f32)> = graph
        .visual
        .attributes
        .iter()
        .filter(|(node, _)| **node != parts.target)
        .flat_map(|(_, a)| a.icons.iter().map(|i| (i.x, i.y)))
        .collect();
    // A read set aside counts when it came close to the target's: the detector's faint second
    // boxes on a slot (Minetest's crafted planks beside a 0.3 read of something else) doubt
    // nothing, and left out so the planks task never saw its planks.
    let close_rival = |t: &crate::perception::InventoryIcon| {
        perception.set_aside.iter().any(|i| {
            parts.kg.detector_classes.get(&i.class) != Some(&parts.target)
                && i.conf >= RIVAL_SHARE * t.conf
                && layout.on_slot(t.x, t.y, (i.x, i.y))
        })
    };
    target
        .icons
        .iter()
        .filter(|i| others.iter().any(|&o| layout.on_slot(i.x, i.y, o)) || close_rival(i))
        .map(|i| (i.x, i.y))
        .collect()
}

/// Whether the HUD settles a look's contested read of the target: the open screen reads a
/// slot of its hotbar row as the target and as another item, and the HUD under the screen reads
/// the same hotbar key as the target only, more surely than any read of that screen slot. A
/// contest alone proves nothing either way (the client's just-crafted stone pickaxe read 0.73
/// as itself and 0.72 as an iron pickaxe in the inventory's hotbar row, 0.96 as itself on the
/// HUD below: taken as refuted, the stone pickaxe task ran 11 minutes past its pickaxe and
/// crafted another).
fn hud_settles_contest(
    parts: &Parts,
    perception: &Perception,
    layout: &GuiLayout,
    contested: &[(f32, f32)],
    hud_screen: &str,
) -> bool {
    let slots = layout.slots(None);
    let is_target = |i: &crate::perception::InventoryIcon| {
        parts.kg.detector_classes.get(&i.class) == Some(&parts.target)
    };
    // Every read of a slot, kept or set aside by one-icon-a-slot.
    let reads_on = |centre: (f32, f32)| {
        perception
            .icons
            .iter()
            .chain(&perception.set_aside)
            .filter(move |i| layout.on_slot(i.x, i.y, centre))
    };
    contested.iter().any(|&(x, y)| {
        let Some(slot) = layout
            .slot_under(&slots, x, y)
            .filter(|s| s.screen != hud_screen)
        else {
            return false;
        };
        let Some(hud_centre) = layout.hotbar_twin(slot, hud_screen).map(|s| s.centre) else {
            return false;
        };
        let screen_surest = reads_on(slot.centre).map(|i| i.conf).fold(0.0, f32::max);
        let mut hud = reads_on(hud_centre).peekable();
        hud.peek().is_some() && hud.all(|i| is_target(i) && i.conf > screen_surest)
    })
}

/// Whether the frame shows an open screen: an icon on a slot of a screen other than the HUD.
fn screen_open(layout: &GuiLayout, graph: &GraphView, hud_screen: &str) -> bool {
    let slots: Vec<Slot> = layout
        .slots(None)
        .into_iter()
        .filter(|s| s.screen != hud_screen)
        .collect();
    graph
        .visual
        .attributes
        .values()
        .flat_map(|a| &a.icons)
        .any(|i| slots.iter().any(|s| layout.on_slot(i.x, i.y, s.centre)))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::agent::pipeline::graph_view;
    use crate::config::Config;
    use crate::knowledge::KnowledgeGraph;
    use crate::perception::InventoryIcon;
    use crate::tasks::TaskList;

    const W: u32 = 854;
    const H: u32 = 480;

    /// The Minetest coal task, whose failures (a HUD slot over a dark wall read as a coal lump)
    /// the rule is for.
    fn coal_parts() -> Parts {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut config = Config::builtin();
        config.game.profile = "minetest".into();
        config.llm.prompt_template = repo.join(&config.llm.prompt_template);
        let kg = KnowledgeGraph::load(&repo.join("kg/minetest.toml")).expect("kg");
        let tasks = TaskList::load(&repo.join("config/tasks.toml")).expect("tasks");
        Parts::assemble(config, kg, &tasks, repo, "coal").expect("parts")
    }

    /// A frame whose only detections are coal lump icons at these slots (`stick@slot`: a
    /// stick there).
    fn frame_with_coal_at(parts: &Parts, slots: &[&str]) -> Perception {
        let layout = parts.profile.gui.layout(W, H, parts.config.game.gui_scale);
        Perception {
            frame_w: W,
            frame_h: H,
            icons: slots
                .iter()
                .map(|s| {
                    let (item, slot) = s.split_once('@').unwrap_or(("coal_lump", s));
                    let (x, y) = layout.slot_center(slot).expect("slot");
                    InventoryIcon {
                        class: format!("{item}_icon"),
                        x,
                        y,
                        conf: 0.7,
                        count: None,
                    }
                })
                .collect(),
            ..Perception::default()
        }
    }

    /// Judges a frame and returns the verdict and what the policy would see of the target.
    fn step(check: &mut SuccessCheck, parts: &Parts, slots: &[&str]) -> (Verdict, usize) {
        let mut perception = frame_with_coal_at(parts, slots);
        let verdict = check.judge(parts, &graph_view(parts, &perception), &perception);
        check.drop_refuted(parts, &mut perception);
        (verdict, perception.icons.len())
    }

    /// A task of the Minecraft client's profile.
    fn web_parts(task: &str) -> Parts {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut config = Config::builtin();
        config.game.profile = "minecraft-web".into();
        config.llm.prompt_template = repo.join(&config.llm.prompt_template);
        let kg = KnowledgeGraph::load(&repo.join("kg/minecraft.toml")).expect("kg");
        let tasks = TaskList::load(&repo.join("config/tasks.toml")).expect("tasks");
        Parts::assemble(config, kg, &tasks, repo, task).expect("parts")
    }

    /// The client's death screen (`[success] death_screen`), told by its marker: the verdict
    /// ends the session, whatever the frame's icons say; with no death screen marked the
    /// check goes on as usual.
    #[test]
    fn the_death_screen_ends_the_session_as_died() {
        let parts = web_parts("coal");
        let mut check = SuccessCheck::default();
        let mut perception = Perception {
            frame_w: 1280,
            frame_h: 720,
            ..Perception::default()
        };
        let graph = graph_view(&parts, &perception);
        assert_eq!(
            check.judge(&parts, &graph, &perception),
            Verdict::NotYet { note: None }
        );
        perception.marked_screens = vec!["death".into()];
        let verdict = check.judge(&parts, &graph, &perception);
        assert_eq!(verdict, Verdict::Died);
        let decision = verdict.decision(&parts, &perception).expect("decided");
        assert!(decision.action.is_none());
        assert_eq!(decision.validation, Validation::Died);
    }

    /// The client's inventory right after a stone pickaxe's craft: its hotbar row reads the
    /// pickaxe's slot as the pickaxe and, nearly as surely, as an iron one; the HUD below reads
    /// the same key as the pickaxe. Where the HUD's read is the surer, the look finds the
    /// pickaxe; where it is the less sure, or reads another item, the look refutes the sighting.
    #[test]
    fn the_hud_settles_a_contested_read_of_the_target_in_the_screens_hotbar_row() {
        let parts = web_parts("stone_pickaxe");
        let layout = parts
            .profile
            .gui
            .layout(1280, 720, parts.config.game.gui_scale);
        let icon = |class: &str, slot: &str, conf: f32| {
            let (x, y) = layout.slot_center(slot).expect("slot");
            InventoryIcon {
                class: format!("{class}_icon"),
                x,
                y,
                conf,
                count: Some(1),
            }
        };
        let frame = |icons: Vec<InventoryIcon>, set_aside: Vec<InventoryIcon>| Perception {
            frame_w: 1280,
            frame_h: 720,
            icons,
            set_aside,
            ..Perception::default()
        };
        let cases = [
            ("stone_pickaxe", 0.96, true),
            ("stone_pickaxe", 0.70, false),
            ("iron_pickaxe", 0.96, false),
        ];
        for (hud_class, hud_conf, obtained) in cases {
            let mut check = SuccessCheck::default();
            let over_world = frame(vec![icon("stone_pickaxe", "hud.hotbar.6", 0.96)], vec![]);
            let verdict = check.judge(&parts, &graph_view(&parts, &over_world), &over_world);
            assert!(matches!(verdict, Verdict::Confirm { .. }), "{verdict:?}");
            let look = frame(
                vec![
                    icon(hud_class, "hud.hotbar.6", hud_conf),
                    icon("stone_pickaxe", "inventory.hotbar.6", 0.73),
                    icon("wood_pickaxe", "inventory.hotbar.7", 0.97),
                ],
                vec![icon("iron_pickaxe", "inventory.hotbar.6", 0.72)],
            );
            let verdict = check.judge(&parts, &graph_view(&parts, &look), &look);
            assert_eq!(
                verdict == Verdict::Obtained,
                obtained,
                "HUD {hud_class} {hud_conf}: {verdict:?}"
            );
            if !obtained {
                assert!(
                    verdict
                        .note()
                        .is_some_and(|n| n.contains("not in the open inventory")),
                    "{verdict:?}"
                );
            }
        }
    }

    #[test]
    fn a_hud_sighting_is_confirmed_in_the_open_inventory() {
        let parts = coal_parts();
        let mut check = SuccessCheck::default();
        let (verdict, seen) = step(&mut check, &parts, &["hud.hotbar.3"]);
        assert!(
            matches!(&verdict, Verdict::Confirm { skill, .. } if skill == "open_inventory"),
            "{verdict:?}"
        );
        assert_eq!(seen, 1, "nothing is left out before the look");
        // The open inventory shows it in its bag (the HUD still shows under the screen).
        let (verdict, _) = step(&mut check, &parts, &["hud.hotbar.3", "inventory.main.0"]);
        assert_eq!(verdict, Verdict::Obtained);
    }

    #[test]
    fn a_slot_read_as_the_target_and_as_another_item_proves_nothing() {
        let parts = coal_parts();
        let mut check = SuccessCheck::default();
        // The open inventory's slot reads as a coal lump and as a stick: not obtained, and the
        // policy does not see the lump there (the stick stays).
        let (verdict, seen) = step(
            &mut check,
            &parts,
            &["inventory.main.4", "stick@inventory.main.4"],
        );
        assert!(matches!(verdict, Verdict::NotYet { .. }), "{verdict:?}");
        assert_eq!(seen, 1);
        // A lump on a slot of its own still counts.
        let (verdict, _) = step(
            &mut check,
            &parts,
            &[
                "inventory.main.4",
                "stick@inventory.main.4",
                "inventory.main.6",
            ],
        );
        assert_eq!(verdict, Verdict::Obtained);
    }

    /// One icon a slot keeps the most confident read; the one it beat still says the slot is
    /// in doubt.
    #[test]
    fn a_target_that_beat_another_read_of_its_slot_proves_nothing() {
        let parts = coal_parts();
        let mut check = SuccessCheck::default();
        let mut perception = frame_with_coal_at(&parts, &["inventory.main.4"]);
        let mut stick = perception.icons[0].clone();
        stick.class = "stick_icon".into();
        stick.conf = 0.6;
        // A faint second read (under 3/4 of the target's 0.7) doubts nothing.
        let mut faint = stick.clone();
        faint.conf = 0.3;
        perception.set_aside = vec![faint];
        let verdict = check.judge(&parts, &graph_view(&parts, &perception), &perception);
        assert_eq!(verdict, Verdict::Obtained);
        let mut check = SuccessCheck::default();
        perception.set_aside = vec![stick];
        let verdict = check.judge(&parts, &graph_view(&parts, &perception), &perception);
        assert!(matches!(verdict, Verdict::NotYet { .. }), "{verdict:?}");
        assert_eq!(check.drop_refuted(&parts, &mut perception), 1);
        // Beaten by nothing: obtained.
        let mut check = SuccessCheck::default();
        let alone = frame_with_coal_at(&parts, &["inventory.main.4"]);
        let verdict = check.judge(&parts, &graph_view(&parts, &alone), &alone);
        assert_eq!(verdict, Verdict::Obtained);
    }

    #[test]
    fn a_sighting_the_open_inventory_refutes_is_left_out_then_checked_again() {
        let parts = coal_parts();
        let mut check = SuccessCheck::default();
        assert!(matches!(
            step(&mut check, &parts, &["hud.hotbar.5"]).0,
            Verdict::Confirm { .. }
        ));
        // The inventory is open; its bag has no coal, the HUD slot still reads as coal.
        let (verdict, seen) = step(&mut check, &parts, &["hud.hotbar.5"]);
        assert!(
            matches!(&verdict, Verdict::NotYet { note: Some(n) } if n.contains("not in the open inventory")),
            "{verdict:?}"
        );
        assert_eq!(seen, 0, "the policy does not see the refuted lump");
        for _ in 0..3 {
            let (verdict, seen) = step(&mut check, &parts, &["hud.hotbar.5"]);
            assert!(
                matches!(&verdict, Verdict::NotYet { note: Some(n) } if n.contains("left out")),
                "{verdict:?}"
            );
            assert_eq!(seen, 0);
        }
        // After `ignore_steps` the HUD is believed enough to look again.
        let (verdict, seen) = step(&mut check, &parts, &["hud.hotbar.5"]);
        assert!(matches!(verdict, Verdict::Confirm { .. }), "{verdict:?}");
        assert_eq!(seen, 1);
        // While ignoring, the target in an open screen's bag still ends the task.
        step(&mut check, &parts, &["hud.hotbar.5"]);
        assert_eq!(
            step(&mut check, &parts, &["inventory.hotbar.1"]).0,
            Verdict::Obtained
        );
    }

    /// The coal task with `close_skill = "close_screen"`, after a HUD sighting sent the check to
    /// look in the inventory.
    fn looking_with_close_skill() -> (Parts, SuccessCheck) {
        let mut parts = coal_parts();
        if let Some(rule) = parts.profile.success.as_mut() {
            rule.close_skill = Some("close_screen".into());
        }
        let mut check = SuccessCheck::default();
        assert!(matches!(
            step(&mut check, &parts, &["hud.hotbar.5"]).0,
            Verdict::Confirm { .. }
        ));
        (parts, check)
    }

    #[test]
    fn with_a_close_skill_the_refuting_look_closes_the_screen_it_opened() {
        let (parts, mut check) = looking_with_close_skill();
        let (verdict, seen) = step(&mut check, &parts, &["hud.hotbar.5"]);
        assert!(
            matches!(&verdict, Verdict::Refuted { skill, why } if skill == "close_screen" && why.contains("not in the open inventory")),
            "{verdict:?}"
        );
        assert_eq!(seen, 0, "the policy does not see the refuted lump");
        let decision = verdict
            .decision(&parts, &Perception::default())
            .expect("the close is the step's action");
        assert_eq!(
            decision.action.expect("a valid call").call.skill,
            "close_screen"
        );
        assert!(
            verdict
                .note()
                .is_some_and(|n| n.contains("left out for 3 steps"))
        );
        // Then the policy decides again, the sighting left out as without the close.
        let (verdict, seen) = step(&mut check, &parts, &["hud.hotbar.5"]);
        assert!(
            matches!(verdict, Verdict::NotYet { note: Some(_) }),
            "{verdict:?}"
        );
        assert_eq!(seen, 0);
    }

    #[test]
    fn a_look_that_shows_the_target_nowhere_refutes_the_sighting_too() {
        // The Minecraft client: a stone pickaxe read as the iron pickaxe over the world, and as
        // itself once the inventory was open: the look's frame shows the target nowhere.
        let (parts, mut check) = looking_with_close_skill();
        let (verdict, _) = step(&mut check, &parts, &["stick@inventory.main.0"]);
        assert!(
            matches!(&verdict, Verdict::Refuted { skill, .. } if skill == "close_screen"),
            "{verdict:?}"
        );
        // The misreading over the world is left out, and looked at again only after 3 steps.
        for _ in 0..3 {
            let (verdict, seen) = step(&mut check, &parts, &["hud.hotbar.5"]);
            assert!(matches!(verdict, Verdict::NotYet { .. }), "{verdict:?}");
            assert_eq!(seen, 0);
        }
        assert!(matches!(
            step(&mut check, &parts, &["hud.hotbar.5"]).0,
            Verdict::Confirm { .. }
        ));
    }

    #[test]
    fn a_sighting_refuted_again_and_again_is_ignored_twice_as_long_each_time() {
        let parts = coal_parts();
        let mut check = SuccessCheck::default();
        assert!(matches!(
            step(&mut check, &parts, &["hud.hotbar.5"]).0,
            Verdict::Confirm { .. }
        ));
        let mut gaps = Vec::new();
        for _ in 0..5 {
            // The open inventory refutes the look; then steps until the next look.
            let (verdict, _) = step(&mut check, &parts, &["hud.hotbar.5"]);
            assert!(
                matches!(&verdict, Verdict::NotYet { note: Some(n) } if n.contains("not in the open inventory")),
                "{verdict:?}"
            );
            let mut n = 0;
            while !matches!(
                step(&mut check, &parts, &["hud.hotbar.5"]).0,
                Verdict::Confirm { .. }
            ) {
                n += 1;
                assert!(n <= MAX_IGNORE_STEPS, "never looked again");
            }
            gaps.push(n);
        }
        assert_eq!(gaps, [3, 6, 12, 24, 48]);
    }

    #[test]
    fn with_a_screen_the_policy_opened_a_hud_only_sighting_counts_only_with_hud_under_screens() {
        let mut parts = coal_parts();
        // Sticks in the craft grid: the inventory is open (opened by the policy to craft).
        let open = ["stick@inventory.craft.0", "hud.hotbar.7"];
        let rule = parts.profile.success.as_mut().expect("rule");
        assert!(
            !rule.hud_under_screens,
            "the shipped Minetest profile trusts the screen"
        );
        rule.hud_under_screens = true;
        let mut check = SuccessCheck::default();
        assert_eq!(step(&mut check, &parts, &open).0, Verdict::Obtained);
        let rule = parts.profile.success.as_mut().expect("rule");
        rule.hud_under_screens = false;
        let mut check = SuccessCheck::default();
        let (verdict, seen) = step(&mut check, &parts, &open);
        assert!(
            matches!(&verdict, Verdict::NotYet { note: Some(n) } if n.contains("bag does not show it")),
            "{verdict:?}"
        );
        assert_eq!(seen, 1, "the lump is left out, the stick in the grid stays");
        // The look the check asked for is judged by the bag even where the HUD shows under it.
        parts
            .profile
            .success
            .as_mut()
            .expect("rule")
            .hud_under_screens = true;
        let mut check = SuccessCheck::default();
        assert!(matches!(
            step(&mut check, &parts, &["hud.hotbar.7"]).0,
            Verdict::Confirm { .. }
        ));
        let (verdict, _) = step(&mut check, &parts, &open);
        assert!(
            matches!(&verdict, Verdict::NotYet { note: Some(n) } if n.contains("not in the open inventory")),
            "{verdict:?}"
        );
    }

    #[test]
    fn work_slots_are_not_the_bag_and_without_a_rule_the_hud_is_believed() {
        let mut parts = coal_parts();
        let mut check = SuccessCheck::default();
        assert_eq!(
            step(&mut check, &parts, &["inventory.craft.4"]).0,
            Verdict::NotYet { note: None }
        );
        parts.profile.success = None;
        assert_eq!(
            step(&mut check, &parts, &["hud.hotbar.0"]).0,
            Verdict::Obtained
        );
    }
}
