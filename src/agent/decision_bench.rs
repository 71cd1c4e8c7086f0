//! The decision benchmark behind `vistawise policy eval`: steps of winning sessions (cases),
//! each with the calls counted as right there, put to a policy one at a time and scored (valid
//! call, same skill, a call of the accepted set). The memory stack of a case holds the winning
//! session's own decisions before it (teacher forcing), so one wrong answer does not spoil the
//! cases after it and every model sees the same prompts but for the template.
//!
//! A cases file is JSON lines: a `cases` header (game, task, source session), then one `case`
//! per decided step with its perception (what the detector saw, stack counts included), the
//! recorded call and the accepted calls. `policy cases` writes them from a session; the
//! accepted set is data, to be widened by hand where more answers are right.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::pipeline::{self, Parts};
use super::session::{Session, SessionError, Validation};
use super::success::SuccessCheck;
use crate::llm::LlmError;
use crate::llm::{Spent, UsageSummary};
use crate::perception::Perception;
use crate::policy::{LlmPolicy, MemoryStack, llm_decision};
use crate::skills::ParamType;
use crate::skills::expand::bind;
use crate::skills::{SkillCall, SkillLibrary};

/// A turn toward the same thing: within this many pixels of the recorded offset, or this
/// share of it, whichever is larger.
pub const TURN_TOLERANCE_PX: f64 = 40.0;
pub const TURN_TOLERANCE_SHARE: f64 = 0.3;
/// A click on the same slot: a GUI slot is 16 GUI pixels, 32-48 window pixels.
pub const SLOT_TOLERANCE_PX: f64 = 16.0;

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {reason}")]
    Write { path: PathBuf, reason: String },
    #[error("{path}:{line}: {reason}")]
    Line {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{path}: the first line must be the `cases` header (game, task, source)")]
    NoHeader { path: PathBuf },
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Llm(#[from] LlmError),
}

/// What a cases file is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseHeader {
    /// The game profile the cases were played with (`minecraft-web`, `minetest`).
    pub game: String,
    /// The task id.
    pub task: String,
    /// The session the cases come from.
    pub source: String,
}

/// One decided step of a winning session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub step: u64,
    pub perception: Perception,
    /// The calls counted as right at this step.
    pub accept: Vec<Accepted>,
    /// What the winning session did; it goes into the memory stack of the cases after it.
    pub recorded: SkillCall,
    pub reasoning: String,
    #[serde(default)]
    pub outcome: Option<String>,
}

/// An accepted call: the skill, and for each of its parameters (in the skill's order) the
/// range of values accepted, `null` for any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Accepted {
    pub skill: String,
    pub args: Vec<Option<[f64; 2]>>,
}

impl Accepted {
    /// Whether a call with these parameter values (in the skill's order) is this one.
    pub fn accepts(&self, skill: &str, values: &[f64]) -> bool {
        skill == self.skill
            && values.len() == self.args.len()
            && values
                .iter()
                .zip(&self.args)
                .all(|(v, range)| range.is_none_or(|[lo, hi]| (lo..=hi).contains(v)))
    }
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Line {
    Cases(CaseHeader),
    Case(Box<Case>),
}

/// A cases file, loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseFile {
    pub path: PathBuf,
    pub header: CaseHeader,
    pub cases: Vec<Case>,
}

impl CaseFile {
    pub fn load(path: &Path) -> Result<Self, EvalError> {
        let text = std::fs::read_to_string(path).map_err(|source| EvalError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mut header = None;
        let mut cases = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let at = |reason: String| EvalError::Line {
                path: path.to_path_buf(),
                line: i + 1,
                reason,
            };
            match serde_json::from_str::<Line>(raw).map_err(|e| at(e.to_string()))? {
                Line::Cases(h) if header.is_none() && cases.is_empty() => header = Some(h),
                Line::Cases(_) => return Err(at("a second `cases` header".into())),
                Line::Case(_) if header.is_none() => {
                    return Err(EvalError::NoHeader {
                        path: path.to_path_buf(),
                    });
                }
                Line::Case(c) => {
                    if c.accept.is_empty() {
                        return Err(at(format!("case of step {} accepts no call", c.step)));
                    }
                    cases.push(*c);
                }
            }
        }
        let header = header.ok_or_else(|| EvalError::NoHeader {
            path: path.to_path_buf(),
        })?;
        Ok(CaseFile {
            path: path.to_path_buf(),
            header,
            cases,
        })
    }

    /// Writes the file through a temporary file and a rename.
    pub fn save(&self, path: &Path) -> Result<(), EvalError> {
        let mut text = String::new();
        let mut push = |line: &Line| -> Result<(), EvalError> {
            let json = serde_json::to_string(line).map_err(|e| EvalError::Write {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
            text.push_str(&json);
            text.push('\n');
            Ok(())
        };
        push(&Line::Cases(self.header.clone()))?;
        for c in &self.cases {
            push(&Line::Case(Box::new(c.clone())))?;
        }
        crate::atomic_file::write(path, text.as_bytes()).map_err(|e| EvalError::Write {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
    }

    /// The cases of a recorded session: every step whose call the policy chose (steps the
    /// success check decided, and steps without a valid call, are left out), accepting the
    /// recorded call within [`accepted_for`]'s tolerances.
    pub fn from_session(parts: &Parts, session: &Session, game: &str) -> CaseFile {
        let mut check = SuccessCheck::default();
        let mut cases = Vec::new();
        for step in &session.steps {
            let graph = pipeline::graph_view(parts, &step.perception);
            let verdict = check.judge(parts, &graph, &step.perception);
            let decided_by_check = verdict.decision(parts, &step.perception).is_some();
            let Some(call) = &step.action else { continue };
            if decided_by_check || !step.validation.is_valid() {
                continue;
            }
            cases.push(Case {
                step: step.step,
                perception: step.perception.clone(),
                accept: accepted_for(call, &parts.profile.skills, &step.perception),
                recorded: call.clone(),
                reasoning: step.reasoning.clone(),
                outcome: session.outcome(step.step).map(|o| o.result.to_string()),
            });
        }
        CaseFile {
            path: PathBuf::new(),
            header: CaseHeader {
                game: game.to_string(),
                task: session.meta.task.clone(),
                source: session
                    .dir
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            },
            cases,
        }
    }
}

/// The calls accepted where `call` was made: the same skill with every window-pixel argument
/// on the same slot ([`SLOT_TOLERANCE_PX`]), every whole-number argument (hotbar keys, counts)
/// equal, every duration from half to twice the recorded one, and turn offsets (signed whole
/// numbers) toward the same thing ([`TURN_TOLERANCE_PX`], [`TURN_TOLERANCE_SHARE`]). A turn
/// toward a thing in view also accepts turns toward any other thing of its class; a turn
/// toward nothing (looking around) accepts the same turn the other way.
pub fn accepted_for(
    call: &SkillCall,
    library: &SkillLibrary,
    perception: &Perception,
) -> Vec<Accepted> {
    let (w, h) = (perception.frame_w, perception.frame_h);
    let Some((skill, values)) = bound_values(library, call, w, h) else {
        return vec![Accepted {
            skill: call.skill.clone(),
            args: call.args.iter().map(|a| Some([a.value, a.value])).collect(),
        }];
    };
    let accepted_with = |values: &[f64], turn: Option<(usize, usize, Range, Range)>| {
        let mut args = arg_ranges(skill, values);
        if let Some((xi, yi, xs, ys)) = turn {
            args[xi] = Some(xs);
            args[yi] = Some(ys);
        }
        Accepted {
            skill: skill.name.clone(),
            args,
        }
    };
    let mut accepted = vec![accepted_with(&values, None)];
    // The turn's (x, y): the first two offset parameters.
    let offsets: Vec<usize> = (0..values.len()).filter(|&i| is_offset(skill, i)).collect();
    let [xi, yi] = offsets[..] else {
        return accepted;
    };
    let turn = (values[xi], values[yi]);
    let crosshair = (f64::from(w) / 2.0, f64::from(h) / 2.0);
    match aimed_at(perception, turn, crosshair) {
        // Anywhere on the box of any thing of its class.
        Some(target) => accepted.extend(
            perception
                .entities
                .iter()
                .filter(|e| e.class == target.class)
                .map(|e| {
                    let (xs, ys) = box_from(e, crosshair);
                    accepted_with(&values, Some((xi, yi, xs, ys)))
                }),
        ),
        None if turn.0.abs() >= TURN_TOLERANCE_PX => {
            let mut mirrored = values.clone();
            mirrored[xi] = -values[xi];
            accepted.push(accepted_with(&mirrored, None));
        }
        None => {}
    }
    accepted
}

/// An accepted range of one argument.
type Range = [f64; 2];

/// Whether parameter `i` is a turn offset (a signed whole number).
fn is_offset(skill: &crate::skills::Skill, i: usize) -> bool {
    let p = &skill.params[i];
    p.kind == ParamType::Int && p.min.is_some_and(|m| m < 0.0)
}

/// The turn tolerance around an offset `v`.
fn turn_tolerance(v: f64) -> f64 {
    TURN_TOLERANCE_PX.max(TURN_TOLERANCE_SHARE * v.abs())
}

/// Each argument's accepted range: pixels on the same slot, offsets toward the same place,
/// whole numbers equal, durations from half to twice.
fn arg_ranges(skill: &crate::skills::Skill, values: &[f64]) -> Vec<Option<Range>> {
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let p = &skill.params[i];
            match p.kind {
                ParamType::X | ParamType::Y => Some([v - SLOT_TOLERANCE_PX, v + SLOT_TOLERANCE_PX]),
                ParamType::Int if is_offset(skill, i) => {
                    let tol = turn_tolerance(v);
                    Some([v - tol, v + tol])
                }
                ParamType::Int => Some([v, v]),
                ParamType::Float => {
                    let lo = (v / 2.0).max(p.min.unwrap_or(f64::MIN));
                    let hi = (v * 2.0).min(p.max.unwrap_or(f64::MAX));
                    Some([lo, hi])
                }
            }
        })
        .collect()
}

/// A thing's box as offsets from the crosshair: (x range, y range).
fn box_from(e: &crate::perception::EnvironmentEntity, (cx, cy): (f64, f64)) -> (Range, Range) {
    let (ex, ey) = (f64::from(e.x) - cx, f64::from(e.y) - cy);
    let (hw, hh) = (f64::from(e.w) / 2.0, f64::from(e.h) / 2.0);
    ([ex - hw, ex + hw], [ey - hh, ey + hh])
}

/// The thing a turn by `(x, y)` aims at: the offset on its box, or within the turn tolerance
/// of it; of several, the one whose centre is nearest.
fn aimed_at(
    perception: &Perception,
    (x, y): (f64, f64),
    crosshair: (f64, f64),
) -> Option<&crate::perception::EnvironmentEntity> {
    let (tx, ty) = (turn_tolerance(x), turn_tolerance(y));
    let distance = |e: &crate::perception::EnvironmentEntity| {
        (f64::from(e.x) - crosshair.0 - x).hypot(f64::from(e.y) - crosshair.1 - y)
    };
    perception
        .entities
        .iter()
        .filter(|e| {
            let ([x0, x1], [y0, y1]) = box_from(e, crosshair);
            (x0 - tx..=x1 + tx).contains(&x) && (y0 - ty..=y1 + ty).contains(&y)
        })
        .min_by(|a, b| distance(a).total_cmp(&distance(b)))
}

/// How one case went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    pub file: String,
    pub step: u64,
    pub recorded: SkillCall,
    pub answered: Option<SkillCall>,
    pub valid: bool,
    pub same_skill: bool,
    pub agrees: bool,
    /// Why no valid call came out ("valid" when one did).
    pub validation: Validation,
    pub usage: crate::llm::Usage,
    pub cost_usd: Option<f64>,
    pub seconds: f64,
}

/// `call`'s skill and its argument values in the skill's parameter order (named or
/// positional, as `bind` reads them); `None` when the call does not bind.
fn bound_values<'l>(
    library: &'l SkillLibrary,
    call: &SkillCall,
    w: u32,
    h: u32,
) -> Option<(&'l crate::skills::Skill, Vec<f64>)> {
    let (skill, bound) = bind(library, call, w, h).ok()?;
    let values = skill
        .params
        .iter()
        .map(|p| bound.get(&p.name).copied().unwrap_or(f64::NAN))
        .collect();
    Some((skill, values))
}

/// Whether `call` is one of `accept` (its arguments bound to the skill's order).
pub fn agrees(
    call: &SkillCall,
    accept: &[Accepted],
    library: &SkillLibrary,
    w: u32,
    h: u32,
) -> bool {
    let Some((skill, values)) = bound_values(library, call, w, h) else {
        return false;
    };
    accept.iter().any(|a| a.accepts(&skill.name, &values))
}

/// Asks `policy` every case of `file` in order (memory: the recorded decisions before it);
/// `on_case` sees each result as it comes (for progress and for writing it at once).
pub fn run_file(
    parts: &Parts,
    policy: &LlmPolicy,
    file: &CaseFile,
    runtime: &tokio::runtime::Runtime,
    on_case: &mut dyn FnMut(&CaseResult) -> Result<(), EvalError>,
) -> Result<Vec<CaseResult>, EvalError> {
    let mut memory = MemoryStack::default();
    let mut results = Vec::new();
    let name = file
        .path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    for case in &file.cases {
        let p = &case.perception;
        let graph = pipeline::graph_view(parts, p);
        let (prompt, _) = pipeline::build_prompt(parts, p, &graph, &memory);
        let asked = std::time::Instant::now();
        let layout = pipeline::layout(parts, p);
        let ctx = pipeline::expand_context(parts, &layout, p.frame_w, p.frame_h);
        let decision = runtime.block_on(llm_decision(
            policy,
            &prompt,
            &parts.profile.skills,
            &ctx,
            &parts.counter,
        ))?;
        let seconds = asked.elapsed().as_secs_f64();
        let answered = decision.action.as_ref().map(|a| a.call.clone());
        let result = CaseResult {
            file: name.clone(),
            step: case.step,
            recorded: case.recorded.clone(),
            valid: answered.is_some(),
            same_skill: answered
                .as_ref()
                .is_some_and(|c| case.accept.iter().any(|a| a.skill == c.skill)),
            agrees: answered.as_ref().is_some_and(|c| {
                agrees(c, &case.accept, &parts.profile.skills, p.frame_w, p.frame_h)
            }),
            answered,
            validation: decision.validation,
            usage: decision.usage,
            cost_usd: decision.cost_usd,
            seconds,
        };
        on_case(&result)?;
        results.push(result);
        memory.push(case.step, case.recorded.clone(), &case.reasoning);
        if let Some(o) = &case.outcome {
            memory.set_outcome(o.clone());
        }
    }
    Ok(results)
}

/// The benchmark's figures over some results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    pub cases: usize,
    pub valid: usize,
    pub same_skill: usize,
    pub agrees: usize,
    /// Wilson 95% interval of the agreement rate.
    pub agreement_interval: (f64, f64),
    /// Why answers were not valid, most frequent first, with counts.
    pub invalid_reasons: Vec<(String, usize)>,
    pub spent: UsageSummary,
}

impl Score {
    pub fn of(results: &[CaseResult]) -> Score {
        let count = |f: fn(&CaseResult) -> bool| results.iter().filter(|r| f(r)).count();
        let agrees = count(|r| r.agrees);
        let mut reasons: Vec<(String, usize)> = Vec::new();
        for r in results.iter().filter(|r| !r.valid) {
            // The reason's kind, not its numbers: "unknown skill", "expected 2 arguments".
            let kind: String = r.validation.to_string().chars().take(60).collect();
            match reasons.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, n)) => *n += 1,
                None => reasons.push((kind, 1)),
            }
        }
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let spent: Vec<Spent> = results
            .iter()
            .map(|r| Spent {
                usage: r.usage,
                seconds: r.seconds,
                cost_usd: r.cost_usd,
            })
            .collect();
        Score {
            cases: results.len(),
            valid: count(|r| r.valid),
            same_skill: count(|r| r.same_skill),
            agrees,
            agreement_interval: wilson(agrees, results.len()),
            invalid_reasons: reasons,
            spent: UsageSummary::of(&spent),
        }
    }
}

/// The Wilson score interval (95%) of `k` successes in `n` trials; (0, 1) for none.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_964;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_the_textbook_values() {
        // 8 of 10: 0.490-0.943 (Wilson, 95%).
        let (lo, hi) = wilson(8, 10);
        assert!(
            (lo - 0.4902).abs() < 1e-3 && (hi - 0.9433).abs() < 1e-3,
            "{lo} {hi}"
        );
        assert_eq!(wilson(0, 0), (0.0, 1.0));
        let (lo, _) = wilson(0, 20);
        assert_eq!(lo, 0.0);
    }

    fn library() -> SkillLibrary {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        crate::game::GameProfile::load(root, "minecraft-web")
            .expect("profile")
            .skills
    }

    fn call(skill: &str, args: &[f64]) -> SkillCall {
        SkillCall {
            skill: skill.into(),
            args: args
                .iter()
                .map(|&value| crate::skills::CallArg { name: None, value })
                .collect(),
        }
    }

    fn trunk(x: f32, y: f32) -> crate::perception::EnvironmentEntity {
        crate::perception::EnvironmentEntity {
            class: "trunk".into(),
            x,
            y,
            w: 60.0,
            h: 200.0,
            conf: 0.9,
            in_reach: false,
        }
    }

    #[test]
    fn a_turn_toward_a_trunk_accepts_a_turn_toward_any_trunk_and_a_look_around_either_way() {
        let library = library();
        let perception = Perception {
            frame_w: 1280,
            frame_h: 720,
            entities: vec![trunk(940.0, 390.0), trunk(200.0, 300.0)],
            ..Perception::default()
        };
        let accept = accepted_for(&call("turn", &[300.0, 30.0]), &library, &perception);
        let ok = |c: SkillCall| agrees(&c, &accept, &library, 1280, 720);
        assert!(ok(call("turn", &[300.0, 30.0])));
        // Within 30% (at least 40 px) of the recorded offset.
        assert!(ok(call("turn", &[380.0, 0.0])));
        assert!(!ok(call("turn", &[420.0, 30.0])));
        // The other trunk, at (-440, -60) from the crosshair.
        assert!(ok(call("turn", &[-440.0, -60.0])));
        assert!(!ok(call("turn", &[-300.0, 30.0])));
        assert!(!ok(call("move_forward", &[1.0])));
        // Looking around (nothing in view at the offset): the other way is as good.
        let empty = Perception {
            frame_w: 1280,
            frame_h: 720,
            ..Perception::default()
        };
        let accept = accepted_for(&call("turn", &[400.0, 0.0]), &library, &empty);
        assert!(agrees(
            &call("turn", &[-400.0, 0.0]),
            &accept,
            &library,
            1280,
            720
        ));
        // A duration from half to twice the recorded one; a hotbar key exactly.
        let accept = accepted_for(&call("mine_iron_ore", &[7.0, 2.0]), &library, &empty);
        let ok = |c: SkillCall| agrees(&c, &accept, &library, 1280, 720);
        assert!(ok(call("mine_iron_ore", &[7.0, 1.0])) && ok(call("mine_iron_ore", &[7.0, 4.0])));
        assert!(!ok(call("mine_iron_ore", &[7.0, 0.5])));
        assert!(!ok(call("mine_iron_ore", &[6.0, 2.0])));
    }

    #[test]
    fn a_cases_file_round_trips_and_its_errors_name_the_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = CaseFile {
            path: PathBuf::new(),
            header: CaseHeader {
                game: "minecraft-web".into(),
                task: "log".into(),
                source: "s".into(),
            },
            cases: vec![Case {
                step: 3,
                perception: Perception::default(),
                accept: vec![Accepted {
                    skill: "mine_log".into(),
                    args: vec![None],
                }],
                recorded: call("mine_log", &[4.5]),
                reasoning: "in reach".into(),
                outcome: Some("done".into()),
            }],
        };
        let path = dir.path().join("c.jsonl");
        file.save(&path).expect("save");
        let back = CaseFile::load(&path).expect("load");
        assert_eq!(back.cases, file.cases);
        assert_eq!(back.header, file.header);
        let text = std::fs::read_to_string(&path).expect("read");
        let broken = text.replace("\"accept\":[{", "\"accept\":[],\"x\":[{");
        std::fs::write(&path, broken).expect("write");
        let err = CaseFile::load(&path).expect_err("broken");
        assert!(
            err.to_string()
                .starts_with(&format!("{}:2:", path.display())),
            "{err}"
        );
        let headless: String = text.lines().skip(1).collect::<Vec<_>>().join("\n");
        std::fs::write(&path, headless).expect("write");
        assert!(matches!(
            CaseFile::load(&path),
            Err(EvalError::NoHeader { .. })
        ));
    }

    #[test]
    fn an_accepted_call_checks_the_skill_and_every_range() {
        let a = Accepted {
            skill: "turn".into(),
            args: vec![Some([100.0, 200.0]), None],
        };
        assert!(a.accepts("turn", &[150.0, -999.0]));
        assert!(!a.accepts("turn", &[250.0, 0.0]));
        assert!(!a.accepts("move_forward", &[150.0, 0.0]));
        assert!(!a.accepts("turn", &[150.0]));
    }
}
