//! Minetest's ground truth: the client side of the probe mod (`tests/minetest/agent_probe/`): the player's
//! state as the game itself knows it, the game's events, and commands that set up tests and
//! labelling views. The mod and this client talk through three files in the world folder, so
//! the game needs no network API and the agent still only plays through the window.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error(
        "{0} has no state.json: is the game running with the agent_probe mod? (start it with tests/minetest/gameenv.sh start)"
    )]
    NotRunning(PathBuf),
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not the probe's state format: {reason}")]
    State { path: PathBuf, reason: String },
    #[error("the game did not answer command {op} within {secs:.1} s (is it still running?)")]
    Timeout { op: String, secs: f64 },
    #[error("the game refused command {op}: {reason}")]
    Refused { op: String, reason: String },
}

/// One stack of an inventory list (slots count from 1, as in the game).
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
pub struct Stack {
    #[serde(deserialize_with = "whole_number")]
    pub slot: usize,
    pub name: String,
    #[serde(deserialize_with = "whole_number")]
    pub count: usize,
    /// The item's groups (`tree`, `wood`, ...); absent from older probes and for items with none.
    #[serde(default)]
    pub groups: Option<Vec<String>>,
}

impl Stack {
    /// Whether this stack is `item`: an item name, or `group:NAME` for any item of that group
    /// (`group:tree` is every trunk: a pine log is a log).
    pub fn is(&self, item: &str) -> bool {
        match item.strip_prefix("group:") {
            Some(group) => self.groups.iter().flatten().any(|g| g == group),
            None => self.name == item,
        }
    }
}

/// Lua's JSON writer prints every number as a float (`12.0`).
fn whole_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let v = f64::deserialize(d)?;
    if v >= 0.0 && v.fract() == 0.0 && v < 1e9 {
        Ok(v as usize)
    } else {
        Err(serde::de::Error::custom(format!(
            "{v} is not a whole number"
        )))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Vec3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

impl Vec3 {
    pub fn as_array(&self) -> [f64; 3] {
        [self.x, self.y, self.z]
    }
}

/// `state.json`: what the game knows of the player (the mod writes it 5 times a second).
#[derive(Debug, Clone, Deserialize)]
pub struct PlayerState {
    pub pos: Vec3,
    pub eye: Vec3,
    pub yaw_deg: f64,
    pub pitch_deg: f64,
    pub wield_index: f64,
    /// The mod writes an empty list as `null`.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub main: Vec<Stack>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub craft: Vec<Stack>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub craftresult: Vec<Stack>,
    /// Game time in seconds when the state was written.
    pub t: f64,
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Stack>, D::Error> {
    Ok(Option::<Vec<Stack>>::deserialize(d)?.unwrap_or_default())
}

impl PlayerState {
    /// How many of `item` (a name or `group:NAME`, [`Stack::is`]) the main inventory holds.
    pub fn count(&self, item: &str) -> usize {
        self.main
            .iter()
            .filter(|s| s.is(item))
            .map(|s| s.count)
            .sum()
    }
}

/// A connection to the probe of a running game.
pub struct Probe {
    dir: PathBuf,
    /// Where reading events.jsonl goes on.
    events_offset: u64,
    next_id: u64,
    session: String,
}

impl Probe {
    /// The probe folder of a running game (`<world>/agent_probe`).
    pub fn open(dir: &Path) -> Result<Probe, ProbeError> {
        if !dir.join("state.json").is_file() {
            return Err(ProbeError::NotRunning(dir.to_path_buf()));
        }
        // Ids unique across clients of the same game (tests and the labeller may share one).
        let session = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        );
        Ok(Probe {
            dir: dir.to_path_buf(),
            events_offset: 0,
            next_id: 0,
            session,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn io(&self, file: &str) -> impl Fn(std::io::Error) -> ProbeError + '_ {
        let path = self.dir.join(file);
        move |source| ProbeError::Io {
            path: path.clone(),
            source,
        }
    }

    /// The player's state as last written by the game.
    pub fn state(&self) -> Result<PlayerState, ProbeError> {
        let path = self.dir.join("state.json");
        let text = std::fs::read_to_string(&path).map_err(self.io("state.json"))?;
        serde_json::from_str(&text).map_err(|e| ProbeError::State {
            path,
            reason: e.to_string(),
        })
    }

    /// A state written after now: the game has run at least one more server step.
    pub fn fresh_state(&self, timeout: Duration) -> Result<PlayerState, ProbeError> {
        let before = self.state()?.t;
        let start = Instant::now();
        loop {
            let s = self.state()?;
            if s.t > before {
                return Ok(s);
            }
            if start.elapsed() > timeout {
                return Err(ProbeError::Timeout {
                    op: "state".into(),
                    secs: timeout.as_secs_f64(),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Events written since the last call (or since the probe was opened).
    pub fn new_events(&mut self) -> Result<Vec<Value>, ProbeError> {
        let path = self.dir.join("events.jsonl");
        let mut file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io("events.jsonl")(e)),
        };
        file.seek(SeekFrom::Start(self.events_offset))
            .map_err(self.io("events.jsonl"))?;
        let mut reader = BufReader::new(file);
        let mut out = Vec::new();
        let mut line = String::new();
        loop {
            line.clear();
            let n = reader
                .read_line(&mut line)
                .map_err(self.io("events.jsonl"))?;
            // A line without its newline is still being written: read it next time.
            if n == 0 || !line.ends_with('\n') {
                break;
            }
            self.events_offset += n as u64;
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                out.push(v);
            }
        }
        Ok(out)
    }

    /// Skips every event written so far.
    pub fn skip_events(&mut self) -> Result<(), ProbeError> {
        self.new_events().map(|_| ())
    }

    /// Sends commands (JSON objects with "op") in one write and waits for the game's answers,
    /// which it gives in order; returns each one's `result` (null for commands without one).
    /// A refused command fails the whole batch, naming it.
    pub fn batch(
        &mut self,
        commands: Vec<Value>,
        timeout: Duration,
    ) -> Result<Vec<Value>, ProbeError> {
        let mut pending = Vec::new();
        let mut text = String::new();
        for mut command in commands {
            let op = command
                .get("op")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string();
            self.next_id += 1;
            let id = format!("{}-{}", self.session, self.next_id);
            command["id"] = Value::String(id.clone());
            text.push_str(&command.to_string());
            text.push('\n');
            pending.push((id, op));
        }
        // One write with O_APPEND: the mod never reads half a command.
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("cmd.jsonl"))
            .map_err(self.io("cmd.jsonl"))?;
        file.write_all(text.as_bytes())
            .map_err(self.io("cmd.jsonl"))?;
        drop(file);

        let start = Instant::now();
        let mut results: Vec<Option<Value>> = vec![None; pending.len()];
        while results.iter().any(Option::is_none) {
            for event in self.new_events()? {
                if event.get("ev").and_then(Value::as_str) != Some("cmd_done") {
                    continue;
                }
                let Some(i) = event
                    .get("id")
                    .and_then(Value::as_str)
                    .and_then(|id| pending.iter().position(|(p, _)| p == id))
                else {
                    continue;
                };
                if event.get("ok").and_then(Value::as_bool) != Some(true) {
                    return Err(ProbeError::Refused {
                        op: pending[i].1.clone(),
                        reason: event
                            .get("err")
                            .and_then(Value::as_str)
                            .unwrap_or("no reason given")
                            .to_string(),
                    });
                }
                results[i] = Some(event.get("result").cloned().unwrap_or(Value::Null));
            }
            if results.iter().any(Option::is_none) {
                if start.elapsed() > timeout {
                    let waiting = pending
                        .iter()
                        .zip(&results)
                        .filter(|(_, r)| r.is_none())
                        .map(|((_, op), _)| op.as_str())
                        .collect::<Vec<_>>()
                        .join(", ");
                    return Err(ProbeError::Timeout {
                        op: waiting,
                        secs: timeout.as_secs_f64(),
                    });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Ok(results.into_iter().map(Option::unwrap_or_default).collect())
    }

    /// One command with a 75 s time-out (map commands first wait up to 60 s in the game for
    /// their area to be generated); returns its `result`.
    pub fn send(&mut self, command: Value) -> Result<Value, ProbeError> {
        let mut r = self.batch(vec![command], Duration::from_secs(75))?;
        Ok(r.pop().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_mods_state_with_null_lists() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(
            dir.path().join("state.json"),
            r#"{"craft":null,"eye":{"x":-64.0,"y":9.97,"z":-192.0},"main":[{"slot":1.0,"name":"default:tree","count":3.0,"wear":0.0}],
               "pos":{"x":-64.0,"y":8.5,"z":-192.0},"yaw_deg":0.0,"pitch_deg":0.0,"wield_index":1.0,"t":12.5}"#,
        )
        .expect("write");
        let probe = Probe::open(dir.path()).expect("open");
        let s = probe.state().expect("state");
        assert_eq!(s.count("default:tree"), 3);
        // This stack names no groups (an older probe): a group counts nothing rather than guessing.
        assert_eq!(s.count("group:tree"), 0);
        assert!(s.craft.is_empty());
        assert_eq!(s.eye.y, 9.97);
    }

    #[test]
    fn a_group_counts_every_item_of_it() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(
            dir.path().join("state.json"),
            r#"{"eye":{"x":0.0,"y":0.0,"z":0.0},"pos":{"x":0.0,"y":0.0,"z":0.0},"yaw_deg":0.0,
               "pitch_deg":0.0,"wield_index":1.0,"t":1.0,"main":[
               {"slot":1.0,"name":"default:pine_tree","count":2.0,"groups":["choppy","flammable","tree"]},
               {"slot":2.0,"name":"default:tree","count":1.0,"groups":["choppy","tree"]},
               {"slot":3.0,"name":"default:pine_wood","count":4.0,"groups":["wood"]},
               {"slot":4.0,"name":"default:stick","count":5.0}]}"#,
        )
        .expect("write");
        let s = Probe::open(dir.path())
            .expect("open")
            .state()
            .expect("state");
        assert_eq!(s.count("group:tree"), 3);
        assert_eq!(s.count("group:wood"), 4);
        assert_eq!(s.count("default:tree"), 1);
        assert_eq!(s.count("group:stick"), 0);
    }

    #[test]
    fn a_missing_game_is_named() {
        let dir = tempfile::tempdir().expect("tmp");
        let err = Probe::open(dir.path()).err().expect("error");
        assert!(err.to_string().contains("gameenv.sh start"), "{err}");
    }

    #[test]
    fn half_written_event_lines_wait_for_their_newline() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(dir.path().join("state.json"), "{}").expect("write");
        let mut probe = Probe::open(dir.path()).expect("open");
        let events = dir.path().join("events.jsonl");
        std::fs::write(&events, "{\"ev\":\"dig\"}\n{\"ev\":\"pla").expect("write");
        assert_eq!(probe.new_events().expect("events").len(), 1);
        let mut f = OpenOptions::new().append(true).open(&events).expect("open");
        f.write_all(b"ce\"}\n").expect("append");
        let next = probe.new_events().expect("events");
        assert_eq!(next.len(), 1);
        assert_eq!(next[0]["ev"], "place");
    }
}
