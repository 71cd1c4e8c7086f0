//! The ground truth of the Minecraft client's test server (tests/mcweb: flying-squid with a
//! harness): commands over its local HTTP port (`state`, `give`, `clear`, `tp`, `face_block`,
//! ...; tests/mcweb/server/README.md). Used where the game must tell what it drew (learning the
//! stack-count digits) and by the closed-loop tools; the agent itself never reads it.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::game::autolabel::{
    AutoLabelConfig, AutoLabelError, GameState, InventoryPlan, LabelGame, Pose, ViewRequest,
};
use crate::game::minetest::Stack;

#[derive(Debug, thiserror::Error)]
pub enum McwebError {
    #[error("mcweb server {url}: {reason}")]
    Http { url: String, reason: String },
    #[error("mcweb server {url}: command {command} failed: {message}")]
    Command {
        url: String,
        command: String,
        message: String,
    },
    #[error("mcweb server {url}: unexpected answer to {command}: {reason}")]
    Answer {
        url: String,
        command: String,
        reason: String,
    },
}

/// One inventory slot as the server reports it (window-0 numbers: 36-44 hotbar, 9-35 main).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Slot {
    pub slot: u32,
    pub name: String,
    pub count: u32,
}

/// Window-0 slots below this are the 2x2 crafting grid's result (0) and grid (1-4).
pub const FIRST_OWNED_SLOT: u32 = 5;

/// A position in blocks.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Position {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

/// The player's state: position (feet), look and inventory.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PlayerState {
    pub name: String,
    #[serde(default)]
    pub pos: Option<Position>,
    /// The client has not yet confirmed the last teleport (it still draws the old place).
    #[serde(default, rename = "teleportPending")]
    pub teleport_pending: bool,
    #[serde(default)]
    pub health: Option<f64>,
    #[serde(default)]
    pub inventory: Vec<Slot>,
    #[serde(default)]
    pub yaw: f64,
    #[serde(default)]
    pub pitch: f64,
}

impl PlayerState {
    /// How many items whose name ends with `suffix` the player owns (`_log`: any log): in the
    /// main rows, the hotbar, armour and off-hand, not in the crafting grid or its result slot
    /// (window slots 0-4), which the server lists too.
    pub fn count(&self, suffix: &str) -> u32 {
        self.inventory
            .iter()
            .filter(|s| s.slot >= FIRST_OWNED_SLOT && s.name.ends_with(suffix))
            .map(|s| s.count)
            .sum()
    }
}

/// An error with its causes (reqwest's own text is only "error sending request").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The server's command port, e.g. `127.0.0.1:25580`.
pub struct McwebServer {
    url: String,
    http: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

impl McwebServer {
    /// `address`: `HOST:PORT` (or a full `http://` URL) of the command port.
    pub fn connect(address: &str) -> Result<Self, McwebError> {
        let url = if address.starts_with("http://") {
            address.trim_end_matches('/').to_string()
        } else {
            format!("http://{address}")
        };
        let fail = |reason: String| McwebError::Http {
            url: url.clone(),
            reason,
        };
        // reqwest is built without a TLS provider of its own (plain HTTP here, but the client
        // builder asks for one).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            // face_block waits for terrain to be generated.
            .timeout(Duration::from_secs(90))
            // A fresh connection per command: node closes idle ones on its own schedule, and a
            // reused one it has closed fails the command ("connection closed before message
            // completed").
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let server = McwebServer { url, http, runtime };
        server.player()?;
        Ok(server)
    }

    /// Runs one command (`{"cmd": ...}`); an `{"error": ...}` answer is an error.
    pub fn command(&self, body: Value) -> Result<Value, McwebError> {
        let name = body["cmd"].as_str().unwrap_or("?").to_string();
        let answer: Value = self
            .runtime
            .block_on(async {
                let response = self.http.post(&self.url).json(&body).send().await?;
                response.json::<Value>().await
            })
            .map_err(|e| McwebError::Http {
                url: self.url.clone(),
                reason: error_chain(&e),
            })?;
        if let Some(message) = answer.get("error") {
            return Err(McwebError::Command {
                url: self.url.clone(),
                command: name,
                message: message.as_str().unwrap_or_default().to_string(),
            });
        }
        Ok(answer)
    }

    /// The first player's state.
    pub fn player(&self) -> Result<PlayerState, McwebError> {
        let state = self.command(json!({"cmd": "state"}))?;
        let bad = |reason: String| McwebError::Answer {
            url: self.url.clone(),
            command: "state".into(),
            reason,
        };
        let first = state["players"]
            .get(0)
            .cloned()
            .ok_or_else(|| bad("no player is online".into()))?;
        serde_json::from_value(first).map_err(|e| bad(e.to_string()))
    }

    /// Empties the player's inventory (and its crafting grid and cursor).
    pub fn clear(&self) -> Result<(), McwebError> {
        self.command(json!({"cmd": "clear"})).map(|_| ())
    }

    /// Puts `count` of `item` into window-0 slot `slot`.
    pub fn give(&self, item: &str, count: u32, slot: u32) -> Result<(), McwebError> {
        self.command(json!({"cmd": "give", "item": item, "count": count, "slot": slot}))
            .map(|_| ())
    }
}

/// The standing eye height of Minecraft 1.14 (the client's camera sits this far above the feet).
pub const EYE_HEIGHT: f64 = 1.62;

/// Window-0 slots of the player's inventory in the labeller's numbering: main slots from 1 with
/// the hotbar's 9 first (36-44), then the three main rows (9-35).
fn window_slot_of_main(index: usize) -> Option<usize> {
    match index {
        1..=9 => Some(35 + index),
        10..=36 => Some(index - 1),
        _ => None,
    }
}

fn main_index_of_window_slot(slot: u32) -> Option<usize> {
    match slot {
        36..=44 => Some(slot as usize - 35),
        9..=35 => Some(slot as usize + 1),
        _ => None,
    }
}

/// An answer of the server's sync barrier (`set_inventory`, `sync`): `synced: true`, or the
/// frame is dropped with `otherwise`.
fn synced(answer: &Value, otherwise: &str) -> Result<(), AutoLabelError> {
    if answer["synced"] == Value::Bool(true) {
        Ok(())
    } else {
        Err(AutoLabelError::NoView(otherwise.into()))
    }
}

/// The client's test server labels frames (`annotate --auto minecraft-web`): its inventory
/// commands, `face_block` for views and `scan` for what the eye sees.
impl LabelGame for McwebServer {
    fn set_inventory(&mut self, plan: &InventoryPlan) -> Result<(), AutoLabelError> {
        let mut slots = serde_json::Map::new();
        for (i, item) in plan.main.iter().enumerate() {
            if let (false, Some(slot)) = (item.is_empty(), window_slot_of_main(i + 1)) {
                slots.insert(slot.to_string(), Value::from(item.as_str()));
            }
        }
        // The 2x2 grid is window slots 1-4.
        for (i, item) in plan.craft.iter().take(4).enumerate() {
            if !item.is_empty() {
                slots.insert((i + 1).to_string(), Value::from(item.as_str()));
            }
        }
        let answer = self.command(json!({"cmd": "set_inventory", "slots": slots}))?;
        // A client that has not read the inventory in 5 s draws an old one.
        synced(
            &answer,
            "the client did not confirm the new inventory within 5 s",
        )
    }

    fn view_near(&mut self, view: &ViewRequest) -> Result<Value, AutoLabelError> {
        let answer = self.command(json!({
            "cmd": "face_block", "blocks": view.names, "seed": view.seed,
            "x": view.center[0], "y": view.center[1], "z": view.center[2],
            "radius": view.radius, "min_dist": view.min_dist, "max_dist": view.max_dist,
            // Far views are views too: the block need not be in reach.
            "reach": view.max_dist + 3.0,
            "yaw_jitter": 20, "pitch_jitter": 10, "pitch_offset": view.pitch_offset,
        }));
        let answer = match answer {
            Ok(a) => a,
            Err(e @ McwebError::Command { .. }) => {
                return Err(AutoLabelError::NoView(e.to_string()));
            }
            Err(e) => return Err(e.into()),
        };
        // Under load the client confirms a teleport late (it went on drawing, and reporting, the
        // old place): wait until it has confirmed and stands where it was put, sending it there
        // once more if need be.
        let spot = &answer["player"];
        let want = [&spot["x"], &spot["y"], &spot["z"]].map(|v| v.as_f64().unwrap_or(f64::NAN));
        for attempt in 0..2 {
            let start = std::time::Instant::now();
            while start.elapsed() < Duration::from_secs(3) {
                let state = self.player()?;
                if let (Some(p), false) = (state.pos, state.teleport_pending) {
                    let off = (p.x - want[0])
                        .abs()
                        .max((p.y - want[1]).abs())
                        .max((p.z - want[2]).abs());
                    if off < 0.2 {
                        return Ok(answer.get("block").cloned().unwrap_or_default());
                    }
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            if attempt == 0 {
                self.command(
                    json!({"cmd": "tp", "x": want[0], "y": want[1], "z": want[2],
                    "yaw": spot["yaw"], "pitch": spot["pitch"]}),
                )?;
            }
        }
        Err(AutoLabelError::NoView(format!(
            "the player did not stay at {want:?} where face_block put it"
        )))
    }

    fn state(&mut self) -> Result<GameState, AutoLabelError> {
        let p = self.player()?;
        let bad_state = |reason: &str| McwebError::Answer {
            url: self.url.clone(),
            command: "state".into(),
            reason: reason.into(),
        };
        // A dead player's screen is the death screen: no frame of it is a scene.
        if p.health.is_some_and(|h| h <= 0.0) {
            return Err(bad_state(
                "the player is dead (health 0): the client shows its death screen; restart the client",
            )
            .into());
        }
        let pos = p
            .pos
            .ok_or_else(|| bad_state("the player has no position yet"))?;
        let stack = |slot: usize, s: &Slot| Stack {
            slot,
            name: s.name.clone(),
            count: s.count as usize,
            groups: None,
        };
        let main = p
            .inventory
            .iter()
            .filter_map(|s| main_index_of_window_slot(s.slot).map(|i| stack(i, s)))
            .collect();
        let craft = p
            .inventory
            .iter()
            .filter(|s| (1..=4).contains(&s.slot))
            .map(|s| stack(s.slot as usize, s))
            .collect();
        Ok(GameState {
            pose: Pose {
                feet: [pos.x, pos.y, pos.z],
                eye: [pos.x, pos.y + EYE_HEIGHT, pos.z],
                yaw_deg: p.yaw,
                pitch_deg: p.pitch,
            },
            main,
            craft,
        })
    }

    fn craft_preview(&mut self) -> Result<Option<String>, AutoLabelError> {
        let p = self.player()?;
        Ok(p.inventory
            .iter()
            .find(|s| s.slot == 0)
            .map(|s| s.name.clone()))
    }

    fn scan(&mut self, config: &AutoLabelConfig) -> Result<Value, AutoLabelError> {
        Ok(self.command(json!({
            "cmd": "scan", "names": config.world, "radius": config.radius,
            "radii": config.class_radius, "grid": config.grid,
        }))?)
    }

    fn catch_up(&mut self) -> Result<(), AutoLabelError> {
        // The page handles key presses and packets on one event loop: once it has answered a
        // packet sent after the keys, it has seen the keys too.
        synced(
            &self.command(json!({"cmd": "sync"}))?,
            "the client did not catch up within 5 s",
        )
    }

    fn excavate(&mut self, lo: [i64; 3], hi: [i64; 3]) -> Result<u64, AutoLabelError> {
        let answer = self.command(json!({"cmd": "excavate", "min": lo, "max": hi}))?;
        Ok(answer.get("cleared").and_then(Value::as_u64).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_slots_map_to_window_slots_and_back() {
        assert_eq!(window_slot_of_main(1), Some(36));
        assert_eq!(window_slot_of_main(9), Some(44));
        assert_eq!(window_slot_of_main(10), Some(9));
        assert_eq!(window_slot_of_main(36), Some(35));
        assert_eq!(window_slot_of_main(37), None);
        for i in 1..=36 {
            let slot = window_slot_of_main(i).expect("a main slot") as u32;
            assert_eq!(main_index_of_window_slot(slot), Some(i));
        }
        assert_eq!(main_index_of_window_slot(4), None, "the grid is not main");
    }
}
