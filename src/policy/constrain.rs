//! Structured output: the skill library as a JSON schema (OpenAI `response_format` json_schema,
//! also honoured by vLLM, Ollama and llama-server) and as a GBNF grammar (llama.cpp). The
//! constraint narrows what a model can say; the skill library still validates every answer.

use serde_json::{Value as Json, json};

use crate::skills::SkillLibrary;
use crate::skills::library::ParamType;

/// `{"reasoning", "skill", "args"}` with one alternative per skill; x/y ranges are the window's.
pub fn json_schema(library: &SkillLibrary, window_w: u32, window_h: u32) -> Json {
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
                    "reasoning": {"type": "string"},
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

/// The OpenAI-style `response_format` for [`json_schema`].
pub fn response_format(library: &SkillLibrary, window_w: u32, window_h: u32) -> Json {
    json!({
        "type": "json_schema",
        "json_schema": {
            "name": "skill_call",
            "strict": true,
            "schema": json_schema(library, window_w, window_h)
        }
    })
}

/// A GBNF grammar for llama.cpp: one line of reasoning, then `Action: skill(args)` with the
/// right number of numeric arguments for each skill.
pub fn gbnf(library: &SkillLibrary) -> String {
    let mut rules = Vec::new();
    let mut alternatives = Vec::new();
    for (i, s) in library.skills.iter().enumerate() {
        let rule = format!("skill{i}");
        let args: Vec<&str> = s
            .params
            .iter()
            .map(|p| match p.kind {
                ParamType::Float => "float",
                ParamType::Int => "int",
                ParamType::X | ParamType::Y => "uint",
            })
            .collect();
        let body = if args.is_empty() {
            String::new()
        } else {
            args.join(" \", \" ")
        };
        rules.push(format!("{rule} ::= \"{}(\" {body} \")\"", s.name));
        alternatives.push(rule);
    }
    let mut out = String::new();
    out.push_str("root ::= reasoning \"\\nAction: \" call\n");
    out.push_str("reasoning ::= [^\\n]*\n");
    out.push_str(&format!("call ::= {}\n", alternatives.join(" | ")));
    for r in rules {
        out.push_str(&r);
        out.push('\n');
    }
    out.push_str("uint ::= [0-9] [0-9]*\n");
    out.push_str("int ::= \"-\"? uint\n");
    out.push_str("float ::= \"-\"? uint (\".\" [0-9] [0-9]*)?\n");
    out
}
