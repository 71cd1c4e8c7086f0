//! Reading the LLM's answer into a skill call. Lenient about form (reasoning before the action,
//! code fences, quotes, whitespace, named or positional arguments), strict about content: what
//! comes out is only a candidate, and nothing runs before the skill library validates it.

use serde_json::Value as Json;

use crate::skills::{CallArg, SkillCall};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("no action found: end the answer with a line `Action: skill_name(arg1, arg2)`")]
    NoAction,
    #[error("the action `{0}` is not of the form skill_name(arg1, arg2)")]
    Malformed(String),
    #[error("argument `{0}` is not a number")]
    NotANumber(String),
    #[error("argument `{0}` is not a finite number")]
    NotFinite(String),
    #[error("the answer is not the JSON object asked for: {0}")]
    Json(String),
}

/// Longest action line we look at; anything longer is not a skill call.
const MAX_ACTION_CHARS: usize = 2_000;

/// Text mode: the last `Action: name(args)` in the answer (else the last line that is a call).
pub fn parse_text(answer: &str) -> Result<SkillCall, ParseError> {
    let lines: Vec<&str> = answer
        .lines()
        .map(|l| l.trim())
        .filter(|l| !l.starts_with("```"))
        .collect();
    let marked = lines.iter().rev().find_map(|l| action_after_marker(l));
    let candidate = match marked {
        Some(c) => c,
        None => lines
            .iter()
            .rev()
            .map(|l| clean(l))
            .find(|l| looks_like_call(l))
            .ok_or(ParseError::NoAction)?,
    };
    parse_call(&candidate)
}

/// `Action: x(...)`, `**Action:** x(...)`, `action = x(...)` -> `x(...)`.
fn action_after_marker(line: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    let at = lower.rfind("action")?;
    let rest = line.get(at + "action".len()..)?;
    let rest = rest.trim_start_matches(['*', '_', ' ', '\t']);
    let rest = rest
        .strip_prefix(':')
        .or_else(|| rest.strip_prefix('='))?
        .trim_start_matches(['*', '_']);
    let call = clean(rest);
    looks_like_call(&call).then_some(call)
}

/// Strips quotes, backticks, emphasis and a trailing full stop around a call.
fn clean(text: &str) -> String {
    text.trim_matches(|c: char| matches!(c, '`' | '*' | '"' | '\'' | '.') || c.is_whitespace())
        .to_string()
}

fn looks_like_call(text: &str) -> bool {
    let Some(open) = text.find('(') else {
        return false;
    };
    let name = text[..open].trim();
    text.ends_with(')')
        && !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// `name(1, y=2.5, "3")` -> SkillCall. A `functions.` style prefix is dropped.
fn parse_call(text: &str) -> Result<SkillCall, ParseError> {
    if text.chars().count() > MAX_ACTION_CHARS {
        return Err(ParseError::Malformed(
            text.chars().take(80).collect::<String>() + "...",
        ));
    }
    let malformed = || ParseError::Malformed(text.to_string());
    let open = text.find('(').ok_or_else(malformed)?;
    let close = text
        .rfind(')')
        .filter(|&c| c > open)
        .ok_or_else(malformed)?;
    let name = text[..open].trim();
    let name = name.rsplit('.').next().unwrap_or(name).trim().to_string();
    if name.is_empty() {
        return Err(malformed());
    }
    let inner = text[open + 1..close].trim();
    let mut args = Vec::new();
    if !inner.is_empty() {
        for part in inner.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(malformed());
            }
            let (arg_name, value) = match part.split_once(['=', ':']) {
                Some((n, v)) => (Some(unquote(n).to_string()), v),
                None => (None, part),
            };
            let value_text = unquote(value);
            let value: f64 = value_text
                .parse()
                .map_err(|_| ParseError::NotANumber(part.to_string()))?;
            // `nan`, `inf` and `1e309` parse as f64 but are no argument (and a call holding one
            // could not be written to the session as JSON).
            if !value.is_finite() {
                return Err(ParseError::NotFinite(part.to_string()));
            }
            if arg_name.as_deref().is_some_and(str::is_empty) {
                return Err(malformed());
            }
            args.push(CallArg {
                name: arg_name,
                value,
            });
        }
    }
    Ok(SkillCall { skill: name, args })
}

fn unquote(s: &str) -> &str {
    s.trim()
        .trim_matches(|c| matches!(c, '"' | '\'' | '`'))
        .trim()
}

/// Structured mode: `{"reasoning": ..., "skill": ..., "args": {...} | [...]}`, possibly in a code
/// fence or after some text.
pub fn parse_structured(answer: &str) -> Result<(SkillCall, Option<String>), ParseError> {
    let start = answer
        .find('{')
        .ok_or_else(|| ParseError::Json("no JSON object".into()))?;
    let end = answer
        .rfind('}')
        .filter(|&e| e > start)
        .ok_or_else(|| ParseError::Json("unclosed JSON object".into()))?;
    let value: Json =
        serde_json::from_str(&answer[start..=end]).map_err(|e| ParseError::Json(e.to_string()))?;
    let skill = value
        .get("skill")
        .and_then(Json::as_str)
        .ok_or_else(|| ParseError::Json("missing string field \"skill\"".into()))?
        .trim()
        .to_string();
    let number = |v: &Json, label: &str| -> Result<f64, ParseError> {
        let value = match v {
            Json::Number(n) => n.as_f64(),
            Json::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        }
        .ok_or_else(|| ParseError::NotANumber(format!("{label}: {v}")))?;
        if value.is_finite() {
            Ok(value)
        } else {
            Err(ParseError::NotFinite(format!("{label}: {v}")))
        }
    };
    let args = match value.get("args") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                Ok(CallArg {
                    name: Some(k.clone()),
                    value: number(v, k)?,
                })
            })
            .collect::<Result<_, ParseError>>()?,
        Some(Json::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                Ok(CallArg {
                    name: None,
                    value: number(v, &format!("args[{i}]"))?,
                })
            })
            .collect::<Result<_, ParseError>>()?,
        Some(other) => {
            return Err(ParseError::Json(format!(
                "\"args\" must be an object or array, got {other}"
            )));
        }
    };
    let reasoning = value
        .get("reasoning")
        .and_then(Json::as_str)
        .map(str::to_string);
    Ok((SkillCall { skill, args }, reasoning))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(skill: &str, args: &[(Option<&str>, f64)]) -> SkillCall {
        SkillCall {
            skill: skill.into(),
            args: args
                .iter()
                .map(|(n, v)| CallArg {
                    name: n.map(str::to_string),
                    value: *v,
                })
                .collect(),
        }
    }

    #[test]
    fn text_answers_in_many_shapes() {
        let want = call("craft_plank", &[(None, 412.0), (None, 300.0)]);
        for answer in [
            "Action: craft_plank(412, 300)",
            "The log is in the inventory.\nAction: craft_plank(412, 300)\n",
            "```\nAction: craft_plank( 412 ,300 )\n```",
            "**Action:** `craft_plank(\"412\", '300')`.",
            "I think so.\naction = craft_plank(412,300)",
            "1. yes\n2. no\ncraft_plank(412, 300)",
            "Action: mine_log(1)\nOn second thought:\nAction: craft_plank(412, 300)",
        ] {
            assert_eq!(parse_text(answer), Ok(want.clone()), "{answer:?}");
        }
        assert_eq!(
            parse_text("Action: turn(x=-30, y: 12.5)"),
            Ok(call("turn", &[(Some("x"), -30.0), (Some("y"), 12.5)]))
        );
        assert_eq!(
            parse_text("Action: open_inventory()"),
            Ok(call("open_inventory", &[]))
        );
    }

    #[test]
    fn text_answers_that_are_not_actions() {
        assert_eq!(
            parse_text("I would mine the log."),
            Err(ParseError::NoAction)
        );
        assert_eq!(
            parse_text("Action: mine_log(two seconds)"),
            Err(ParseError::NotANumber("two seconds".into()))
        );
        assert!(matches!(
            parse_text("Action: mine_log(1,,2)"),
            Err(ParseError::Malformed(_))
        ));
        for answer in [
            "Action: mine_log(nan)",
            "Action: mine_log(inf)",
            "Action: mine_log(-infinity)",
            "Action: mine_log(1e309)",
            "Action: turn(x=NaN, y=2)",
        ] {
            assert!(
                matches!(parse_text(answer), Err(ParseError::NotFinite(_))),
                "{answer:?}"
            );
        }
        assert!(matches!(
            parse_structured(r#"{"skill": "mine_log", "args": ["nan"]}"#),
            Err(ParseError::NotFinite(_))
        ));
    }

    #[test]
    fn structured_answers() {
        let (c, why) = parse_structured(
            "```json\n{\"reasoning\": \"log seen\", \"skill\": \"turn\", \"args\": {\"x\": 5, \"y\": \"-2\"}}\n```",
        )
        .expect("json");
        assert_eq!(c, call("turn", &[(Some("x"), 5.0), (Some("y"), -2.0)]));
        assert_eq!(why.as_deref(), Some("log seen"));
        let (c, _) = parse_structured("{\"skill\": \"turn\", \"args\": [5, 6]}").expect("array");
        assert_eq!(c, call("turn", &[(None, 5.0), (None, 6.0)]));
        assert!(parse_structured("{\"skill\": 3}").is_err());
        assert!(parse_structured("{\"skill\": \"t\", \"args\": {\"x\": true}}").is_err());
        assert!(parse_structured("no json").is_err());
    }
}
