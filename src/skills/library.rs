//! The skill library: `skills/<game>/*.toml`, one `[[skill]]` table per skill, each a name, a
//! description for the LLM, typed parameters with ranges, and steps of primitive operations.
//! No code: a skill can only press keys and buttons, move the pointer and wait.
//!
//! ```toml
//! [[skill]]
//! name = "mine_log"
//! description = "Aim at the log at window pixel (x, y) and hold the attack button."
//! params = [{ name = "x", type = "x" }, { name = "y", type = "y" },
//!           { name = "seconds", type = "float", min = 0.5, max = 10.0 }]
//! steps = [{ op = "aim", x = "$x", y = "$y" },
//!          { op = "hold_button", button = "left", ms = "$seconds*1000" }]
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::keys::{Button, KeyMap};
use crate::toml_lines::{self, DataFileError};

/// Upper bounds that keep one skill call short and its event list small.
pub const MAX_WAIT_MS: f64 = 60_000.0;
pub const MAX_REPEAT: f64 = 100.0;

/// What a parameter holds. `x` and `y` are window pixels: their range is the window itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamType {
    Int,
    Float,
    X,
    Y,
}

impl fmt::Display for ParamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ParamType::Int => "int",
            ParamType::Float => "float",
            ParamType::X => "x pixel",
            ParamType::Y => "y pixel",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: ParamType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// Shown to the LLM beside the name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// A number in a step: a literal, or `"$param"` optionally scaled: `"$seconds*1000"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Literal(f64),
    Expr(String),
}

impl Value {
    /// (parameter, factor) of an expression; `None` for a literal.
    pub fn parse_ref(&self) -> Result<Option<(&str, f64)>, String> {
        let Value::Expr(text) = self else {
            return Ok(None);
        };
        let bad = || format!("\"{text}\" is neither a number nor \"$param\" / \"$param*factor\"");
        let rest = text.trim().strip_prefix('$').ok_or_else(bad)?;
        let (name, factor) = match rest.split_once('*') {
            Some((n, f)) => (n.trim(), f.trim().parse::<f64>().map_err(|_| bad())?),
            None => (rest.trim(), 1.0),
        };
        if name.is_empty() || !factor.is_finite() {
            return Err(bad());
        }
        Ok(Some((name, factor)))
    }

    pub fn resolve(&self, args: &BTreeMap<String, f64>) -> Result<f64, String> {
        match (self, self.parse_ref()?) {
            (Value::Literal(v), _) => Ok(*v),
            (_, Some((name, factor))) => args
                .get(name)
                .map(|v| v * factor)
                .ok_or_else(|| format!("no argument {name}")),
            (Value::Expr(t), None) => Err(format!("cannot evaluate {t}")),
        }
    }
}

/// One primitive operation. Durations are milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Press and release a key (held `ms`, default 50).
    Key {
        key: String,
        #[serde(default)]
        ms: Option<Value>,
    },
    KeyDown {
        key: String,
    },
    KeyUp {
        key: String,
    },
    /// Hold a key for `ms` (e.g. walking forward).
    HoldKey {
        key: String,
        ms: Value,
    },
    /// Press and release a button where the pointer is.
    Click {
        button: Button,
        #[serde(default)]
        ms: Option<Value>,
    },
    ButtonDown {
        button: Button,
    },
    ButtonUp {
        button: Button,
    },
    HoldButton {
        button: Button,
        ms: Value,
    },
    /// Move the free pointer (GUI screens open) to window pixel (x, y).
    MoveTo {
        x: Value,
        y: Value,
    },
    /// Move the free pointer to the centre of a named GUI slot, e.g. `inventory.craft.0` or
    /// `inventory.hotbar.{slot}` (an int parameter in braces).
    MoveToSlot {
        slot: String,
    },
    /// Turn the camera so that window pixel (x, y) comes under the crosshair.
    Aim {
        x: Value,
        y: Value,
    },
    /// Turn the camera so that the point `(dx, dy)` window pixels away from the crosshair comes
    /// under it (the paper's `turn(x, y)` offsets).
    AimOffset {
        dx: Value,
        dy: Value,
    },
    /// Turn the camera by degrees (positive yaw: right; positive pitch: down).
    Turn {
        #[serde(default)]
        yaw: Option<Value>,
        #[serde(default)]
        pitch: Option<Value>,
    },
    Wait {
        ms: Value,
    },
    Repeat {
        times: Value,
        steps: Vec<Step>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub params: Vec<Param>,
    pub steps: Vec<Step>,
    #[serde(skip)]
    pub file: PathBuf,
    #[serde(skip)]
    pub line: usize,
}

impl Skill {
    /// `name(x: x pixel, y: y pixel, seconds: float 0.5-10)`, as the prompt lists it.
    pub fn signature(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| {
                let range = match (p.min, p.max) {
                    (Some(a), Some(b)) if a < 0.0 => format!(" {a} to {b}"),
                    (Some(a), Some(b)) => format!(" {a}-{b}"),
                    (Some(a), None) => format!(" >= {a}"),
                    (None, Some(b)) => format!(" <= {b}"),
                    (None, None) => String::new(),
                };
                format!("{}: {}{range}", p.name, p.kind)
            })
            .collect();
        format!("{}({})", self.name, params.join(", "))
    }

    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    skill: Vec<Spanned<RawSkill>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSkill {
    name: String,
    description: String,
    #[serde(default)]
    params: Vec<Param>,
    steps: Vec<Step>,
}

#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error(transparent)]
    File(#[from] DataFileError),
    #[error("cannot list skill folder {path}: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("skill folder {0} holds no *.toml skill files")]
    Empty(PathBuf),
}

/// Checks a step can be expanded: what the loader can know without a window.
pub trait SlotNames {
    /// Whether `location` (braces already filled in) names a GUI slot.
    fn has_slot(&self, location: &str) -> bool;
}

#[derive(Debug, Clone)]
pub struct SkillLibrary {
    pub skills: Vec<Skill>,
    pub dir: PathBuf,
}

impl SkillLibrary {
    /// Loads every `*.toml` in `dir` (sorted by file name), checking names, parameters and steps
    /// against the key map and the GUI slot names.
    pub fn load(dir: &Path, keys: &KeyMap, slots: &dyn SlotNames) -> Result<Self, LibraryError> {
        let entries = std::fs::read_dir(dir).map_err(|source| LibraryError::Dir {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(LibraryError::Empty(dir.to_path_buf()));
        }
        let mut skills: Vec<Skill> = Vec::new();
        for file in files {
            for skill in load_file(&file, keys, slots)? {
                if let Some(first) = skills.iter().find(|s| s.name == skill.name) {
                    return Err(DataFileError::at(
                        &file,
                        skill.line,
                        format!(
                            "skill {} is already defined at {}:{}",
                            skill.name,
                            first.file.display(),
                            first.line
                        ),
                    )
                    .into());
                }
                skills.push(skill);
            }
        }
        Ok(SkillLibrary {
            skills,
            dir: dir.to_path_buf(),
        })
    }

    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// Lays a profile's own skills over its base's: one of the same name replaces the base's in
    /// place, a new one is added at the end.
    pub fn overlay(&mut self, over: SkillLibrary) {
        for skill in over.skills {
            match self.skills.iter_mut().find(|s| s.name == skill.name) {
                Some(slot) => *slot = skill,
                None => self.skills.push(skill),
            }
        }
        self.dir = over.dir;
    }

    pub fn names(&self) -> Vec<&str> {
        self.skills.iter().map(|s| s.name.as_str()).collect()
    }
}

fn load_file(
    path: &Path,
    keys: &KeyMap,
    slots: &dyn SlotNames,
) -> Result<Vec<Skill>, DataFileError> {
    let text = toml_lines::read(path)?;
    let raw: RawFile =
        toml_lines::from_str(&text).map_err(|(line, m)| DataFileError::at(path, line, m))?;
    let mut out = Vec::new();
    for spanned in raw.skill {
        let line = toml_lines::line_at(&text, spanned.span().start);
        let raw = spanned.into_inner();
        let skill = Skill {
            name: raw.name,
            description: raw.description,
            params: raw.params,
            steps: raw.steps,
            file: path.to_path_buf(),
            line,
        };
        check_skill(&skill, keys, slots)
            .map_err(|m| DataFileError::at(path, line, format!("skill {}: {m}", skill.name)))?;
        out.push(skill);
    }
    Ok(out)
}

fn is_identifier(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn check_skill(skill: &Skill, keys: &KeyMap, slots: &dyn SlotNames) -> Result<(), String> {
    if !is_identifier(&skill.name) {
        return Err("the name must be lower_snake_case".into());
    }
    if skill.description.trim().is_empty() {
        return Err("the description (shown to the LLM) must not be empty".into());
    }
    if skill.steps.is_empty() {
        return Err("has no steps".into());
    }
    let mut names = BTreeSet::new();
    for p in &skill.params {
        if !is_identifier(&p.name) {
            return Err(format!("parameter \"{}\" must be lower_snake_case", p.name));
        }
        if !names.insert(p.name.as_str()) {
            return Err(format!("parameter {} is declared twice", p.name));
        }
        match p.kind {
            ParamType::X | ParamType::Y if p.min.is_some() || p.max.is_some() => {
                return Err(format!(
                    "parameter {}: {} parameters take their range from the window; remove min/max",
                    p.name, p.kind
                ));
            }
            ParamType::Int | ParamType::Float if p.min.is_none() || p.max.is_none() => {
                return Err(format!("parameter {} needs min and max", p.name));
            }
            _ => {}
        }
        if let (Some(a), Some(b)) = (p.min, p.max) {
            if !(a.is_finite() && b.is_finite() && a <= b) {
                return Err(format!("parameter {}: min {a} must be <= max {b}", p.name));
            }
            if p.kind == ParamType::Int && (a.fract() != 0.0 || b.fract() != 0.0) {
                return Err(format!(
                    "parameter {}: int range must be whole numbers",
                    p.name
                ));
            }
        }
    }
    let mut held = BTreeSet::new();
    for (i, step) in skill.steps.iter().enumerate() {
        check_step(skill, step, keys, slots, &mut held)
            .map_err(|m| format!("step {}: {m}", i + 1))?;
    }
    if let Some(k) = held.iter().next() {
        return Err(format!(
            "\"{k}\" is pressed (key_down/button_down) but never released"
        ));
    }
    Ok(())
}

/// Range of a value over the parameter ranges (x/y: unknown until a window exists).
fn value_range(skill: &Skill, v: &Value) -> Result<Option<(f64, f64)>, String> {
    match v.parse_ref()? {
        None => match v {
            Value::Literal(x) => Ok(Some((*x, *x))),
            Value::Expr(_) => Ok(None),
        },
        Some((name, factor)) => {
            let p = skill
                .param(name)
                .ok_or_else(|| format!("${name} is not a parameter of this skill"))?;
            Ok(match (p.min, p.max) {
                (Some(a), Some(b)) => {
                    let (x, y) = (a * factor, b * factor);
                    Some((x.min(y), x.max(y)))
                }
                _ => None,
            })
        }
    }
}

fn check_duration(skill: &Skill, v: &Value, what: &str) -> Result<(), String> {
    if let Some((a, b)) = value_range(skill, v)?
        && (a < 0.0 || b > MAX_WAIT_MS)
    {
        return Err(format!(
            "{what} can be {a}-{b} ms; it must stay within 0-{MAX_WAIT_MS}"
        ));
    }
    Ok(())
}

fn check_pixel(skill: &Skill, v: &Value, axis: ParamType) -> Result<(), String> {
    if let Some((name, _)) = v.parse_ref()? {
        let p = skill
            .param(name)
            .ok_or_else(|| format!("${name} is not a parameter of this skill"))?;
        if p.kind != axis {
            return Err(format!(
                "${name} is a {} parameter; a pointer {} needs a {axis} parameter",
                p.kind,
                if axis == ParamType::X { "x" } else { "y" }
            ));
        }
    }
    Ok(())
}

/// Fills `{param}` in a slot or key template (`inventory.hotbar.{k}`, `hotbar_{k}`) with each
/// whole value of the int parameter's range.
pub fn template_instances(skill: &Skill, template: &str) -> Result<Vec<String>, String> {
    let Some(open) = template.find('{') else {
        return Ok(vec![template.to_string()]);
    };
    let close = template[open..]
        .find('}')
        .map(|c| open + c)
        .ok_or_else(|| format!("unclosed {{ in \"{template}\""))?;
    let name = &template[open + 1..close];
    let p = skill
        .param(name)
        .ok_or_else(|| format!("{{{name}}} in \"{template}\" is not a parameter"))?;
    let (Some(a), Some(b), ParamType::Int) = (p.min, p.max, p.kind) else {
        return Err(format!(
            "{{{name}}} in \"{template}\" must be an int parameter"
        ));
    };
    Ok((a as i64..=b as i64)
        .map(|i| format!("{}{i}{}", &template[..open], &template[close + 1..]))
        .collect())
}

/// A turn by `yaw` and/or `pitch` degrees, each within a full turn either way.
fn check_turn(skill: &Skill, yaw: Option<&Value>, pitch: Option<&Value>) -> Result<(), String> {
    if yaw.is_none() && pitch.is_none() {
        return Err("turn needs yaw and/or pitch".into());
    }
    for v in [yaw, pitch].into_iter().flatten() {
        if let Some((a, b)) = value_range(skill, v)?
            && (a < -360.0 || b > 360.0)
        {
            return Err("a turn must stay within -360..360 degrees".into());
        }
    }
    Ok(())
}

fn check_step(
    skill: &Skill,
    step: &Step,
    keys: &KeyMap,
    slots: &dyn SlotNames,
    held: &mut BTreeSet<String>,
) -> Result<(), String> {
    let key_ok = |k: &str| -> Result<(), String> {
        for name in template_instances(skill, k)? {
            keys.resolve(&name)?;
        }
        Ok(())
    };
    match step {
        Step::Key { key, ms } => {
            key_ok(key)?;
            if let Some(ms) = ms {
                check_duration(skill, ms, "the hold")?;
            }
        }
        Step::KeyDown { key } => {
            key_ok(key)?;
            held.insert(key.clone());
        }
        Step::KeyUp { key } => {
            key_ok(key)?;
            held.remove(key);
        }
        Step::HoldKey { key, ms } => {
            key_ok(key)?;
            check_duration(skill, ms, "the hold")?;
        }
        Step::Click { ms, .. } => {
            if let Some(ms) = ms {
                check_duration(skill, ms, "the click")?;
            }
        }
        Step::ButtonDown { button } => {
            held.insert(button.to_string());
        }
        Step::ButtonUp { button } => {
            held.remove(&button.to_string());
        }
        Step::HoldButton { ms, .. } => check_duration(skill, ms, "the hold")?,
        Step::MoveTo { x, y } | Step::Aim { x, y } => {
            check_pixel(skill, x, ParamType::X)?;
            check_pixel(skill, y, ParamType::Y)?;
        }
        Step::MoveToSlot { slot } => {
            if let Some(name) = template_instances(skill, slot)?
                .into_iter()
                .find(|name| !slots.has_slot(name))
            {
                return Err(format!("\"{name}\" is not a GUI slot of this game"));
            }
        }
        Step::AimOffset { dx, dy } => {
            for v in [dx, dy] {
                value_range(skill, v)?;
            }
        }
        Step::Turn { yaw, pitch } => check_turn(skill, yaw.as_ref(), pitch.as_ref())?,
        Step::Wait { ms } => check_duration(skill, ms, "the wait")?,
        Step::Repeat { times, steps } => {
            match value_range(skill, times)? {
                Some((a, b)) if a >= 0.0 && b <= MAX_REPEAT => {}
                _ => return Err(format!("repeat times must stay within 0-{MAX_REPEAT}")),
            }
            if steps.is_empty() {
                return Err("repeat has no steps".into());
            }
            for s in steps {
                check_step(skill, s, keys, slots, held)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Slots;
    impl SlotNames for Slots {
        fn has_slot(&self, location: &str) -> bool {
            ["hud.hotbar.0", "hud.hotbar.1"].contains(&location)
        }
    }

    fn load(text: &str) -> Result<Vec<Skill>, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = dir.path().join("s.toml");
        std::fs::write(&path, text).map_err(|e| e.to_string())?;
        let keys = KeyMap([("forward".to_string(), "w".to_string())].into());
        load_file(&path, &keys, &Slots).map_err(|e| e.to_string())
    }

    #[test]
    fn a_valid_skill_loads_with_its_signature() {
        let skills = load(
            "[[skill]]\nname = \"walk\"\ndescription = \"Walk.\"\n\
             params = [{ name = \"d\", type = \"float\", min = 0.5, max = 2 }]\n\
             steps = [{ op = \"hold_key\", key = \"forward\", ms = \"$d*1000\" }]\n",
        )
        .expect("valid");
        assert_eq!(skills[0].signature(), "walk(d: float 0.5-2)");
        assert_eq!(skills[0].line, 1);
    }

    #[test]
    fn the_loader_rejects_what_could_misbehave() {
        let cases = [
            (
                "steps = [{ op = \"key_down\", key = \"w\" }]",
                "\"w\" is pressed (key_down/button_down) but never released",
            ),
            (
                "params = [{ name = \"d\", type = \"float\", min = 0, max = 100 }]\n\
                 steps = [{ op = \"wait\", ms = \"$d*1000\" }]",
                "the wait can be 0-100000 ms",
            ),
            (
                "params = [{ name = \"x\", type = \"x\", min = 0 }]\nsteps = [{ op = \"wait\", ms = 1 }]",
                "take their range from the window",
            ),
            (
                "params = [{ name = \"n\", type = \"int\", min = 0, max = 1 }]\n\
                 steps = [{ op = \"move_to\", x = \"$n\", y = 1 }]",
                "a pointer x needs a x pixel parameter",
            ),
            (
                "params = [{ name = \"k\", type = \"int\", min = 0, max = 2 }]\n\
                 steps = [{ op = \"move_to_slot\", slot = \"hud.hotbar.{k}\" }]",
                "\"hud.hotbar.2\" is not a GUI slot",
            ),
            (
                "steps = [{ op = \"teleport\" }]",
                "unknown variant `teleport`",
            ),
            (
                "steps = [{ op = \"repeat\", times = 1000, steps = [{ op = \"wait\", ms = 1 }] }]",
                "repeat times must stay within 0-100",
            ),
        ];
        for (body, expected) in cases {
            let text = format!("[[skill]]\nname = \"s\"\ndescription = \"S.\"\n{body}\n");
            let err = load(&text).expect_err(body);
            assert!(err.contains(expected), "{body}: {err}");
            assert!(err.contains("s.toml:"), "{err}");
        }
    }
}
