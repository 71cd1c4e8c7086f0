//! How each test world answers the labeller ([`LabelGame`]): Minetest's probe mod and the
//! Minecraft client's test server. Kept apart from the two clients so that they know nothing of
//! the labeller.

use std::time::Duration;

use serde_json::{Value, json};

use super::autolabel::{
    AutoLabelConfig, AutoLabelError, GameState, InventoryPlan, LabelGame, Pose, ViewRequest,
};
use super::mcweb::{EYE_HEIGHT, McwebError, McwebServer, Slot};
use super::minetest::{Probe, ProbeError, Stack};

fn corner(c: [i64; 3]) -> serde_json::Value {
    json!({"x": c[0], "y": c[1], "z": c[2]})
}

impl LabelGame for Probe {
    fn set_inventory(&mut self, plan: &InventoryPlan) -> Result<(), AutoLabelError> {
        self.batch(
            vec![
                json!({"op": "set_list", "list": "main", "items": plan.main}),
                json!({"op": "set_list", "list": "craft", "items": plan.craft}),
            ],
            Duration::from_secs(10),
        )?;
        Ok(())
    }

    fn view_near(&mut self, view: &ViewRequest) -> Result<serde_json::Value, AutoLabelError> {
        let answer = self.batch(
            vec![json!({
                "op": "view_near", "names": view.names, "seed": view.seed,
                "center": {"x": view.center[0], "y": view.center[1], "z": view.center[2]},
                "radius": view.radius, "min_dist": view.min_dist,
                "max_dist": view.max_dist, "pitch_offset": view.pitch_offset,
            })],
            // view_near waits (up to 60 s in the probe) for the map around the view to be generated.
            Duration::from_secs(75),
        );
        match answer {
            Ok(a) => Ok(a
                .last()
                .and_then(|v| v.get("target"))
                .cloned()
                .unwrap_or_default()),
            Err(e @ ProbeError::Refused { .. }) => Err(AutoLabelError::NoView(e.to_string())),
            Err(e) => Err(e.into()),
        }
    }

    fn state(&mut self) -> Result<GameState, AutoLabelError> {
        let s = self.fresh_state(Duration::from_secs(5))?;
        Ok(GameState {
            pose: Pose {
                feet: s.pos.as_array(),
                eye: s.eye.as_array(),
                yaw_deg: s.yaw_deg,
                pitch_deg: s.pitch_deg,
            },
            main: s.main,
            craft: s.craft,
        })
    }

    fn craft_preview(&mut self) -> Result<Option<String>, AutoLabelError> {
        let p = self.send(json!({"op": "craft_preview"}))?;
        Ok(p.get("item")
            .and_then(|i| i.as_str())
            .map(|s| s.split(' ').next().unwrap_or("").to_string()))
    }

    fn scan(&mut self, config: &AutoLabelConfig) -> Result<serde_json::Value, AutoLabelError> {
        Ok(self.send(json!({
            "op": "scan", "names": config.world, "radius": config.radius,
            "radii": config.class_radius, "grid": config.grid,
        }))?)
    }

    fn excavate(&mut self, lo: [i64; 3], hi: [i64; 3]) -> Result<u64, AutoLabelError> {
        let answer = self.send(json!({"op": "excavate", "min": corner(lo), "max": corner(hi)}))?;
        Ok(answer.get("cleared").and_then(|c| c.as_u64()).unwrap_or(0))
    }
}

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
            url: self.url().to_string(),
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
