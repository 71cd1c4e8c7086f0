//! TOML data files with errors that point at a line: every loader of `config/`, `kg/` and case
//! files reports `file:line: reason`, and this is where the line comes from.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

/// A data file that cannot be read, or is wrong at a line.
#[derive(Debug, thiserror::Error)]
pub enum DataFileError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

impl DataFileError {
    pub fn at(path: &Path, line: usize, message: impl Into<String>) -> Self {
        DataFileError::Invalid {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

/// Reads a data file's text.
pub fn read(path: &Path) -> Result<String, DataFileError> {
    std::fs::read_to_string(path).map_err(|source| DataFileError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// How deep profiles may stack (`base` over `base`...): a cycle is an error, not a hang.
const MAX_PROFILE_DEPTH: usize = 8;

/// Reads a game profile file (`config/games/<game>.toml`). A profile that names a `base`
/// (`base = "minecraft"`: `minecraft.toml` in the same folder) is laid over it: its tables are
/// merged into the base's key by key, any other value replaces the base's (an array whole).
/// A profile without `base` is returned as written, so its errors keep their lines; a layered
/// one is returned merged (errors then count lines of the merged text, which starts with a
/// comment naming its files).
pub fn read_profile(path: &Path) -> Result<String, DataFileError> {
    let mut chain = Vec::new();
    let table = profile_table(path, &mut chain)?;
    if chain.len() == 1 {
        return read(path);
    }
    let names: Vec<String> = chain.iter().map(|p| p.display().to_string()).collect();
    let body = toml::to_string(&table)
        .map_err(|e| DataFileError::at(path, 1, format!("cannot merge the profile: {e}")))?;
    Ok(format!(
        "# merged profile: {}\n{body}",
        names.join(" over ")
    ))
}

/// The names of a profile and its bases, the profile first (`["minecraft-web", "minecraft"]`):
/// files named after a profile (skills, graph, tasks) are looked up along it. A file that
/// cannot be read ends the list; `read_profile` reports it.
pub fn profile_lineage(dir: &Path, name: &str) -> Vec<String> {
    let mut out = vec![name.to_string()];
    while out.len() < MAX_PROFILE_DEPTH {
        let path = dir.join(format!("{}.toml", out[out.len() - 1]));
        let base = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
            .and_then(|t| t.get("base").and_then(|b| b.as_str()).map(str::to_string));
        match base {
            Some(b) if !out.contains(&b) => out.push(b),
            _ => break,
        }
    }
    out
}

/// The profile at `path` with its bases merged in; `chain` collects the files, top first.
fn profile_table(path: &Path, chain: &mut Vec<PathBuf>) -> Result<toml::Table, DataFileError> {
    if chain.iter().any(|p| p == path) || chain.len() >= MAX_PROFILE_DEPTH {
        return Err(DataFileError::at(
            path,
            1,
            format!(
                "base: profiles stack in a cycle or deeper than {MAX_PROFILE_DEPTH} ({})",
                chain
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" -> ")
            ),
        ));
    }
    chain.push(path.to_path_buf());
    let text = read(path)?;
    let mut table: toml::Table = toml::from_str(&text).map_err(|e| {
        DataFileError::at(
            path,
            e.span().map_or(1, |s| line_at(&text, s.start)),
            e.message().to_string(),
        )
    })?;
    let Some(base) = table.remove("base") else {
        return Ok(table);
    };
    let line = text
        .lines()
        .position(|l| l.trim_start().starts_with("base"))
        .map_or(1, |i| i + 1);
    let name = base
        .as_str()
        .filter(|n| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
        .ok_or_else(|| {
            DataFileError::at(
                path,
                line,
                "base must name another profile of the same folder, e.g. base = \"minecraft\"",
            )
        })?;
    let base_path = path
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!("{name}.toml"));
    if !base_path.is_file() {
        return Err(DataFileError::at(
            path,
            line,
            format!("base: no profile {}", base_path.display()),
        ));
    }
    let mut merged = profile_table(&base_path, chain)?;
    merge_tables(&mut merged, table);
    Ok(merged)
}

/// Lays `over` onto `base`: tables merge key by key, anything else replaces.
fn merge_tables(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_tables(b, o),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// 1-based line of a byte offset in `text`. For many offsets in one text use [`LineIndex`]:
/// this counts from the text's start every time.
pub fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    scanned(end);
    text[..end].matches('\n').count() + 1
}

#[cfg(test)]
thread_local! {
    /// Bytes line-number lookups read on this thread: a loader that asks [`line_at`] per item
    /// reads the file once per item (quadratic), one that uses [`LineIndex`] about once.
    static SCANNED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts `bytes` read by a line-number lookup (tests only: the work-counting tests).
#[inline]
fn scanned(bytes: usize) {
    #[cfg(test)]
    SCANNED.with(|c| c.set(c.get() + bytes as u64));
    #[cfg(not(test))]
    let _ = bytes;
}

/// Bytes line-number lookups have read on this thread so far (tests only).
#[cfg(test)]
pub fn scanned_bytes() -> u64 {
    SCANNED.with(std::cell::Cell::get)
}

/// The line starts of one text, found in one pass: a line lookup is then a binary search. A
/// graph file's loader asked `line_at` for every node and edge, which made loading quadratic
/// (a 10k-node graph took 30 s).
pub struct LineIndex {
    /// Byte offset of every line's first byte; the first is 0.
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        scanned(text.len());
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { starts }
    }

    /// 1-based line of a byte offset (as [`line_at`]; past the end: the last line).
    pub fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }

    /// How many lines the text has (the index's size: one entry a line).
    pub fn lines(&self) -> usize {
        self.starts.len()
    }
}

/// 1-based line of a table header such as `[planner]`, written at the start of a line (a comment
/// that mentions the header elsewhere does not count); None when the file has no such line.
pub fn header_line(text: &str, header: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with(header) {
            return Some(line_at(text, offset));
        }
        offset += line.len();
    }
    None
}

/// A TOML error of `text` as (line, message).
fn located(text: &str, e: &toml::de::Error) -> (usize, String) {
    (
        e.span().map(|s| line_at(text, s.start)).unwrap_or(1),
        e.message().to_string(),
    )
}

/// Deserializes TOML; an error comes back as (line, message).
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, (usize, String)> {
    toml::from_str(text).map_err(|e| located(text, &e))
}

/// Deserializes one top-level table, `name`, of a TOML document, or `None` when the document
/// has none. It is read from the whole text, so an error in it comes back with its line in the
/// document as (line, message), like [`from_str`]; the other tables are skipped unread.
pub fn section_from_str<T: DeserializeOwned>(
    text: &str,
    name: &str,
) -> Result<Option<T>, (usize, String)> {
    let document = toml::Deserializer::parse(text).map_err(|e| located(text, &e))?;
    serde::Deserializer::deserialize_map(
        document,
        OneSection::<T> {
            name,
            found: std::marker::PhantomData,
        },
    )
    .map_err(|e| located(text, &e))
}

/// The names of a TOML document's top-level keys with the line each is first written on
/// (`[gui]`, `[gui.screens.x]` or `gui = ...`), in the document's order. The lines come from
/// the parser's spans, not from searching the text.
pub fn top_level_keys(text: &str) -> Result<Vec<(String, usize)>, (usize, String)> {
    let document = toml::de::DeTable::parse(text).map_err(|e| located(text, &e))?;
    let index = LineIndex::new(text);
    let mut keys: Vec<(String, usize)> = document
        .get_ref()
        .keys()
        .map(|k| (k.get_ref().to_string(), index.line(k.span().start)))
        .collect();
    keys.sort_by_key(|(_, line)| *line);
    Ok(keys)
}

/// A map visitor that deserializes one key's value as `T` and skips the others.
struct OneSection<'n, T> {
    name: &'n str,
    found: std::marker::PhantomData<T>,
}

impl<'de, T: DeserializeOwned> serde::de::Visitor<'de> for OneSection<'_, T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a TOML document")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Option<T>, A::Error> {
        let mut out = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == self.name {
                out = Some(map.next_value::<T>()?);
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_index_agrees_with_line_at_everywhere() {
        for text in [
            "",
            "a",
            "a\n",
            "a\nb\nc",
            "\n\n",
            "x = 1\n\n[y]\nz = \"\u{e9}\"\n",
        ] {
            let index = LineIndex::new(text);
            // Spans start on characters (line_at slices the text there).
            let starts =
                (0..=text.len() + 2).filter(|&o| o > text.len() || text.is_char_boundary(o));
            for offset in starts {
                assert_eq!(
                    index.line(offset),
                    line_at(text, offset),
                    "{text:?} at {offset}"
                );
            }
            assert_eq!(index.lines(), text.matches('\n').count() + 1);
        }
    }

    #[test]
    fn lines_are_one_based_and_errors_carry_them() {
        assert_eq!(line_at("a\nb\nc", 0), 1);
        assert_eq!(line_at("a\nb\nc", 2), 2);
        assert_eq!(line_at("a\nb\nc", 99), 3);
        let err = from_str::<toml::Table>("a = 1\nb = \n").expect_err("bad");
        assert_eq!(err.0, 2);
    }

    #[test]
    fn top_level_keys_come_in_document_order_with_the_line_first_naming_them() {
        let text = "x = 1\n\n[b.c]\ny = 2\n[a]\nz = 3\n[b.d]\n";
        assert_eq!(
            top_level_keys(text).expect("toml"),
            [("x".into(), 1), ("b".into(), 3), ("a".into(), 5)]
        );
        let (line, _) = top_level_keys("a = 1\n[b\n").expect_err("broken header");
        assert_eq!(line, 2);
    }

    #[test]
    fn header_lines_are_found_at_line_starts_only() {
        let text = "# see [planner] below\nx = 1\n[planner]\n  [planner.gather]\n";
        assert_eq!(header_line(text, "[planner]"), Some(3));
        assert_eq!(header_line(text, "[planner.gather]"), Some(4));
        assert_eq!(header_line(text, "[counts]"), None);
    }

    #[test]
    fn a_profile_with_a_base_is_merged_over_it_and_one_without_is_read_as_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().join("game.toml");
        std::fs::write(
            &base,
            "# vanilla\n[camera]\nfov_deg = 70.0\nstep = 1\n[keys]\nforward = \"w\"\n[list]\nv = [1, 2]\n",
        )
        .expect("write");
        let over = dir.path().join("game-web.toml");
        std::fs::write(
            &over,
            "base = \"game\"\n[camera]\nfov_deg = 75.0\n[list]\nv = [3]\n[extra]\na = 1\n",
        )
        .expect("write");
        assert_eq!(
            read_profile(&base).expect("base"),
            std::fs::read_to_string(&base).expect("read")
        );
        let merged = read_profile(&over).expect("merged");
        assert!(merged.starts_with("# merged profile: "), "{merged}");
        let t: toml::Table = toml::from_str(&merged).expect("toml");
        assert_eq!(t["camera"]["fov_deg"].as_float(), Some(75.0));
        assert_eq!(t["camera"]["step"].as_integer(), Some(1));
        assert_eq!(t["keys"]["forward"].as_str(), Some("w"));
        assert_eq!(t["list"]["v"].as_array().map(Vec::len), Some(1));
        assert_eq!(t["extra"]["a"].as_integer(), Some(1));
        assert!(!t.contains_key("base"));
    }

    #[test]
    fn a_missing_base_or_a_cycle_is_an_error_at_the_base_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a.toml");
        std::fs::write(&a, "# a\nbase = \"nowhere\"\n").expect("write");
        let e = read_profile(&a).expect_err("missing base").to_string();
        assert!(e.contains("a.toml:2:") && e.contains("nowhere.toml"), "{e}");
        std::fs::write(&a, "base = \"b\"\n").expect("write");
        std::fs::write(dir.path().join("b.toml"), "base = \"a\"\n").expect("write");
        let e = read_profile(&a).expect_err("cycle").to_string();
        assert!(e.contains("cycle"), "{e}");
        std::fs::write(&a, "base = \"../x\"\n").expect("write");
        let e = read_profile(&a).expect_err("path").to_string();
        assert!(e.contains("same folder"), "{e}");
    }
}
