//! Settings: `config/default.toml` (compiled in) < a user file < `VISTAWISE_*` env < CLI `--set`.
//!
//! Loading is all-or-nothing: either every layer parses and validates and a complete [`Config`]
//! comes back, or an error names the layer (file and line, env var, or flag), the key and why.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub(crate) mod validate;

use crate::profile_file::ProfileFile;
use crate::toml_lines::DataFileError;

// Each section belongs to the subsystem it configures; they are gathered here, where the layers
// are merged and checked.
pub use crate::agent::settings::{SafetyConfig, SessionConfig};
pub use crate::embedding::settings::EmbeddingConfig;
pub use crate::game::settings::{GameConfig, GuiScale};
pub use crate::knowledge::settings::PoolingConfig;
pub use crate::longterm::settings::MemoryConfig;
pub use crate::perception::settings::{DetectorConfig, OnnxRuntimeConfig};
pub use crate::policy::settings::{Constrain, LlmConfig, OutputMode};

/// The built-in defaults; the same text as `config/default.toml` in the repository.
pub const DEFAULT_TOML: &str = include_str!("../../config/default.toml");

/// Environment variables `VISTAWISE_<SECTION>__<KEY>` override single keys.
pub const ENV_PREFIX: &str = "VISTAWISE_";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub game: GameConfig,
    pub detector: DetectorConfig,
    pub onnxruntime: OnnxRuntimeConfig,
    pub llm: LlmConfig,
    pub memory: MemoryConfig,
    pub pooling: PoolingConfig,
    pub embedding: EmbeddingConfig,
    pub safety: SafetyConfig,
    pub session: SessionConfig,
}

/// Section defaults come from the compiled-in `config/default.toml`, so that file stays the one
/// place where a default is written. `builtin()` parses it strictly (a missing key there is a bug
/// caught by the unit tests, never by users).
macro_rules! default_from_builtin {
    ($($ty:ident => $field:ident),* $(,)?) => {$(
        impl Default for $ty {
            fn default() -> Self {
                Config::builtin().$field
            }
        }
    )*};
}
default_from_builtin!(
    GameConfig => game,
    DetectorConfig => detector,
    OnnxRuntimeConfig => onnxruntime,
    LlmConfig => llm,
    MemoryConfig => memory,
    PoolingConfig => pooling,
    EmbeddingConfig => embedding,
    SafetyConfig => safety,
    SessionConfig => session,
);

/// Where a key's effective value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Builtin,
    File { path: PathBuf, line: Option<usize> },
    Env(String),
    Flag(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Builtin => write!(f, "built-in default"),
            Origin::File {
                path,
                line: Some(line),
            } => write!(f, "{}:{line}", path.display()),
            Origin::File { path, line: None } => write!(f, "{}", path.display()),
            Origin::Env(var) => write!(f, "environment variable {var}"),
            Origin::Flag(flag) => write!(f, "command-line flag {flag}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Parse {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
    #[error(
        "{origin}: there is no config key `{key}` (keys look like `detector.confidence`; see `vistawise config show`)"
    )]
    UnknownKey { origin: Origin, key: String },
    #[error("{origin}: bad value for `{key}`: {reason}")]
    Invalid {
        origin: Origin,
        key: String,
        reason: String,
    },
}

impl ConfigError {
    /// A data file's error as the config's: unreadable or wrong at a line.
    fn from_data_file(e: DataFileError) -> Self {
        match e {
            DataFileError::Io { path, source } => ConfigError::Read { path, source },
            DataFileError::Invalid {
                path,
                line,
                message,
            } => ConfigError::Parse {
                path,
                line: Some(line),
                message,
            },
        }
    }
}

/// One key override from the environment or the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    pub key: String,
    pub value: String,
    pub origin: Origin,
}

impl Override {
    /// Parses `section.key=value` as given to `--set`.
    pub fn parse_assignment(text: &str) -> Result<Self, ConfigError> {
        let origin = Origin::Flag(format!("--set {text}"));
        match text.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => Ok(Override {
                key: key.trim().to_string(),
                value: value.to_string(),
                origin,
            }),
            _ => Err(ConfigError::Invalid {
                origin,
                key: text.to_string(),
                reason: "expected section.key=value".into(),
            }),
        }
    }

    /// Collects `VISTAWISE_<SECTION>__<KEY>` variables (others, like VISTAWISE_CONFIG, are not keys).
    pub fn from_env(vars: impl IntoIterator<Item = (String, String)>) -> Vec<Self> {
        let mut out: Vec<Self> = vars
            .into_iter()
            .filter_map(|(name, value)| {
                let rest = name.strip_prefix(ENV_PREFIX)?;
                let (section, key) = rest.split_once("__")?;
                Some(Override {
                    key: format!("{}.{}", section.to_lowercase(), key.to_lowercase()),
                    value,
                    origin: Origin::Env(name),
                })
            })
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        out
    }
}

/// The effective configuration and where each key came from.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: Config,
    pub origins: BTreeMap<String, Origin>,
}

impl Config {
    /// The compiled-in defaults.
    pub fn builtin() -> Config {
        // No section has serde defaults (they would call `Default`, which calls this), so every
        // key must be in the text: the unit tests read it.
        toml::from_str(DEFAULT_TOML)
            .unwrap_or_else(|e| panic!("built-in config/default.toml is invalid: {e}"))
    }

    /// Loads the layers: built-in, then `file` (if any), then `overrides` in order.
    pub fn load(file: Option<&Path>, overrides: &[Override]) -> Result<LoadedConfig, ConfigError> {
        let builtin = Config::builtin();
        let mut origins: BTreeMap<String, Origin> = flatten(&to_table(&builtin))
            .into_keys()
            .map(|k| (k, Origin::Builtin))
            .collect();

        let mut config = match file {
            None => builtin,
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })?;
                let parse_error = |e: toml::de::Error| ConfigError::Parse {
                    path: path.to_path_buf(),
                    line: e.span().map(|s| crate::toml_lines::line_at(&text, s.start)),
                    message: e.message().to_string(),
                };
                let table: toml::Table = toml::from_str(&text).map_err(parse_error)?;
                let config = lay_over(&builtin, &table, &text, path)?;
                for key in flatten(&table).into_keys() {
                    let line = locate_key(&text, &key);
                    origins.insert(
                        key,
                        Origin::File {
                            path: path.to_path_buf(),
                            line,
                        },
                    );
                }
                config
            }
        };

        for ov in overrides {
            config = apply_override(&config, ov)?;
            origins.insert(ov.key.clone(), ov.origin.clone());
        }

        if let Err((key, reason)) = config.validate() {
            let origin = origins.get(&key).cloned().unwrap_or(Origin::Builtin);
            return Err(ConfigError::Invalid {
                origin,
                key,
                reason,
            });
        }
        Ok(LoadedConfig { config, origins })
    }

    /// Range and consistency checks serde cannot express, section by section. Returns the first
    /// offending key and why.
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.game.validate()?;
        self.detector.validate()?;
        self.llm.validate()?;
        self.memory.validate()?;
        self.pooling.validate()?;
        self.embedding.validate()?;
        self.safety.validate()?;
        self.session.validate()?;
        Ok(())
    }

    /// The effective config as TOML with secrets masked: the API key is never part of the config
    /// (only the name of its variable), and credentials embedded in the URL are hidden.
    pub fn to_masked_toml(&self) -> String {
        let mut shown = self.clone();
        shown.llm.base_url = mask_url_credentials(&shown.llm.base_url);
        toml::to_string_pretty(&shown).unwrap_or_else(|e| format!("# cannot render config: {e}\n"))
    }
}

/// `path` under `root` when it is relative; as given where the root is the working directory
/// (so paths print as the user wrote them).
pub fn under_root(root: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() || root == Path::new(".") || path.as_os_str().is_empty() {
        path.to_path_buf()
    } else {
        root.join(path)
    }
}

impl Config {
    /// The config with its relative data paths (the detector, the prompt template, the price
    /// table, the sentence encoder, the ONNX Runtime library) read from the project `root`.
    /// Outputs (`session.dir`, `memory.db_dir`) stay where the command runs.
    pub fn rooted(mut self, root: &Path) -> Config {
        for path in [
            &mut self.detector.model,
            &mut self.llm.prompt_template,
            &mut self.llm.prices,
            &mut self.embedding.model_dir,
            &mut self.onnxruntime.library,
        ] {
            *path = under_root(root, path);
        }
        self
    }
}

/// The `[settings]` of a game profile file (`config/games/<game>.toml`): config keys the game
/// needs (its window title, detector, reach thresholds), as overrides that name their line, plus
/// `game.profile` itself. `vistawise --game GAME` lays them over the config file.
pub fn game_settings(path: &Path, game: &str) -> Result<Vec<Override>, ConfigError> {
    let file = ProfileFile::read(path).map_err(ConfigError::from_data_file)?;
    let mut out = vec![Override {
        key: "game.profile".into(),
        value: game.to_string(),
        origin: Origin::Flag(format!("--game {game}")),
    }];
    let Some(settings) = file
        .section::<toml::Table>("settings")
        .map_err(ConfigError::from_data_file)?
    else {
        return Ok(out);
    };
    for (key, value) in &settings {
        let line = file
            .text
            .find(&format!("\"{key}\""))
            .map(|o| crate::toml_lines::line_at(&file.text, o));
        out.push(Override {
            key: key.clone(),
            value: match value {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            },
            origin: Origin::File {
                path: path.to_path_buf(),
                line,
            },
        });
    }
    Ok(out)
}

/// Applies one override, coercing its text to the type the key already has.
fn apply_override(config: &Config, ov: &Override) -> Result<Config, ConfigError> {
    let table = to_table(config);
    let invalid = |reason: String| ConfigError::Invalid {
        origin: ov.origin.clone(),
        key: ov.key.clone(),
        reason,
    };
    let unknown = || ConfigError::UnknownKey {
        origin: ov.origin.clone(),
        key: ov.key.clone(),
    };
    let (section, key) = ov.key.split_once('.').ok_or_else(unknown)?;
    let current = table
        .get(section)
        .and_then(|s| s.as_table())
        .and_then(|s| s.get(key))
        .ok_or_else(unknown)?;
    let text = ov.value.trim();
    // Candidate readings of the text, in order of preference for the key's current type. Keys
    // that take a number or a word (game.gui_scale) get both readings; serde picks.
    let as_int = text.parse::<i64>().ok().map(toml::Value::Integer);
    let as_word = toml::Value::String(ov.value.clone());
    let candidates: Vec<toml::Value> = match current {
        toml::Value::String(_) => as_int.into_iter().chain([as_word]).collect(),
        toml::Value::Integer(_) => as_int.into_iter().chain([as_word]).collect(),
        toml::Value::Float(_) => {
            vec![toml::Value::Float(text.parse::<f64>().map_err(|_| {
                invalid(format!("expected a number, got \"{text}\""))
            })?)]
        }
        // Lists of words: "a,b" (an empty text is the empty list).
        toml::Value::Array(_) => vec![toml::Value::Array(
            text.split(',')
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .map(|w| toml::Value::String(w.to_string()))
                .collect(),
        )],
        toml::Value::Boolean(_) => vec![toml::Value::Boolean(
            text.parse::<bool>()
                .map_err(|_| invalid(format!("expected true or false, got \"{text}\"")))?,
        )],
        other => {
            return Err(invalid(format!(
                "cannot override a {} from text",
                other.type_str()
            )));
        }
    };
    let mut first_error = None;
    for candidate in candidates {
        let mut attempt = table.clone();
        if let Some(section_table) = attempt.get_mut(section).and_then(|s| s.as_table_mut()) {
            section_table.insert(key.to_string(), candidate);
        }
        match toml::Value::Table(attempt).try_into::<Config>() {
            Ok(config) => return Ok(config),
            Err(e) => {
                first_error.get_or_insert_with(|| e.message().to_string());
            }
        }
    }
    Err(invalid(first_error.unwrap_or_default()))
}

/// `file`'s keys laid over `base`, then read once, strictly, as a whole config. Errors name the
/// file's line: an unknown section or key is found against the base's keys, and a wrong value
/// by laying the file's keys over the base one at a time.
fn lay_over(
    base: &Config,
    file: &toml::Table,
    text: &str,
    path: &Path,
) -> Result<Config, ConfigError> {
    let error = |key: &str, message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        line: locate_key(text, key).or_else(|| locate_section(text, key)),
        message,
    };
    let mut merged = to_table(base);
    let mut laid = Vec::new();
    for (section, value) in file {
        let Some(into) = merged.get_mut(section).and_then(toml::Value::as_table_mut) else {
            return Err(error(section, format!("unknown section `{section}`")));
        };
        let Some(keys) = value.as_table() else {
            return Err(error(section, format!("`{section}` must be a [section]")));
        };
        for (key, v) in keys {
            if !into.contains_key(key) {
                return Err(error(
                    &format!("{section}.{key}"),
                    format!("unknown field `{key}` in [{section}]"),
                ));
            }
            into.insert(key.clone(), v.clone());
            laid.push((section.clone(), key.clone(), v.clone()));
        }
    }
    Config::deserialize(merged).map_err(|whole| {
        // The first key that alone breaks the base is the one to name.
        let culprit = laid.iter().find_map(|(section, key, v)| {
            let mut one = to_table(base);
            if let Some(t) = one.get_mut(section).and_then(toml::Value::as_table_mut) {
                t.insert(key.clone(), v.clone());
            }
            Config::deserialize(one).err().map(|e| {
                error(
                    &format!("{section}.{key}"),
                    format!("{section}.{key}: {}", e.message()),
                )
            })
        });
        culprit.unwrap_or_else(|| ConfigError::Parse {
            path: path.to_path_buf(),
            line: None,
            message: whole.message().to_string(),
        })
    })
}

/// The line of `[section]` in `text`.
fn locate_section(text: &str, section: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            l.trim()
                .strip_prefix('[')
                .and_then(|l| l.strip_suffix(']'))
                .is_some_and(|name| name.trim() == section)
        })
        .map(|i| i + 1)
}

fn to_table(config: &Config) -> toml::Table {
    // Serialising plain structs of strings and numbers cannot fail.
    toml::Table::try_from(config).unwrap_or_default()
}

/// `section.key -> value` for every leaf.
fn flatten(table: &toml::Table) -> BTreeMap<String, toml::Value> {
    let mut out = BTreeMap::new();
    for (section, value) in table {
        match value.as_table() {
            Some(inner) => {
                for (key, v) in inner {
                    out.insert(format!("{section}.{key}"), v.clone());
                }
            }
            None => {
                out.insert(section.clone(), value.clone());
            }
        }
    }
    out
}

/// Line where `section.key` is assigned in a TOML text (tables written as `[section]` blocks).
fn locate_key(text: &str, dotted: &str) -> Option<usize> {
    let (section, key) = dotted.split_once('.')?;
    let mut current = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.trim().to_string();
            continue;
        }
        if let Some((lhs, _)) = line.split_once('=') {
            let lhs = lhs.trim().trim_matches('"');
            if (current == section && lhs == key) || lhs == dotted {
                return Some(i + 1);
            }
        }
    }
    None
}

/// Hides `user:password@` in a URL.
pub fn mask_url_credentials(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        let authority_end = rest.find('/').unwrap_or(rest.len());
        if let Some(at) = rest[..authority_end].rfind('@') {
            return format!("{scheme}://****@{}", &rest[at + 1..]);
        }
    }
    url.to_string()
}

/// Shows whether a secret is present without revealing it.
pub fn describe_secret(value: Option<&str>) -> &'static str {
    match value {
        Some(v) if !v.is_empty() => "set (hidden)",
        _ => "not set",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write_temp(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::Builder::new()
            .suffix(".toml")
            .tempfile()
            .expect("temp file");
        f.write_all(text.as_bytes()).expect("write");
        f
    }

    #[test]
    fn builtin_defaults_parse_and_validate() {
        let c = Config::builtin();
        assert_eq!(c.detector.k_w, 110.0);
        assert_eq!(c.detector.k_h, 275.0);
        assert_eq!(c.game.gui_scale, GuiScale::Auto);
        assert!(c.validate().is_ok());
    }

    #[test]
    fn every_builtin_key_is_written_in_default_toml() {
        let written: toml::Table = toml::from_str(DEFAULT_TOML).expect("parse");
        let from_struct = flatten(&to_table(&Config::builtin()));
        assert_eq!(
            flatten(&written).keys().collect::<Vec<_>>(),
            from_struct.keys().collect::<Vec<_>>()
        );
    }

    #[test]
    fn partial_file_layers_over_defaults() {
        let f = write_temp("[detector]\nconfidence = 0.5\n");
        let loaded = Config::load(Some(f.path()), &[]).expect("load");
        assert_eq!(loaded.config.detector.confidence, 0.5);
        assert_eq!(loaded.config.detector.iou, 0.45);
        assert_eq!(
            loaded.origins["detector.confidence"],
            Origin::File {
                path: f.path().to_path_buf(),
                line: Some(2)
            }
        );
        assert_eq!(loaded.origins["detector.iou"], Origin::Builtin);
    }

    #[test]
    fn unknown_key_in_file_names_file_and_line() {
        let f = write_temp("[detector]\nconfidence = 0.5\nconfidense = 0.4\n");
        let err = Config::load(Some(f.path()), &[]).expect_err("must fail");
        let text = err.to_string();
        assert!(text.contains(&f.path().display().to_string()), "{text}");
        assert!(text.contains(":3"), "{text}");
        assert!(text.contains("confidense"), "{text}");
    }

    #[test]
    fn wrong_type_in_file_names_line() {
        let f = write_temp("[llm]\nmodel = \"x\"\ntimeout_secs = \"soon\"\n");
        let err = Config::load(Some(f.path()), &[]).expect_err("must fail");
        assert!(
            matches!(err, ConfigError::Parse { line: Some(3), .. }),
            "{err}"
        );
    }

    #[test]
    fn out_of_range_value_names_key_and_origin() {
        let f = write_temp("[detector]\n\nconfidence = 1.5\n");
        let err = Config::load(Some(f.path()), &[]).expect_err("must fail");
        match err {
            ConfigError::Invalid { origin, key, .. } => {
                assert_eq!(key, "detector.confidence");
                assert_eq!(
                    origin,
                    Origin::File {
                        path: f.path().to_path_buf(),
                        line: Some(3)
                    }
                );
            }
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn env_overrides_beat_file_and_are_typed() {
        let f = write_temp("[detector]\nconfidence = 0.5\n");
        let env = Override::from_env([
            (
                "VISTAWISE_DETECTOR__CONFIDENCE".to_string(),
                "0.6".to_string(),
            ),
            ("VISTAWISE_GAME__GUI_SCALE".to_string(), "3".to_string()),
            ("VISTAWISE_CONFIG".to_string(), "ignored.toml".to_string()),
            ("HOME".to_string(), "/root".to_string()),
        ]);
        assert_eq!(env.len(), 2);
        let loaded = Config::load(Some(f.path()), &env).expect("load");
        assert_eq!(loaded.config.detector.confidence, 0.6);
        assert_eq!(loaded.config.game.gui_scale, GuiScale::Fixed(3));
        assert_eq!(
            loaded.origins["detector.confidence"],
            Origin::Env("VISTAWISE_DETECTOR__CONFIDENCE".into())
        );
    }

    #[test]
    fn flag_override_after_env_wins() {
        let mut ovs = Override::from_env([(
            "VISTAWISE_MEMORY__RECALL_STEPS".to_string(),
            "7".to_string(),
        )]);
        ovs.push(Override::parse_assignment("memory.recall_steps=9").expect("parse"));
        let loaded = Config::load(None, &ovs).expect("load");
        assert_eq!(loaded.config.memory.recall_steps, 9);
    }

    #[test]
    fn bad_override_is_reported_with_its_origin_and_nothing_applies() {
        let ovs = vec![
            Override::parse_assignment("detector.iou=0.3").expect("parse"),
            Override::parse_assignment("detector.threads=many").expect("parse"),
        ];
        let err = Config::load(None, &ovs).expect_err("must fail");
        let text = err.to_string();
        assert!(text.contains("--set detector.threads=many"), "{text}");
        assert!(text.contains("detector.threads"), "{text}");
    }

    #[test]
    fn unknown_env_key_is_an_error() {
        let ovs = Override::from_env([("VISTAWISE_DETECTOR__CONFIDENSE".into(), "0.3".into())]);
        let err = Config::load(None, &ovs).expect_err("must fail");
        assert!(matches!(err, ConfigError::UnknownKey { .. }), "{err}");
        assert!(err.to_string().contains("VISTAWISE_DETECTOR__CONFIDENSE"));
    }

    #[test]
    fn gui_scale_accepts_auto_and_rejects_words() {
        let ok = Config::load(
            None,
            &[Override::parse_assignment("game.gui_scale=auto").expect("parse")],
        )
        .expect("load");
        assert_eq!(ok.config.game.gui_scale, GuiScale::Auto);
        assert!(
            Config::load(
                None,
                &[Override::parse_assignment("game.gui_scale=huge").expect("parse")]
            )
            .is_err()
        );
        assert!(
            Config::load(
                None,
                &[Override::parse_assignment("game.gui_scale=9").expect("parse")]
            )
            .is_err()
        );
    }

    #[test]
    fn api_key_env_must_be_a_name_not_a_key() {
        let err = Config::load(
            None,
            &[Override::parse_assignment("llm.api_key_env=sk-abc.def-123").expect("parse")],
        )
        .expect_err("must fail");
        assert!(err.to_string().contains("llm.api_key_env"));
    }

    #[test]
    fn masked_toml_hides_url_credentials() {
        let mut c = Config::builtin();
        c.llm.base_url = "https://user:s3cret@llm.example/v1".into();
        let shown = c.to_masked_toml();
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("https://****@llm.example/v1"), "{shown}");
        assert_eq!(describe_secret(Some("sk-123")), "set (hidden)");
        assert_eq!(describe_secret(None), "not set");
    }
}
