//! The stages of one step (`step::Agent` runs them in order): detect -> split -> embed -> pool
//! -> prompt, and the validation of a policy's call.

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use image::RgbImage;
use petgraph::graph::NodeIndex;

use crate::config::Config;
use crate::game::GameProfile;
use crate::knowledge::{
    self, KnowledgeGraph, PathLimits, PooledText, ScreenText, SlotLabel, Strategy,
};
use crate::llm::answers_in_json;
use crate::longterm::{self, Query};
use crate::perception::mask_areas;
use crate::perception::{self, Detection, Detector, Perception, SplitContext, StageTimes};
use crate::policy::prompt::{self, StepInputs};
use crate::policy::{self, Decision, MemoryStack, PromptTemplate, TokenCounter};
use crate::policy::{Planner, View};
use crate::skills::gui_scale::GuiScaleTracker;
use crate::skills::{ExpandContext, SkillCall};
use crate::skills::{GuiLayout, Slot};
use crate::tasks::Task;
use crate::toml_lines::DataFileError;

/// The fixed parts of the agent.
pub struct Parts {
    pub config: Config,
    pub kg: KnowledgeGraph,
    pub task: Task,
    pub target: NodeIndex,
    pub profile: GameProfile,
    pub template: PromptTemplate,
    pub counter: TokenCounter,
}

/// Why the agent's parts could not be put together for a task.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Task(#[from] crate::tasks::TaskError),
    #[error("task {task} targets \"{target}\", not a node of {graph}")]
    TargetNotInGraph {
        task: String,
        target: String,
        graph: String,
    },
    #[error("cannot load game profile \"{name}\": {source}")]
    Profile {
        name: String,
        source: crate::game::ProfileError,
    },
    #[error(transparent)]
    Template(#[from] DataFileError),
    #[error("cannot load the token counter: {0}")]
    Tokenizer(String),
}

impl Parts {
    /// The parts for task `task_id` of the config's game profile (looked up through the
    /// profile's lineage: a task of the profile it extends serves too), with the graph and task
    /// list already loaded; profile files are resolved from `root`.
    pub fn assemble(
        config: Config,
        kg: KnowledgeGraph,
        tasks: &crate::tasks::TaskList,
        root: &std::path::Path,
        task_id: &str,
    ) -> Result<Parts, SetupError> {
        let lineage =
            crate::toml_lines::profile_lineage(&root.join("config/games"), &config.game.profile);
        let task = tasks.get_inherited(&lineage, task_id)?.clone();
        let target = kg
            .node(&task.target)
            .ok_or_else(|| SetupError::TargetNotInGraph {
                task: task.id.clone(),
                target: task.target.clone(),
                graph: kg.source.display().to_string(),
            })?;
        let profile = GameProfile::load(root, &config.game.profile).map_err(|source| {
            SetupError::Profile {
                name: config.game.profile.clone(),
                source,
            }
        })?;
        let template = PromptTemplate::load(&config.llm.prompt_template)?;
        let counter = TokenCounter::o200k().map_err(SetupError::Tokenizer)?;
        Ok(Parts {
            config,
            kg,
            task,
            target,
            profile,
            template,
            counter,
        })
    }

    /// The planner of this game profile (its rules in the profile's controls file).
    pub fn planner(&self) -> Result<Planner, DataFileError> {
        Ok(Planner::new(self.profile.planner(&self.kg)?))
    }
}

/// Detections of a frame and what they mean for the agent, with the stack counts of the icons
/// in the player's slots where the game profile says how counts are drawn; and the detector's
/// own stage times (letterbox, inference, decode).
pub fn perceive(
    detector: &mut Detector,
    frame: &RgbImage,
    parts: &Parts,
    gui_scale: &mut GuiScaleTracker,
) -> Result<(Vec<Detection>, Perception, StageTimes), perception::DetectorError> {
    // The GUI scale first: the detector's input may depend on it, and every slot does. Read
    // off the frame (the HUD's outline), else kept from an earlier frame of this size, else the
    // profile's rule.
    let reading = gui_scale.read(frame, &parts.profile.gui, parts.config.game.gui_scale);
    let (w, h) = (frame.width(), frame.height());
    let layout = parts.profile.gui.layout_at(w, h, reading.scale);
    let marked = layout.marked_screens(frame);
    // What an open screen hides from the detector (the client's item list beside it), as its
    // training frames had it hidden.
    let masks: Vec<[f64; 4]> = marked.iter().flat_map(|s| layout.masks(s)).collect();
    let masked = (!masks.is_empty()).then(|| {
        let mut copy = frame.clone();
        mask_areas(&mut copy, &masks);
        copy
    });
    let seen_frame = masked.as_ref().unwrap_or(frame);
    let (found, mut perception, times) =
        detect_and_split(detector, seen_frame, &parts.config, reading.scale)?;
    perception.gui_scale = Some(reading);
    perception.view_digest = perception::view_digest::digest(frame);
    perception.grid_angle = perception::grid_angle(frame);
    // Every slot of every screen, once a step: both passes below look icons up in it.
    let slots = layout.slots(None);
    one_icon_per_slot(&mut perception, &layout, &slots);
    if let Some(style) = &parts.profile.counts {
        read_counts(&mut perception, frame, style, &layout, &slots);
    }
    // The debug screen's line is there only while it is shown: any other frame reads as no
    // text (or as no such line) and leaves the position unknown.
    if let Some(style) = &parts.profile.position {
        let line = style.look(frame, layout.scale());
        perception.position = line.position;
        perception.debug_screen_shown = line.shown;
    }
    perception.marked_screens = marked;
    Ok((found, perception, times))
}

/// A slot holds one item: of the icons the detector found on one slot, only the most confident
/// stays (seed 219: a stick on the HUD also read as the task's wooden pickaxe at 0.31, and each
/// such sighting sent the agent to look in its inventory). Icons on no slot are kept.
///
/// Where the game keeps drawing its HUD under an open screen (`[gui] drawn_under_screens`), a
/// slot of the screen's hotbar row read as several items goes to the one the HUD reads at the
/// same key, when the HUD reads it more surely than anything on the screen's slot (world 3106:
/// the bag's stone pickaxe read 0.80 as an iron pickaxe over 0.75 as itself, 0.99 as itself on
/// the HUD below; the planner took the iron pickaxe for made and went for the diamond, then
/// saw none on the HUD alone and went back to make its sticks, 100 times over).
/// `slots`: every slot of every screen (`layout.slots(None)`).
pub fn one_icon_per_slot(perception: &mut Perception, layout: &GuiLayout, slots: &[Slot]) {
    let slot_of: Vec<Option<&Slot>> = perception
        .icons
        .iter()
        .map(|i| layout.slot_under(slots, i.x, i.y))
        .collect();
    let icons = std::mem::take(&mut perception.icons);
    // The icons on each slot, by the slot's location.
    let mut on: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, slot) in slot_of.iter().enumerate() {
        if let Some(slot) = slot {
            on.entry(slot.location.as_str()).or_default().push(k);
        }
    }
    let surest_on = |location: &str| {
        on.get(location)?
            .iter()
            .map(|&j| &icons[j])
            .max_by(|a, b| a.conf.total_cmp(&b.conf))
    };
    // Whether the HUD under an open screen settles icon k's slot for icon k's item.
    let settled: Vec<bool> = (0..icons.len())
        .map(|k| {
            let Some(slot) = slot_of[k] else {
                return false;
            };
            let under = layout.drawn_under(slot);
            let (Some(hud), Some(screen)) = (
                under.and_then(|u| surest_on(&u.location)),
                surest_on(&slot.location),
            ) else {
                return false;
            };
            hud.class == icons[k].class && hud.conf > screen.conf
        })
        .collect();
    let ahead = |j: usize, k: usize| {
        (settled[j], icons[j].conf) > (settled[k], icons[k].conf)
            || (settled[j] == settled[k] && icons[j].conf == icons[k].conf && j < k)
    };
    let keep: Vec<bool> = (0..icons.len())
        .map(|k| {
            let rivals = slot_of[k].and_then(|s| on.get(s.location.as_str()));
            !rivals.is_some_and(|r| r.iter().any(|&j| j != k && ahead(j, k)))
        })
        .collect();
    let (kept, set_aside): (Vec<_>, Vec<_>) = icons.into_iter().zip(keep).partition(|(_, k)| *k);
    perception.icons = kept.into_iter().map(|(icon, _)| icon).collect();
    perception.set_aside = set_aside.into_iter().map(|(icon, _)| icon).collect();
}

/// The count drawn in the slot under each icon (`None` where it cannot be read). An icon is
/// read at the centre of the slot it sits on: detected centres wander a few pixels, the digits'
/// place is fixed by the slot.
pub fn read_counts(
    perception: &mut Perception,
    frame: &RgbImage,
    style: &perception::CountStyle,
    layout: &GuiLayout,
    slots: &[Slot],
) {
    // A slot's screen says where its digits are drawn.
    for icon in &mut perception.icons {
        let slot = layout.slot_under(slots, icon.x, icon.y);
        icon.count = slot.and_then(|s| {
            let scale = layout.screen_scale(&s.screen);
            style.read(frame, &s.screen, s.centre, scale).ok()
        });
    }
}

fn detect_and_split(
    detector: &mut Detector,
    frame: &RgbImage,
    config: &Config,
    gui_scale: f32,
) -> Result<(Vec<Detection>, Perception, StageTimes), perception::DetectorError> {
    let cap = config
        .detector
        .input_cap(frame.width(), frame.height(), gui_scale);
    let (found, times) = detector.detect_within(frame, &config.detector.detect_options(), cap)?;
    let perception = perception::detections::split(
        &found,
        &detector.info().class_names,
        &SplitContext {
            frame_w: frame.width(),
            frame_h: frame.height(),
            k_w: config.detector.k_w,
            k_h: config.detector.k_h,
            gui_panel: None,
        },
    );
    Ok((found, perception, times))
}

/// The graph side of a step: visual attributes, pooled subgraph and its text.
pub struct GraphView {
    pub visual: knowledge::VisualState,
    pub pooled: knowledge::Subgraph,
    pub text: PooledText,
}

pub fn graph_view(parts: &Parts, perception: &Perception) -> GraphView {
    let visual = knowledge::embed(&parts.kg, perception);
    let limits = PathLimits {
        max_length: parts.config.pooling.max_path_length,
        max_paths: parts.config.pooling.max_paths,
    };
    let (pooled, _) = knowledge::pool(
        &parts.kg,
        parts.target,
        &parts.task.description,
        &visual,
        limits,
        Strategy::PspThenEmp,
    );
    let screen = screen_text(parts, perception);
    let text = knowledge::textualize(&parts.kg, &pooled, &visual, &screen);
    GraphView {
        visual,
        pooled,
        text,
    }
}

/// The prompt and its token count.
pub fn build_prompt(
    parts: &Parts,
    perception: &Perception,
    graph: &GraphView,
    memory: &MemoryStack,
) -> (String, usize) {
    build_prompt_with(parts, perception, graph, memory, "")
}

/// The prompt with the long-term memory's `{long_term_memory}` text, and its token count.
pub fn build_prompt_with(
    parts: &Parts,
    perception: &Perception,
    graph: &GraphView,
    memory: &MemoryStack,
    long_term: &str,
) -> (String, usize) {
    render_prompt(
        parts,
        &prompt_values(parts, perception, graph, memory, long_term),
    )
}

/// The prompt of `values` and its token count.
pub fn render_prompt(parts: &Parts, values: &prompt::PromptValues) -> (String, usize) {
    let text = parts.template.render(values);
    let tokens = parts.counter.count(&text);
    (text, tokens)
}

/// The template's values for one step.
pub fn prompt_values(
    parts: &Parts,
    perception: &Perception,
    graph: &GraphView,
    memory: &MemoryStack,
    long_term: &str,
) -> prompt::PromptValues {
    prompt::step_values(&StepInputs {
        task: &parts.task,
        kg: &parts.kg,
        pooled: &graph.pooled,
        text: &graph.text,
        visual: &graph.visual,
        perception,
        library: &parts.profile.skills,
        memory,
        recall_steps: parts.config.memory.recall_steps,
        long_term,
        json_answers: answers_in_json(parts.config.llm.output_mode, parts.config.llm.constrain),
    })
}

/// Where the status lines place things in a frame: the crosshair at its centre, and the slot
/// each icon sits on named as the prompt names it: "hotbar key N" on the HUD; the bag rows of
/// a screen by region and index ("main.3": every screen draws them at the same place); other
/// slots by location ("crafting_table.craft.4").
pub fn screen_text(parts: &Parts, perception: &Perception) -> ScreenText {
    let (w, h) = (perception.frame_w, perception.frame_h);
    let layout = layout(parts, perception);
    let all = layout.slots(None);
    let slots = perception
        .icons
        .iter()
        .filter_map(|i| Some((i, layout.slot_under(&all, i.x, i.y)?)))
        .map(|(i, s)| {
            let hud = s.screen == "hud";
            let region_index = s
                .location
                .strip_prefix(&format!("{}.", s.screen))
                .unwrap_or(&s.location)
                .to_string();
            let label = match region_index.strip_prefix("hotbar.") {
                Some(i) if hud => i
                    .parse::<u8>()
                    .map_or(s.location.clone(), |i| format!("hotbar key {}", i + 1)),
                _ if layout.bag_screen(s.centre.0, s.centre.1).is_some() => region_index,
                _ => s.location.clone(),
            };
            SlotLabel {
                icon: (i.x, i.y),
                label,
                hud,
            }
        })
        .collect();
    ScreenText {
        crosshair: Some((w as f32 / 2.0, h as f32 / 2.0)),
        slots,
    }
}

/// The GUI of a frame: its size and the GUI scale read for it (the profile's rule where none
/// was: a perception made before the scale was read).
pub fn layout<'a>(parts: &'a Parts, perception: &Perception) -> GuiLayout<'a> {
    let (w, h) = (perception.frame_w, perception.frame_h);
    let gui = &parts.profile.gui;
    let scale = perception.gui_scale.map_or_else(
        || gui.rule_scale(w, h, parts.config.game.gui_scale),
        |r| r.scale,
    );
    gui.layout_at(w, h, scale)
}

pub fn expand_context<'a>(
    parts: &'a Parts,
    layout: &'a GuiLayout<'a>,
    w: u32,
    h: u32,
) -> ExpandContext<'a> {
    parts.profile.expand_context(layout, w, h)
}

/// Validates a call the way every policy's calls are validated, on the window of `perception`.
pub fn validate_call(
    parts: &Parts,
    call: SkillCall,
    reasoning: String,
    perception: &Perception,
) -> Decision {
    let layout = layout(parts, perception);
    let ctx = expand_context(parts, &layout, perception.frame_w, perception.frame_h);
    policy::validate_call(&parts.profile.skills, &ctx, call, reasoning)
}

/// What the long-term memory is asked about this step: the task, the next missing item on the
/// way to the target, the inventory and what is in view. The inventory is what sits on bag
/// slots, as the planner reads it: an open screen's other icons (the Minecraft client's recipe
/// list) are no belongings, and counted as such every attempt made in that screen "got" them.
pub fn memory_query(parts: &Parts, perception: &Perception, graph: &GraphView) -> Query {
    let layout = layout(parts, perception);
    let view = View {
        kg: &parts.kg,
        visual: &graph.visual,
        perception,
        layout: &layout,
    };
    let mut inventory = BTreeSet::new();
    let mut environment = Vec::new();
    for (node, a) in &graph.visual.attributes {
        let name = parts.kg.name(*node).to_string();
        if view.has(*node) {
            inventory.insert(name.clone());
        }
        if !a.entities.is_empty() {
            environment.push((name, a.entities.iter().any(|e| e.in_reach)));
        }
    }
    environment.sort();
    let has = |n: NodeIndex| view.has(n);
    let subgoal =
        longterm::next_missing(&parts.kg, parts.target, &has).map(|n| parts.kg.name(n).to_string());
    let seen: Vec<String> = environment
        .iter()
        .map(|(n, r)| format!("{n}{}", if *r { " (in reach)" } else { "" }))
        .collect();
    Query {
        task: parts.task.description.clone(),
        subgoal,
        state: format!(
            "Inventory: {}. In view: {}.",
            longterm::list_or_none(&inventory),
            longterm::list_or_none(&seen)
        ),
        inventory,
        environment,
    }
}

/// Milliseconds since `t`.
pub fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::GuiScale;
    use crate::perception::InventoryIcon;

    fn icon(class: &str, (x, y): (f32, f32), conf: f32) -> InventoryIcon {
        InventoryIcon {
            class: class.into(),
            x,
            y,
            conf,
            count: None,
        }
    }

    #[test]
    fn of_the_icons_on_one_slot_the_most_confident_stays() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let profile = GameProfile::load(repo, "minecraft-web").expect("profile");
        let layout = profile.gui.layout(1280, 720, GuiScale::Auto);
        let hud6 = layout.slot_center("hud.hotbar.6").expect("slot");
        let hud7 = layout.slot_center("hud.hotbar.7").expect("slot");
        // Seed 219: the stick, and a weak wooden pickaxe a few pixels off on the same slot.
        let mut perception = Perception {
            icons: vec![
                icon("wood_pickaxe_icon", (hud6.0 + 3.0, hud6.1 - 2.0), 0.31),
                icon("stick_icon", hud6, 0.77),
                icon("plank_icon", hud7, 0.4),
                icon("plank_icon", (1177.0, 184.0), 0.7),
                icon("dirt_icon", (1177.0, 184.0), 0.5),
            ],
            ..Perception::default()
        };
        one_icon_per_slot(&mut perception, &layout, &layout.slots(None));
        let kept: Vec<(&str, f32)> = perception
            .icons
            .iter()
            .map(|i| (i.class.as_str(), i.conf))
            .collect();
        // Off every slot (the web client's recipe list) nothing is merged.
        assert_eq!(
            kept,
            [
                ("stick_icon", 0.77),
                ("plank_icon", 0.4),
                ("plank_icon", 0.7),
                ("dirt_icon", 0.5)
            ]
        );
        // The beaten read is set aside, not lost.
        let set_aside: Vec<&str> = perception
            .set_aside
            .iter()
            .map(|i| i.class.as_str())
            .collect();
        assert_eq!(set_aside, ["wood_pickaxe_icon"]);
    }

    #[test]
    fn the_hud_under_an_open_screen_settles_what_its_hotbar_slot_holds() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let profile = GameProfile::load(repo, "minecraft-web").expect("profile");
        let layout = profile.gui.layout(1280, 720, GuiScale::Auto);
        let bag6 = layout.slot_center("inventory.hotbar.6").expect("slot");
        let bag7 = layout.slot_center("inventory.hotbar.7").expect("slot");
        let hud6 = layout.slot_center("hud.hotbar.6").expect("slot");
        let hud7 = layout.slot_center("hud.hotbar.7").expect("slot");
        let kept_on = |icons: Vec<InventoryIcon>| {
            let mut perception = Perception {
                icons,
                ..Perception::default()
            };
            one_icon_per_slot(&mut perception, &layout, &layout.slots(None));
            perception
                .icons
                .iter()
                .filter(|i| i.y < hud6.1 - 20.0)
                .map(|i| i.class.clone())
                .collect::<Vec<_>>()
        };
        // World 3106: the bag's stone pickaxe read as an iron pickaxe more surely than as
        // itself; the HUD below reads the same key as a stone pickaxe, surer than both.
        let world_3106 = vec![
            icon("iron_pickaxe_icon", bag6, 0.80),
            icon("stone_pickaxe_icon", (bag6.0, bag6.1 - 0.5), 0.75),
            icon("stone_pickaxe_icon", hud6, 0.99),
            icon("wood_pickaxe_icon", bag7, 0.97),
            icon("wood_pickaxe_icon", hud7, 0.98),
        ];
        assert_eq!(
            kept_on(world_3106),
            ["stone_pickaxe_icon", "wood_pickaxe_icon"]
        );
        // A HUD read less sure than the screen's own settles nothing: the surest read stays.
        let unsure_hud = vec![
            icon("iron_pickaxe_icon", bag6, 0.80),
            icon("stone_pickaxe_icon", bag6, 0.75),
            icon("stone_pickaxe_icon", hud6, 0.70),
        ];
        assert_eq!(kept_on(unsure_hud), ["iron_pickaxe_icon"]);
        // A game that hides its HUD behind screens (the base Minecraft profile) has no such rule.
        let vanilla = GameProfile::load(repo, "minecraft").expect("profile");
        let layout = vanilla.gui.layout(1280, 720, GuiScale::Auto);
        let slot = layout
            .slots(Some("inventory"))
            .into_iter()
            .find(|s| s.location == "inventory.hotbar.6")
            .expect("slot");
        assert_eq!(layout.drawn_under(&slot), None);
    }
}
