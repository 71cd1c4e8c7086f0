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

/// 1-based line of a byte offset in `text`.
pub fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
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

/// Deserializes TOML; an error comes back as (line, message).
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, (usize, String)> {
    toml::from_str(text).map_err(|e| {
        (
            e.span().map(|s| line_at(text, s.start)).unwrap_or(1),
            e.message().to_string(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_one_based_and_errors_carry_them() {
        assert_eq!(line_at("a\nb\nc", 0), 1);
        assert_eq!(line_at("a\nb\nc", 2), 2);
        assert_eq!(line_at("a\nb\nc", 99), 3);
        let err = from_str::<toml::Table>("a = 1\nb = \n").expect_err("bad");
        assert_eq!(err.0, 2);
    }

    #[test]
    fn header_lines_are_found_at_line_starts_only() {
        let text = "# see [planner] below\nx = 1\n[planner]\n  [planner.gather]\n";
        assert_eq!(header_line(text, "[planner]"), Some(3));
        assert_eq!(header_line(text, "[planner.gather]"), Some(4));
        assert_eq!(header_line(text, "[counts]"), None);
    }
}
