//! Structured output: the skill library as a JSON schema (OpenAI `response_format` json_schema,
//! also honoured by vLLM, Ollama and llama-server) and as a GBNF grammar (llama.cpp). The
//! constraint narrows what a model can say; the skill library still validates every answer.

use serde_json::{Value as Json, json};

use crate::llm::schema_format;
use crate::skills::ParamType;
use crate::skills::SkillLibrary;

/// `{"reasoning", "skill", "args"}` with one alternative per skill; x/y ranges are the window's.
/// The properties come in that order (models write them in the schema's order: reasoning
/// first, so the call follows from it); `reasoning_max_chars` bounds the reasoning (0: no bound).
pub fn json_schema(
    library: &SkillLibrary,
    window_w: u32,
    window_h: u32,
    reasoning_max_chars: u32,
) -> Json {
    let reasoning = reasoning_schema(reasoning_max_chars);
    let alternatives: Vec<Json> = library
        .skills
        .iter()
        .map(|s| {
            let mut props = serde_json::Map::new();
            for p in &s.params {
                let (lo, hi) = match p.kind {
                    ParamType::X => (0.0, f64::from(window_w) - 1.0),
                    ParamType::Y => (0.0, f64::from(window_h) - 1.0),
                    _ => (p.min.unwrap_or(f64::MIN), p.max.unwrap_or(f64::MAX)),
                };
                let kind = match p.kind {
                    ParamType::Float => "number",
                    _ => "integer",
                };
                props.insert(
                    p.name.clone(),
                    json!({"type": kind, "minimum": lo, "maximum": hi}),
                );
            }
            let required: Vec<&str> = s.params.iter().map(|p| p.name.as_str()).collect();
            json!({
                "type": "object",
                "properties": {
                    "reasoning": reasoning,
                    "skill": {"type": "string", "enum": [s.name]},
                    "args": {
                        "type": "object",
                        "properties": props,
                        "required": required,
                        "additionalProperties": false
                    }
                },
                "required": ["reasoning", "skill", "args"],
                "additionalProperties": false
            })
        })
        .collect();
    json!({"anyOf": alternatives})
}

/// The `reasoning` property: a string of at most `max_chars` characters (0: no bound).
fn reasoning_schema(max_chars: u32) -> Json {
    let mut reasoning = json!({"type": "string"});
    if max_chars > 0 {
        reasoning["maxLength"] = json!(max_chars);
    }
    reasoning
}

/// The OpenAI-style `response_format` for [`json_schema`].
pub fn response_format(
    library: &SkillLibrary,
    window_w: u32,
    window_h: u32,
    reasoning_max_chars: u32,
) -> Json {
    let schema = json_schema(library, window_w, window_h, reasoning_max_chars);
    schema_format("skill_call", schema)
}

/// The sub-goal policy's `response_format`: `{"reasoning", "goal"}` with `goal` one of
/// `options`, reasoning first and bounded as in [`json_schema`].
pub fn goal_format(options: &[String], reasoning_max_chars: u32) -> Json {
    let reasoning = reasoning_schema(reasoning_max_chars);
    let schema = json!({
        "type": "object",
        "properties": {
            "reasoning": reasoning,
            "goal": {"type": "string", "enum": options}
        },
        "required": ["reasoning", "goal"],
        "additionalProperties": false
    });
    schema_format("next_goal", schema)
}

/// A GBNF grammar for llama.cpp: one line of reasoning (at most `reasoning_max_chars`
/// characters, 0: unbounded), then `Action: skill(args)` with each skill's arguments in their
/// ranges (x/y within the window). A grammar cannot say everything (float ranges are
/// approximate), so answers are still validated.
pub fn gbnf(
    library: &SkillLibrary,
    window_w: u32,
    window_h: u32,
    reasoning_max_chars: u32,
) -> String {
    let mut rules = Vec::new();
    let mut alternatives = Vec::new();
    for (i, s) in library.skills.iter().enumerate() {
        let rule = format!("skill{i}");
        let args: Vec<String> = s
            .params
            .iter()
            .map(|p| match p.kind {
                ParamType::X => upto(u64::from(window_w.saturating_sub(1))),
                ParamType::Y => upto(u64::from(window_h.saturating_sub(1))),
                ParamType::Int => int_range(p.min.unwrap_or(0.0), p.max.unwrap_or(0.0)),
                ParamType::Float => {
                    let whole =
                        int_range(p.min.unwrap_or(0.0).floor(), p.max.unwrap_or(0.0).floor());
                    format!("{whole} (\".\" [0-9] [0-9]?)?")
                }
            })
            .collect();
        let body = args.join(" \", \" ");
        rules.push(format!("{rule} ::= \"{}(\" {body} \")\"", s.name));
        alternatives.push(rule);
    }
    let mut out = String::new();
    out.push_str("root ::= reasoning \"\\nAction: \" call\n");
    if reasoning_max_chars > 0 {
        out.push_str(&format!(
            "reasoning ::= [^\\n]{{0,{reasoning_max_chars}}}\n"
        ));
    } else {
        out.push_str("reasoning ::= [^\\n]*\n");
    }
    out.push_str(&format!("call ::= {}\n", alternatives.join(" | ")));
    for r in rules {
        out.push_str(&r);
        out.push('\n');
    }
    out
}

/// GBNF for the whole numbers lo..=hi (small ranges listed, large ones bounded digit by digit;
/// a positive lower bound of a large range is left to validation).
fn int_range(lo: f64, hi: f64) -> String {
    let (lo, hi) = (lo.ceil() as i64, hi.floor() as i64);
    if hi < lo {
        return "\"0\"".into();
    }
    if hi - lo <= 40 {
        let values: Vec<String> = (lo..=hi).map(|v| format!("\"{v}\"")).collect();
        return format!("({})", values.join(" | "));
    }
    match (lo < 0, hi < 0) {
        (true, true) => format!("\"-\" {}", upto(lo.unsigned_abs())),
        (true, false) => format!(
            "(\"-\" {} | {})",
            upto(lo.unsigned_abs()),
            upto(hi.unsigned_abs())
        ),
        _ => upto(hi.unsigned_abs()),
    }
}

/// GBNF for 0..=n in decimal without leading zeros.
pub fn upto(n: u64) -> String {
    let digits: Vec<u8> = n.to_string().bytes().map(|b| b - b'0').collect();
    if digits.len() == 1 {
        return format!("[0-{n}]");
    }
    let mut alts = vec!["[0-9]".to_string()];
    for len in 2..digits.len() {
        alts.push(format!("[1-9]{}", " [0-9]".repeat(len - 1)));
    }
    alts.push(same_length_upto(&digits, true));
    format!("({})", alts.join(" | "))
}

/// Numbers of exactly `digits.len()` digits that are <= `digits` (no leading zero if `first`).
fn same_length_upto(digits: &[u8], first: bool) -> String {
    let low = u8::from(first);
    let (d, rest) = (digits[0], &digits[1..]);
    if rest.is_empty() {
        return if d == low {
            format!("\"{d}\"")
        } else {
            format!("[{low}-{d}]")
        };
    }
    let mut parts = Vec::new();
    if d > low {
        let below = if d - 1 == low {
            format!("\"{low}\"")
        } else {
            format!("[{low}-{}]", d - 1)
        };
        parts.push(format!("{below}{}", " [0-9]".repeat(rest.len())));
    }
    parts.push(format!("\"{d}\" {}", same_length_upto(rest, false)));
    format!("({})", parts.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GBNF subset we emit, as a regex: quoted literals, classes, groups, `|`, `?`.
    fn to_regex(gbnf: &str) -> regex::Regex {
        let mut re = String::from("^");
        let mut chars = gbnf.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    for l in chars.by_ref() {
                        if l == '"' {
                            break;
                        }
                        re.push_str(&regex::escape(&l.to_string()));
                    }
                }
                '[' => {
                    re.push('[');
                    for l in chars.by_ref() {
                        re.push(l);
                        if l == ']' {
                            break;
                        }
                    }
                }
                ' ' => {}
                other => re.push(other),
            }
        }
        re.push('$');
        regex::Regex::new(&re).expect("regex")
    }

    #[test]
    fn the_schema_asks_for_bounded_reasoning_first_then_the_skill_then_its_args() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let file =
            crate::profile_file::ProfileFile::read(&root.join("config/games/minecraft.toml"))
                .expect("profile");
        let gui = crate::skills::GuiGeometry::from_profile(&file).expect("gui");
        let keys: crate::skills::KeyMap = file.required("keys").expect("keys");
        let library =
            SkillLibrary::load(&root.join("skills/minecraft"), &keys, &gui).expect("skills");
        let schema = json_schema(&library, 1280, 720, 600);
        let first = &schema["anyOf"][0];
        let order: Vec<&str> = first["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(order, ["reasoning", "skill", "args"]);
        // Serialised in that order too: the model reads the text.
        let text = serde_json::to_string(first).expect("json");
        let at = |k: &str| text.find(&format!("\"{k}\":{{")).expect(k);
        assert!(
            at("reasoning") < at("skill") && at("skill") < at("args"),
            "{text}"
        );
        assert_eq!(first["properties"]["reasoning"]["maxLength"], 600);
        let unbounded = json_schema(&library, 1280, 720, 0);
        assert!(
            unbounded["anyOf"][0]["properties"]["reasoning"]
                .get("maxLength")
                .is_none()
        );
        let grammar = gbnf(&library, 1280, 720, 600);
        assert!(
            grammar.contains("reasoning ::= [^\\n]{0,600}\n"),
            "{grammar}"
        );
        assert!(gbnf(&library, 1280, 720, 0).contains("reasoning ::= [^\\n]*\n"));
    }

    #[test]
    fn upto_accepts_exactly_zero_to_n() {
        for n in [
            0u64, 7, 9, 10, 19, 20, 99, 100, 359, 639, 719, 1000, 1279, 1919, 2047,
        ] {
            let re = to_regex(&upto(n));
            for m in 0..=n + 150 {
                assert_eq!(
                    re.is_match(&m.to_string()),
                    m <= n,
                    "n={n} m={m}: {}",
                    upto(n)
                );
            }
            assert!(!re.is_match("01") || n < 1, "leading zero for n={n}");
        }
    }

    #[test]
    fn int_ranges_list_small_ones_and_bound_signed_ones() {
        let re = to_regex(&int_range(1.0, 9.0));
        assert!(re.is_match("1") && re.is_match("9") && !re.is_match("0") && !re.is_match("10"));
        let re = to_regex(&int_range(-1080.0, 1080.0));
        for (text, ok) in [
            ("-1080", true),
            ("1080", true),
            ("0", true),
            ("-1081", false),
            ("1920", false),
        ] {
            assert_eq!(re.is_match(text), ok, "{text}");
        }
    }
}
