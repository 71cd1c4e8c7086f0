//! What an Ultralytics ONNX export says about itself in its metadata.
//!
//! Ultralytics writes Python literals into the ONNX `metadata_props`: `names` is a dict repr
//! (`{0: 'trunk', 1: "log_icon"}`), `imgsz` a list repr (`[384, 640]`), `stride` an int. No crate
//! reads Python reprs, and the grammar needed is tiny, so it is parsed here.

use std::collections::HashMap;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MetadataError {
    #[error("model metadata has no `{0}` entry (is this an Ultralytics YOLO export?)")]
    Missing(&'static str),
    #[error("model metadata `{key}` is malformed: {reason} (value: {value})")]
    Malformed {
        key: &'static str,
        value: String,
        reason: String,
    },
}

/// Parses a Python dict repr of `int -> str` into names indexed by id.
pub fn parse_names(value: &str) -> Result<Vec<String>, MetadataError> {
    let bad = |reason: &str| MetadataError::Malformed {
        key: "names",
        value: value.chars().take(200).collect(),
        reason: reason.to_string(),
    };
    let body = value
        .trim()
        .strip_prefix('{')
        .and_then(|v| v.strip_suffix('}'))
        .ok_or_else(|| bad("expected a {id: 'name', ...} dict"))?;
    let mut by_id: HashMap<usize, String> = HashMap::new();
    let mut rest = body.trim_start();
    while !rest.is_empty() {
        let colon = rest.find(':').ok_or_else(|| bad("missing ':'"))?;
        let id: usize = rest[..colon]
            .trim()
            .parse()
            .map_err(|_| bad("class ids must be integers"))?;
        let after = rest[colon + 1..].trim_start();
        let (name, remainder) = parse_py_string(after).ok_or_else(|| bad("bad quoted name"))?;
        if by_id.insert(id, name).is_some() {
            return Err(bad(&format!("class id {id} appears twice")));
        }
        rest = remainder.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    let count = by_id.len();
    (0..count)
        .map(|i| {
            by_id
                .remove(&i)
                .ok_or_else(|| bad(&format!("class ids must be 0..{count} without gaps")))
        })
        .collect()
}

/// Reads one single- or double-quoted Python string literal; returns it and the text after it.
fn parse_py_string(text: &str) -> Option<(String, &str)> {
    let quote = text.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let mut out = String::new();
    let mut chars = text[1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                let (_, escaped) = chars.next()?;
                out.push(match escaped {
                    'n' => '\n',
                    't' => '\t',
                    other => other,
                });
            }
            c if c == quote => return Some((out, &text[1 + i + 1..])),
            c => out.push(c),
        }
    }
    None
}

/// Parses `[h, w]` (or a single `n` meaning square) into (height, width).
pub fn parse_imgsz(value: &str) -> Result<(usize, usize), MetadataError> {
    let bad = |reason: &str| MetadataError::Malformed {
        key: "imgsz",
        value: value.to_string(),
        reason: reason.to_string(),
    };
    let inner = value
        .trim()
        .trim_start_matches(['[', '('])
        .trim_end_matches([']', ')']);
    let nums: Vec<usize> = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>().map_err(|_| bad("expected integers")))
        .collect::<Result<_, _>>()?;
    match nums.as_slice() {
        [n] if *n > 0 => Ok((*n, *n)),
        [h, w] if *h > 0 && *w > 0 => Ok((*h, *w)),
        _ => Err(bad("expected [height, width]")),
    }
}

/// Parses a Python bool repr (`True`/`False`).
pub fn parse_bool(value: &str) -> Option<bool> {
    match value.trim() {
        "True" | "true" | "1" => Some(true),
        "False" | "false" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_dict_with_both_quote_styles() {
        let names = parse_names("{0: 'trunk', 1: \"log_icon\", 2: 'it\\'s'}").expect("parse");
        assert_eq!(names, vec!["trunk", "log_icon", "it's"]);
    }

    #[test]
    fn names_out_of_order_are_sorted_by_id() {
        let names = parse_names("{1: 'b', 0: 'a'}").expect("parse");
        assert_eq!(names, vec!["a", "b"]);
    }

    #[test]
    fn names_with_gaps_or_garbage_are_rejected() {
        assert!(parse_names("{0: 'a', 2: 'c'}").is_err());
        assert!(parse_names("['a', 'b']").is_err());
        assert!(parse_names("{0: a}").is_err());
        assert!(parse_names("{0: 'a', 0: 'b'}").is_err());
    }

    #[test]
    fn imgsz_forms() {
        assert_eq!(parse_imgsz("[384, 640]"), Ok((384, 640)));
        assert_eq!(parse_imgsz("640"), Ok((640, 640)));
        assert!(parse_imgsz("[a, b]").is_err());
        assert!(parse_imgsz("[0, 640]").is_err());
    }
}
