//! From a skill call to the exact input events: bind the arguments (known skill, arity, types,
//! ranges), then expand the steps. Everything is checked here, before any event is sent: a call
//! that would put the pointer outside the window fails whole.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::keys::{Button, Key, KeyMap};
use super::library::{ParamType, Skill, SkillLibrary, SlotNames, Step, Value, template_instances};

/// One input event. Pointer positions are window pixels; `MoveBy` is a relative (camera) move.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum InputEvent {
    KeyDown {
        key: Key,
    },
    KeyUp {
        key: Key,
    },
    ButtonDown {
        button: Button,
    },
    ButtonUp {
        button: Button,
    },
    MoveTo {
        x: i32,
        y: i32,
    },
    MoveBy {
        dx: i32,
        dy: i32,
    },
    Wait {
        ms: u64,
    },
    /// Make sure the game holds the pointer (mouse-look): if it does not, click window pixel
    /// (x, y) so that it takes it (a browser game locks the pointer only on a click).
    GrabPointer {
        x: i32,
        y: i32,
    },
}

impl fmt::Display for InputEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputEvent::KeyDown { key } => write!(f, "key_down {key}"),
            InputEvent::KeyUp { key } => write!(f, "key_up {key}"),
            InputEvent::ButtonDown { button } => write!(f, "button_down {button}"),
            InputEvent::ButtonUp { button } => write!(f, "button_up {button}"),
            InputEvent::MoveTo { x, y } => write!(f, "move_to {x},{y}"),
            InputEvent::MoveBy { dx, dy } => write!(f, "move_by {dx},{dy}"),
            InputEvent::Wait { ms } => write!(f, "wait {ms}ms"),
            InputEvent::GrabPointer { x, y } => write!(f, "grab_pointer {x},{y}"),
        }
    }
}

/// How the camera turns: the game's vertical field of view and mouse sensitivity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Camera {
    /// Vertical field of view in degrees (Minecraft's default "Normal" is 70).
    pub fov_deg: f64,
    /// Degrees the view turns per mouse count (Minecraft at 100% sensitivity: 0.15).
    pub degrees_per_count: f64,
    /// A long turn is split into moves of at most this many counts...
    pub max_counts_per_move: i32,
    /// ...this many milliseconds apart, so the game sees a smooth turn.
    pub move_interval_ms: u64,
    /// Wait before and after every pointer move (`move_to`, `move_to_slot`). A game that reads
    /// the pointer's position once a frame (Minetest's inventory) would otherwise apply a click
    /// to the slot the pointer was on a frame before, or see a release after the move as a drag.
    #[serde(default)]
    pub pointer_settle_ms: u64,
    /// The game turns the camera only while it holds the pointer, and takes it on a click
    /// (Minecraft in a browser: pointer lock, lost whenever a screen closes). A call that turns
    /// the camera or presses a button in the world (before any `move_to`) first makes sure the
    /// game holds it (`InputEvent::GrabPointer` at the window centre).
    #[serde(default)]
    pub grab_pointer: bool,
    /// A click that must make the game take the pointer waits until this long after the last
    /// Escape (a browser refuses pointer lock asked for within about 1 s of leaving it:
    /// Chromium's "Browser Delay Limitation"; the click then does nothing and the turns after
    /// it are lost).
    #[serde(default)]
    pub relock_after_escape_ms: u64,
}

/// Window pixel centres of named GUI slots for the current window size and GUI scale.
pub trait SlotGeometry: SlotNames {
    fn slot_center(&self, location: &str) -> Result<(f32, f32), String>;
}

pub struct ExpandContext<'a> {
    pub window_w: u32,
    pub window_h: u32,
    pub keys: &'a KeyMap,
    pub slots: &'a dyn SlotGeometry,
    pub camera: Camera,
}

/// Bounds on one expanded call.
pub const MAX_EVENTS: usize = 20_000;
pub const MAX_TOTAL_MS: u64 = 120_000;
const DEFAULT_TAP_MS: f64 = 50.0;

/// A skill call as the policy proposes it: positional and/or named numeric arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillCall {
    pub skill: String,
    pub args: Vec<CallArg>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallArg {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// serde_json writes a non-finite number as `null`; reading `null` back as NaN keeps every
    /// session file readable, whatever an answer held (the parsers refuse non-finite values).
    #[serde(deserialize_with = "number_or_null")]
    pub value: f64,
}

fn number_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

impl fmt::Display for SkillCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args: Vec<String> = self
            .args
            .iter()
            .map(|a| match &a.name {
                Some(n) => format!("{n}={}", a.value),
                None => a.value.to_string(),
            })
            .collect();
        write!(f, "{}({})", self.skill, args.join(", "))
    }
}

/// Why a call cannot run. The message is written for the LLM as much as for the user.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    #[error("unknown skill \"{name}\"; the skills are: {known}")]
    UnknownSkill { name: String, known: String },
    #[error("{signature} takes {expected} arguments, got {got}")]
    Arity {
        signature: String,
        expected: usize,
        got: usize,
    },
    #[error("{signature}: {reason}")]
    Argument { signature: String, reason: String },
    #[error("{signature}: {reason}")]
    Expand { signature: String, reason: String },
}

/// Checks a call against the library and the window, returning the arguments by name.
pub fn bind<'l>(
    library: &'l SkillLibrary,
    call: &SkillCall,
    window_w: u32,
    window_h: u32,
) -> Result<(&'l Skill, BTreeMap<String, f64>), CallError> {
    let skill = library
        .get(&call.skill)
        .ok_or_else(|| CallError::UnknownSkill {
            name: call.skill.clone(),
            known: library.names().join(", "),
        })?;
    let bad = |reason: String| CallError::Argument {
        signature: skill.signature(),
        reason,
    };
    if call.args.len() != skill.params.len() {
        return Err(CallError::Arity {
            signature: skill.signature(),
            expected: skill.params.len(),
            got: call.args.len(),
        });
    }
    let mut bound = BTreeMap::new();
    let mut next_positional = 0;
    for arg in &call.args {
        let param = match &arg.name {
            Some(n) => skill
                .param(n)
                .ok_or_else(|| bad(format!("it has no parameter \"{n}\"")))?,
            None => {
                let p = skill
                    .params
                    .get(next_positional)
                    .ok_or_else(|| bad("too many positional arguments".into()))?;
                next_positional += 1;
                p
            }
        };
        if bound.contains_key(&param.name) {
            return Err(bad(format!("{} is given twice", param.name)));
        }
        let v = arg.value;
        if !v.is_finite() {
            return Err(bad(format!("{} must be a finite number", param.name)));
        }
        let (lo, hi) = match param.kind {
            ParamType::X => (0.0, f64::from(window_w) - 1.0),
            ParamType::Y => (0.0, f64::from(window_h) - 1.0),
            _ => (param.min.unwrap_or(f64::MIN), param.max.unwrap_or(f64::MAX)),
        };
        if param.kind == ParamType::Int && v.fract() != 0.0 {
            return Err(bad(format!(
                "{} must be a whole number, got {v}",
                param.name
            )));
        }
        if v < lo || v > hi {
            let what = match param.kind {
                ParamType::X | ParamType::Y => {
                    format!(" (inside the {window_w}x{window_h} game window)")
                }
                _ => String::new(),
            };
            return Err(bad(format!(
                "{} = {v} is outside {lo}-{hi}{what}",
                param.name
            )));
        }
        bound.insert(param.name.clone(), v);
    }
    Ok((skill, bound))
}

/// Binds and expands a call into events; nothing is sent.
pub fn plan(
    library: &SkillLibrary,
    call: &SkillCall,
    ctx: &ExpandContext,
) -> Result<Vec<InputEvent>, CallError> {
    let (skill, args) = bind(library, call, ctx.window_w, ctx.window_h)?;
    expand(skill, &args, ctx).map_err(|reason| CallError::Expand {
        signature: skill.signature(),
        reason,
    })
}

/// Expands a skill with bound arguments.
pub fn expand(
    skill: &Skill,
    args: &BTreeMap<String, f64>,
    ctx: &ExpandContext,
) -> Result<Vec<InputEvent>, String> {
    let mut out = Expansion {
        skill,
        args,
        ctx,
        events: Vec::new(),
        total_ms: 0,
        pointer_free: false,
    };
    for step in &skill.steps {
        out.step(step)?;
    }
    Ok(out.events)
}

struct Expansion<'a> {
    skill: &'a Skill,
    args: &'a BTreeMap<String, f64>,
    ctx: &'a ExpandContext<'a>,
    events: Vec<InputEvent>,
    total_ms: u64,
    /// A `move_to` came first: the call works in an open screen with a free pointer.
    pointer_free: bool,
}

impl Expansion<'_> {
    fn push(&mut self, e: InputEvent) -> Result<(), String> {
        if self.ctx.camera.grab_pointer
            && !self.pointer_free
            && matches!(e, InputEvent::MoveBy { .. } | InputEvent::ButtonDown { .. })
            && !self
                .events
                .iter()
                .any(|e| matches!(e, InputEvent::GrabPointer { .. }))
        {
            let (x, y) = (self.ctx.window_w / 2, self.ctx.window_h / 2);
            self.events.push(InputEvent::GrabPointer {
                x: x as i32,
                y: y as i32,
            });
        }
        if matches!(e, InputEvent::MoveTo { .. }) {
            self.pointer_free = true;
        }
        if let InputEvent::Wait { ms } = e {
            self.total_ms += ms;
            if self.total_ms > MAX_TOTAL_MS {
                return Err(format!("the call would take over {MAX_TOTAL_MS} ms"));
            }
        }
        if let InputEvent::MoveTo { x, y } = e {
            let inside = x >= 0
                && y >= 0
                && (x as i64) < i64::from(self.ctx.window_w)
                && (y as i64) < i64::from(self.ctx.window_h);
            if !inside {
                return Err(format!(
                    "pointer target ({x}, {y}) is outside the {}x{} game window",
                    self.ctx.window_w, self.ctx.window_h
                ));
            }
        }
        if self.events.len() >= MAX_EVENTS {
            return Err(format!("the call would send over {MAX_EVENTS} events"));
        }
        self.events.push(e);
        Ok(())
    }

    fn value(&self, v: &Value) -> Result<f64, String> {
        let x = v.resolve(self.args)?;
        if x.is_finite() {
            Ok(x)
        } else {
            Err("a step value is not a finite number".into())
        }
    }

    fn ms(&self, v: Option<&Value>) -> Result<u64, String> {
        let ms = v.map_or(Ok(DEFAULT_TAP_MS), |v| self.value(v))?;
        Ok(ms.clamp(0.0, MAX_TOTAL_MS as f64).round() as u64)
    }

    fn key(&self, name: &str) -> Result<Key, String> {
        self.ctx.keys.resolve(&self.fill_template(name)?)
    }

    fn step(&mut self, step: &Step) -> Result<(), String> {
        match step {
            Step::Key { key, ms } => {
                let (key, ms) = (self.key(key)?, self.ms(ms.as_ref())?);
                self.push(InputEvent::KeyDown { key })?;
                self.push(InputEvent::Wait { ms })?;
                self.push(InputEvent::KeyUp { key })?;
            }
            Step::HoldKey { key, ms } => {
                let (key, ms) = (self.key(key)?, self.ms(Some(ms))?);
                self.push(InputEvent::KeyDown { key })?;
                self.push(InputEvent::Wait { ms })?;
                self.push(InputEvent::KeyUp { key })?;
            }
            Step::KeyDown { key } => {
                let key = self.key(key)?;
                self.push(InputEvent::KeyDown { key })?;
            }
            Step::KeyUp { key } => {
                let key = self.key(key)?;
                self.push(InputEvent::KeyUp { key })?;
            }
            Step::Click { button, ms } => {
                let ms = self.ms(ms.as_ref())?;
                self.push(InputEvent::ButtonDown { button: *button })?;
                self.push(InputEvent::Wait { ms })?;
                self.push(InputEvent::ButtonUp { button: *button })?;
            }
            Step::HoldButton { button, ms } => {
                let ms = self.ms(Some(ms))?;
                self.push(InputEvent::ButtonDown { button: *button })?;
                self.push(InputEvent::Wait { ms })?;
                self.push(InputEvent::ButtonUp { button: *button })?;
            }
            Step::ButtonDown { button } => self.push(InputEvent::ButtonDown { button: *button })?,
            Step::ButtonUp { button } => self.push(InputEvent::ButtonUp { button: *button })?,
            Step::MoveTo { x, y } => {
                let (x, y) = (self.value(x)?.round() as i32, self.value(y)?.round() as i32);
                self.move_pointer(x, y)?;
            }
            Step::MoveToSlot { slot } => {
                let name = self.fill_template(slot)?;
                let (x, y) = self.ctx.slots.slot_center(&name)?;
                self.move_pointer(x.round() as i32, y.round() as i32)?;
            }
            Step::Aim { x, y } => {
                let (x, y) = (self.value(x)?, self.value(y)?);
                let (yaw, pitch) = self.angles_to(x, y);
                self.turn(yaw, pitch)?;
            }
            Step::AimOffset { dx, dy } => {
                let (w, h) = (f64::from(self.ctx.window_w), f64::from(self.ctx.window_h));
                let (dx, dy) = (self.value(dx)?, self.value(dy)?);
                let (yaw, pitch) = self.angles_to(w / 2.0 + dx, h / 2.0 + dy);
                self.turn(yaw, pitch)?;
            }
            Step::Turn { yaw, pitch } => {
                let yaw = yaw.as_ref().map_or(Ok(0.0), |v| self.value(v))?;
                let pitch = pitch.as_ref().map_or(Ok(0.0), |v| self.value(v))?;
                self.turn(yaw, pitch)?;
            }
            Step::Wait { ms } => {
                let ms = self.ms(Some(ms))?;
                self.push(InputEvent::Wait { ms })?;
            }
            Step::Repeat { times, steps } => {
                let times = self.value(times)?.round().max(0.0) as u64;
                for _ in 0..times {
                    for s in steps {
                        self.step(s)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Moves the pointer, settled on both sides (`[camera] pointer_settle_ms`): a game that
    /// reads the pointer once a frame must see a release where it happened (else it is a drag
    /// to the new place) and the new place before the next press.
    fn move_pointer(&mut self, x: i32, y: i32) -> Result<(), String> {
        let ms = self.ctx.camera.pointer_settle_ms;
        let settled = matches!(self.events.last(), None | Some(InputEvent::Wait { .. }));
        if ms > 0 && !settled {
            self.push(InputEvent::Wait { ms })?;
        }
        self.push(InputEvent::MoveTo { x, y })?;
        if ms > 0 {
            self.push(InputEvent::Wait { ms })?;
        }
        Ok(())
    }

    /// A slot or key template with its `{param}` filled from the arguments.
    fn fill_template(&self, template: &str) -> Result<String, String> {
        let Some(open) = template.find('{') else {
            return Ok(template.to_string());
        };
        // The loader checked the template (one int parameter in braces).
        template_instances(self.skill, template)?;
        let close = template[open..]
            .find('}')
            .map_or(template.len(), |c| open + c);
        let value = self.value(&Value::Expr(format!("${}", &template[open + 1..close])))?;
        Ok(format!(
            "{}{}{}",
            &template[..open],
            value.round() as i64,
            template.get(close + 1..).unwrap_or("")
        ))
    }

    /// Yaw and pitch (degrees) that bring window pixel (x, y) to the window centre, for a
    /// perspective camera with the configured vertical field of view.
    fn angles_to(&self, x: f64, y: f64) -> (f64, f64) {
        let (w, h) = (f64::from(self.ctx.window_w), f64::from(self.ctx.window_h));
        let focal = (h / 2.0) / (self.ctx.camera.fov_deg.to_radians() / 2.0).tan();
        let yaw = ((x - w / 2.0) / focal).atan().to_degrees();
        let pitch = ((y - h / 2.0) / focal).atan().to_degrees();
        (yaw, pitch)
    }

    /// A relative camera turn, split into bounded moves with pauses between them.
    fn turn(&mut self, yaw_deg: f64, pitch_deg: f64) -> Result<(), String> {
        let cam = self.ctx.camera;
        let mut dx = (yaw_deg / cam.degrees_per_count).round() as i64;
        let mut dy = (pitch_deg / cam.degrees_per_count).round() as i64;
        let step = i64::from(cam.max_counts_per_move.max(1));
        let mut first = true;
        while dx != 0 || dy != 0 {
            if !first {
                self.push(InputEvent::Wait {
                    ms: cam.move_interval_ms,
                })?;
            }
            first = false;
            let sx = dx.clamp(-step, step);
            let sy = dy.clamp(-step, step);
            self.push(InputEvent::MoveBy {
                dx: sx as i32,
                dy: sy as i32,
            })?;
            dx -= sx;
            dy -= sy;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::library::{Param, SkillLibrary};

    struct NoSlots;
    impl SlotNames for NoSlots {
        fn has_slot(&self, _: &str) -> bool {
            false
        }
    }
    impl SlotGeometry for NoSlots {
        fn slot_center(&self, l: &str) -> Result<(f32, f32), String> {
            Err(format!("no slot {l}"))
        }
    }

    fn library() -> SkillLibrary {
        let click_at = Skill {
            name: "click_at".into(),
            description: "Click.".into(),
            params: vec![
                Param {
                    name: "x".into(),
                    kind: ParamType::X,
                    min: None,
                    max: None,
                    description: String::new(),
                },
                Param {
                    name: "y".into(),
                    kind: ParamType::Y,
                    min: None,
                    max: None,
                    description: String::new(),
                },
            ],
            steps: vec![
                Step::MoveTo {
                    x: Value::Expr("$x".into()),
                    y: Value::Expr("$y".into()),
                },
                Step::Click {
                    button: Button::Left,
                    ms: None,
                },
            ],
            file: "t.toml".into(),
            line: 1,
        };
        SkillLibrary {
            skills: vec![click_at],
            dir: ".".into(),
        }
    }

    fn ctx<'a>(keys: &'a KeyMap) -> ExpandContext<'a> {
        ExpandContext {
            window_w: 200,
            window_h: 100,
            keys,
            slots: &NoSlots,
            camera: Camera {
                fov_deg: 90.0,
                degrees_per_count: 1.0,
                max_counts_per_move: 10,
                move_interval_ms: 5,
                pointer_settle_ms: 0,
                grab_pointer: false,
                relock_after_escape_ms: 0,
            },
        }
    }

    #[test]
    fn a_game_that_must_hold_the_pointer_gets_one_grab_before_a_turn_or_a_world_press_only() {
        let keys = KeyMap::default();
        let mut c = ctx(&keys);
        c.camera.grab_pointer = true;
        let world = Skill {
            name: "turn_and_hit".into(),
            description: "Turn, then hit.".into(),
            params: vec![],
            steps: vec![
                Step::Turn {
                    yaw: Some(Value::Literal(5.0)),
                    pitch: None,
                },
                Step::HoldButton {
                    button: Button::Left,
                    ms: Value::Literal(100.0),
                },
            ],
            file: "t.toml".into(),
            line: 1,
        };
        let events = expand(&world, &BTreeMap::new(), &c).expect("expand");
        assert_eq!(events[0], InputEvent::GrabPointer { x: 100, y: 50 });
        assert_eq!(events[1], InputEvent::MoveBy { dx: 5, dy: 0 });
        let grabs = |events: &[InputEvent]| {
            events
                .iter()
                .filter(|e| matches!(e, InputEvent::GrabPointer { .. }))
                .count()
        };
        assert_eq!(grabs(&events), 1);
        // A click in an open screen (a move first) leaves the free pointer alone.
        let call = SkillCall {
            skill: "click_at".into(),
            args: [10.0, 20.0]
                .map(|value| CallArg { name: None, value })
                .to_vec(),
        };
        assert_eq!(grabs(&plan(&library(), &call, &c).expect("plan")), 0);
        // A game that keeps the pointer itself gets no grab.
        c.camera.grab_pointer = false;
        assert_eq!(
            grabs(&expand(&world, &BTreeMap::new(), &c).expect("expand")),
            0
        );
    }

    #[test]
    fn named_and_positional_arguments_bind_the_same() {
        let keys = KeyMap::default();
        let positional = SkillCall {
            skill: "click_at".into(),
            args: vec![
                CallArg {
                    name: None,
                    value: 10.0,
                },
                CallArg {
                    name: None,
                    value: 20.0,
                },
            ],
        };
        let named = SkillCall {
            skill: "click_at".into(),
            args: vec![
                CallArg {
                    name: Some("y".into()),
                    value: 20.0,
                },
                CallArg {
                    name: Some("x".into()),
                    value: 10.0,
                },
            ],
        };
        let a = plan(&library(), &positional, &ctx(&keys)).expect("positional");
        let b = plan(&library(), &named, &ctx(&keys)).expect("named");
        assert_eq!(a, b);
        assert_eq!(a[0], InputEvent::MoveTo { x: 10, y: 20 });
    }

    #[test]
    fn a_pointer_settle_waits_after_each_move_before_the_click() {
        let keys = KeyMap::default();
        let mut c = ctx(&keys);
        c.camera.pointer_settle_ms = 120;
        let call = SkillCall {
            skill: "click_at".into(),
            args: [10.0, 20.0]
                .map(|value| CallArg { name: None, value })
                .to_vec(),
        };
        let events = plan(&library(), &call, &c).expect("plan");
        assert_eq!(
            events[..3],
            [
                InputEvent::MoveTo { x: 10, y: 20 },
                InputEvent::Wait { ms: 120 },
                InputEvent::ButtonDown {
                    button: Button::Left
                },
            ]
        );
        // A second click: the release settles before the pointer leaves.
        let mut twice = library();
        let steps = twice.skills[0].steps.clone();
        twice.skills[0].steps.extend(steps);
        let events = plan(&twice, &call, &c).expect("plan");
        assert_eq!(
            events[5..8],
            [
                InputEvent::Wait { ms: 120 },
                InputEvent::MoveTo { x: 10, y: 20 },
                InputEvent::Wait { ms: 120 },
            ]
        );
        assert_eq!(
            events[4],
            InputEvent::ButtonUp {
                button: Button::Left
            }
        );
        // Without it the press follows the move at once.
        let events = plan(&library(), &call, &ctx(&keys)).expect("plan");
        assert!(matches!(events[1], InputEvent::ButtonDown { .. }));
    }

    #[test]
    fn aiming_at_the_crosshair_is_no_move_and_off_centre_turns_by_the_angle() {
        let keys = KeyMap::default();
        let c = ctx(&keys);
        let skill = Skill {
            name: "aim".into(),
            description: "Aim.".into(),
            params: vec![],
            steps: vec![Step::Aim {
                x: Value::Literal(150.0),
                y: Value::Literal(50.0),
            }],
            file: "t.toml".into(),
            line: 1,
        };
        // 200x100 window, 90 deg vertical FOV: focal 50 px; x = 150 is 50 px right: 45 deg.
        let events = expand(&skill, &BTreeMap::new(), &c).expect("expand");
        let total: i32 = events
            .iter()
            .map(|e| match e {
                InputEvent::MoveBy { dx, .. } => *dx,
                _ => 0,
            })
            .sum();
        assert_eq!(total, 45);
        assert!(events.iter().all(|e| match e {
            InputEvent::MoveBy { dx, dy } => dx.abs() <= 10 && *dy == 0,
            InputEvent::Wait { ms } => *ms == 5,
            _ => false,
        }));
    }
}
