//! Keys and buttons by name, and the game's key map (action name -> key), so skills say
//! `key = "inventory"` and a player who rebound the inventory edits one line of config.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Button {
    Left,
    Right,
    Middle,
}

impl fmt::Display for Button {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Button::Left => "left",
            Button::Right => "right",
            Button::Middle => "middle",
        })
    }
}

/// A physical key: a printable character or a named key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Key {
    Char(char),
    Space,
    Shift,
    Control,
    Alt,
    Escape,
    Tab,
    Enter,
    Backspace,
    Up,
    Down,
    Left,
    Right,
    F(u8),
}

const NAMED: [(&str, Key); 13] = [
    ("space", Key::Space),
    ("shift", Key::Shift),
    ("ctrl", Key::Control),
    ("alt", Key::Alt),
    ("escape", Key::Escape),
    ("tab", Key::Tab),
    ("enter", Key::Enter),
    ("backspace", Key::Backspace),
    ("up", Key::Up),
    ("down", Key::Down),
    ("left", Key::Left),
    ("right", Key::Right),
    ("esc", Key::Escape),
];

impl Key {
    /// `w`, `1`, `space`, `shift`, `f12` ... (case-insensitive).
    pub fn parse(text: &str) -> Option<Key> {
        let lower = text.trim().to_ascii_lowercase();
        let mut chars = lower.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            return (c.is_ascii_graphic()).then_some(Key::Char(c));
        }
        if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
            return (1..=24).contains(&n).then_some(Key::F(n));
        }
        NAMED.iter().find(|(n, _)| *n == lower).map(|(_, k)| *k)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Char(c) => write!(f, "{c}"),
            Key::F(n) => write!(f, "f{n}"),
            other => {
                let name = NAMED
                    .iter()
                    .find(|(_, k)| k == other)
                    .map_or("?", |(n, _)| n);
                f.write_str(name)
            }
        }
    }
}

impl TryFrom<String> for Key {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Key::parse(&s).ok_or_else(|| format!("unknown key \"{s}\""))
    }
}

impl From<Key> for String {
    fn from(k: Key) -> String {
        k.to_string()
    }
}

/// Game actions -> keys (`config/games/<game>.toml` `[keys]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct KeyMap(pub BTreeMap<String, String>);

impl KeyMap {
    /// An action name of the map, else a literal key name.
    pub fn resolve(&self, name: &str) -> Result<Key, String> {
        if let Some(bound) = self.0.get(name) {
            return Key::parse(bound)
                .ok_or_else(|| format!("action \"{name}\" is bound to unknown key \"{bound}\""));
        }
        Key::parse(name).ok_or_else(|| {
            format!(
                "\"{name}\" is neither an action of the key map ({}) nor a key name",
                self.0.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_print_round_trip() {
        for name in ["w", "1", "space", "shift", "f12", "escape"] {
            let k = Key::parse(name).expect(name);
            assert_eq!(k.to_string(), name);
        }
        assert_eq!(Key::parse("F3"), Some(Key::F(3)));
        assert_eq!(Key::parse("f25"), None);
        assert_eq!(Key::parse("hyper"), None);
    }

    #[test]
    fn key_map_actions_win_over_literal_names() {
        let map = KeyMap([("inventory".to_string(), "e".to_string())].into());
        assert_eq!(map.resolve("inventory"), Ok(Key::Char('e')));
        assert_eq!(map.resolve("q"), Ok(Key::Char('q')));
        let err = map.resolve("jetpack").expect_err("unknown");
        assert!(err.contains("inventory"), "{err}");
    }
}
