//! The ground truth of the Minecraft client's test server (tests/mcweb: flying-squid with a
//! harness): commands over its local HTTP port (`state`, `give`, `clear`, `tp`, `face_block`,
//! ...; tests/mcweb/server/README.md). Used where the game must tell what it drew (learning the
//! stack-count digits) and by the closed-loop tools; the agent itself never reads it.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

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
    /// The command port's URL, for errors.
    pub fn url(&self) -> &str {
        &self.url
    }

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
