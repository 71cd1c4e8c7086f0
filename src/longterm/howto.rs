//! How^2's how-to memory: when the agent lacks a recipe or procedure for an item, it asks a
//! teacher (the LLM, given the knowledge graph's facts about the item) "how do I get X?". The
//! answer is parsed into an abstract entry (recipe, requirements, procedure, related items):
//! steps with screen coordinates or slot ids are stripped (they bind the answer to one screen),
//! and an answer that is malformed or left empty is refused and never stored. Entries are kept
//! under the item and its tags, and checked for relevance against the graph before reuse.

use petgraph::Direction;
use petgraph::visit::EdgeRef;
use serde::{Deserialize, Serialize};

use super::db::Db;
use super::{MemoryError, Query, text_helpers};
use crate::knowledge::{KnowledgeGraph, Relation};
use crate::llm::{
    ChatMessage, ChatOptions, Completion, LlmClient, LlmError, answers_in_json, schema_format,
};

pub const MODULE: &str = "howto";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HowTo {
    pub item: String,
    pub recipe: Vec<String>,
    pub requirements: Vec<String>,
    pub procedure: Vec<String>,
    pub related: Vec<String>,
    /// Lower-case words of the item's name and the related items: the other keys it is
    /// found under.
    pub tags: Vec<String>,
    /// Lines removed because they carried screen coordinates or slot ids.
    #[serde(default)]
    pub stripped: usize,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnswerError {
    #[error("the teacher's answer holds no JSON object")]
    NoJson,
    #[error("the teacher's answer is not the expected JSON: {0}")]
    Shape(String),
    #[error("the teacher answered about \"{got}\", not \"{asked}\"")]
    WrongItem { asked: String, got: String },
    #[error("the teacher's answer has no usable procedure (after removing screen specifics)")]
    Empty,
    #[error("the how-to memory is off")]
    Off,
}

/// The knowledge graph's facts about an item: what it is made from or with, what mines it,
/// what it is used for.
pub fn facts(kg: &KnowledgeGraph, item: &str) -> Vec<String> {
    let Some(node) = kg.node(item) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for dir in [Direction::Incoming, Direction::Outgoing] {
        for e in kg.graph.edges_directed(node, dir) {
            out.push(format!(
                "{} {} {}.",
                kg.name(e.source()),
                e.weight().as_str(),
                kg.name(e.target())
            ));
        }
    }
    out.sort();
    out
}

/// The question to the teacher.
pub fn question(kg: &KnowledgeGraph, item: &str) -> Vec<ChatMessage> {
    let facts = facts(kg, item);
    vec![ChatMessage::user(format!(
        "You are a Minecraft teacher. A student asks: how do I get {item}?\n\
         Facts from the knowledge graph:\n{}\n\
         Answer in general terms that hold on any screen: never give screen coordinates, pixel \
         positions or inventory slot numbers.\n\
         Answer with one JSON object only: {{\"item\": \"{item}\", \"recipe\": [\"<count> \
         <ingredient>\", ...], \"requirements\": [\"<tool or station>\", ...], \"procedure\": \
         [\"<step>\", ...], \"related\": [\"<item>\", ...]}}",
        if facts.is_empty() {
            "(none)".to_string()
        } else {
            facts.join("\n")
        }
    ))]
}

/// Asks `teacher` how to get `item`: [`question`] under [`options`], the one way play and
/// `vistawise memory howto --ask` ask it.
pub async fn ask(
    teacher: &LlmClient,
    llm: &crate::config::LlmConfig,
    kg: &KnowledgeGraph,
    item: &str,
) -> Result<Completion, LlmError> {
    teacher.chat(&question(kg, item), &options(llm, item)).await
}

/// The options the teacher is asked with: `llm.max_tokens` and `llm.temperature`, and where the
/// policy's answers are constrained by a JSON schema (`llm.output_mode = "structured"`,
/// `llm.constrain = "json_schema"`: the endpoint takes one) the answer's own: arrays of
/// strings, `item` fixed. Unconstrained, the 1.5B local model wrote `recipe` as objects
/// (`{"count": 1, "ingredient": ...}`) and every answer was refused.
pub fn options(llm: &crate::config::LlmConfig, item: &str) -> ChatOptions {
    let strings = serde_json::json!({"type": "array", "items": {"type": "string"}});
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "item": {"type": "string", "enum": [item]},
            "recipe": strings,
            "requirements": strings,
            "procedure": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "related": strings,
        },
        "required": ["item", "recipe", "requirements", "procedure", "related"],
        "additionalProperties": false
    });
    let constrained = answers_in_json(llm.output_mode, llm.constrain);
    ChatOptions {
        max_tokens: llm.max_tokens,
        temperature: llm.temperature,
        response_format: constrained.then(|| schema_format("how_to", schema)),
        ..ChatOptions::default()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    item: String,
    #[serde(default)]
    recipe: Vec<String>,
    #[serde(default)]
    requirements: Vec<String>,
    procedure: Vec<String>,
    #[serde(default)]
    related: Vec<String>,
}

/// The JSON object in an answer (code fences and words around it are tolerated).
fn json_object(answer: &str) -> Option<&str> {
    let start = answer.find('{')?;
    let end = answer.rfind('}')?;
    (end > start).then(|| &answer[start..=end])
}

/// Whether a line still holds one of the question's `<placeholders>`.
fn has_placeholder(line: &str) -> bool {
    [
        "<count>",
        "<ingredient>",
        "<tool or station>",
        "<step>",
        "<item>",
    ]
    .iter()
    .any(|p| line.contains(p))
}

/// Parses a teacher's answer about `item` into an abstract entry, or says why not.
pub fn parse_answer(answer: &str, item: &str) -> Result<HowTo, AnswerError> {
    let json = json_object(answer).ok_or(AnswerError::NoJson)?;
    let a: Answer = serde_json::from_str(json).map_err(|e| AnswerError::Shape(e.to_string()))?;
    if !a.item.trim().eq_ignore_ascii_case(item.trim()) {
        return Err(AnswerError::WrongItem {
            asked: item.into(),
            got: a.item,
        });
    }
    let mut stripped = 0;
    // Screen specifics are stripped; so are the question's own placeholders copied back
    // ("1 <ingredient>": the local model did so in every recipe).
    let mut clean = |v: Vec<String>| -> Vec<String> {
        v.into_iter()
            .map(|s| s.trim().to_string())
            .filter(|s| {
                let bad = text_helpers::has_screen_specifics(s) || has_placeholder(s);
                stripped += usize::from(bad);
                !bad && !s.is_empty()
            })
            .collect()
    };
    let recipe = clean(a.recipe);
    let requirements = clean(a.requirements);
    let procedure = clean(a.procedure);
    let related = clean(a.related);
    if procedure.is_empty() {
        return Err(AnswerError::Empty);
    }
    let mut tags: Vec<String> = item
        .split_whitespace()
        .map(str::to_lowercase)
        .filter(|w| w.len() > 2)
        .chain(related.iter().map(|r| r.to_lowercase()))
        .collect();
    tags.sort();
    tags.dedup();
    Ok(HowTo {
        item: item.trim().to_string(),
        recipe,
        requirements,
        procedure,
        related,
        tags,
        stripped,
    })
}

pub fn store(db: &Db, h: &HowTo) -> Result<i64, MemoryError> {
    let data = serde_json::to_value(h).unwrap_or_default();
    db.insert(MODULE, &h.item.to_lowercase(), &data, None)
}

fn all(db: &Db) -> Result<Vec<(i64, HowTo)>, MemoryError> {
    Ok(db
        .list(Some(MODULE))?
        .into_iter()
        .filter_map(|e| serde_json::from_value(e.data).ok().map(|h| (e.id, h)))
        .collect())
}

/// The relevance check before reuse: the entry is about this item, the item is in this
/// profile's graph, and every recipe ingredient or requirement that names a graph node is one
/// the graph links to the item (an entry that contradicts the graph, e.g. from another game
/// version, is not reused and the teacher is asked again).
pub fn is_relevant(h: &HowTo, item: &str, kg: &KnowledgeGraph) -> bool {
    if !h.item.eq_ignore_ascii_case(item) {
        return false;
    }
    let Some(node) = kg.node(item) else {
        return false;
    };
    let linked: Vec<String> = kg
        .graph
        .edges_directed(node, Direction::Incoming)
        .filter(|e| {
            matches!(
                e.weight(),
                Relation::IsUsedToCraft
                    | Relation::IsUsedToProduce
                    | Relation::CanBeUsedToMine
                    | Relation::Outputs
            )
        })
        .map(|e| kg.name(e.source()).to_lowercase())
        .collect();
    let names: Vec<String> = kg.names().iter().map(|n| n.to_lowercase()).collect();
    h.recipe.iter().chain(&h.requirements).all(|line| {
        let l = line.to_lowercase();
        // The graph nodes this line names (longest names first, so "Stone Pickaxe" is not read
        // as "Stone").
        let mut named: Vec<&String> = names
            .iter()
            .filter(|n| crate::knowledge::mentions(&l, n))
            .collect();
        named.sort_by_key(|n| std::cmp::Reverse(n.len()));
        match named.first() {
            Some(n) => linked.contains(n),
            None => true,
        }
    })
}

/// The newest relevant entry for an item.
pub fn lookup(
    db: &Db,
    item: &str,
    kg: &KnowledgeGraph,
) -> Result<Option<(i64, HowTo)>, MemoryError> {
    Ok(all(db)?
        .into_iter()
        .rev()
        .find(|(_, h)| is_relevant(h, item, kg)))
}

/// Entries stored under a tag (a word of their item or a related item), newest first.
pub fn by_tag(db: &Db, tag: &str) -> Result<Vec<(i64, HowTo)>, MemoryError> {
    let tag = tag.to_lowercase();
    Ok(all(db)?
        .into_iter()
        .rev()
        .filter(|(_, h)| h.tags.contains(&tag))
        .collect())
}

pub fn render(h: &HowTo) -> String {
    let mut lines = vec![format!("How to get {}:", h.item)];
    if !h.recipe.is_empty() {
        lines.push(format!("Recipe: {}", h.recipe.join(", ")));
    }
    if !h.requirements.is_empty() {
        lines.push(format!("Requirements: {}", h.requirements.join(", ")));
    }
    lines.push("Procedure:".into());
    lines.extend(
        h.procedure
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{}. {s}", i + 1)),
    );
    if !h.related.is_empty() {
        lines.push(format!("Related: {}", h.related.join(", ")));
    }
    lines.join("\n")
}

/// The prompt section: the relevant how-to of the current sub-goal, and the names of others
/// under its tags.
pub fn section(db: &Db, q: &Query, kg: &KnowledgeGraph) -> Result<String, MemoryError> {
    let Some(item) = &q.subgoal else {
        return Ok(String::new());
    };
    let mut body = String::new();
    if let Some((_, h)) = lookup(db, item, kg)? {
        body.push_str(&render(&h));
    }
    let mut others: Vec<String> = Vec::new();
    for tag in item
        .split_whitespace()
        .map(str::to_lowercase)
        .filter(|w| w.len() > 2)
    {
        for (_, h) in by_tag(db, &tag)? {
            if !h.item.eq_ignore_ascii_case(item) && !others.contains(&h.item) {
                others.push(h.item);
            }
        }
    }
    if !others.is_empty() {
        if !body.is_empty() {
            body.push('\n');
        }
        body.push_str(&format!("Also known how to get: {}", others.join(", ")));
    }
    Ok(text_helpers::section(
        "Long-term memory - how-to knowledge from the teacher (how-to memory):",
        &body,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_abstracted_and_malformed_ones_refused() {
        let ok = "Sure!\n```json\n{\"item\": \"Stone Pickaxe\", \"recipe\": [\"3 Cobblestone\", \"2 Stick\"], \
                  \"requirements\": [\"Crafting Table\"], \"procedure\": [\"Open the crafting table\", \
                  \"Click slot 3 at (412, 300)\", \"Put 3 cobblestone in the top row and 2 sticks in the middle column\", \
                  \"Take the pickaxe\"], \"related\": [\"Wooden Pickaxe\"]}\n```";
        let h = parse_answer(ok, "stone pickaxe").expect("parsed");
        assert_eq!(h.procedure.len(), 3);
        assert_eq!(h.stripped, 1);
        assert!(h.procedure.iter().all(|s| !s.contains("412")));
        assert!(h.tags.contains(&"pickaxe".to_string()));
        assert!(h.tags.contains(&"wooden pickaxe".to_string()));
        assert_eq!(parse_answer("no idea", "Stick"), Err(AnswerError::NoJson));
        assert!(matches!(
            parse_answer("{\"item\": \"Stick\", \"procedure\": \"x\"}", "Stick"),
            Err(AnswerError::Shape(_))
        ));
        assert!(matches!(
            parse_answer(
                "{\"item\": \"Stick\", \"procedure\": [\"a\"], \"x\": 1}",
                "Stick"
            ),
            Err(AnswerError::Shape(_))
        ));
        assert!(matches!(
            parse_answer("{\"item\": \"Torch\", \"procedure\": [\"a\"]}", "Stick"),
            Err(AnswerError::WrongItem { .. })
        ));
        assert_eq!(
            parse_answer(
                "{\"item\": \"Stick\", \"procedure\": [\"click x=3\", \"slot 2\"]}",
                "Stick"
            ),
            Err(AnswerError::Empty)
        );
        // The question's placeholders copied back are no recipe (the local model's answers).
        let copied = parse_answer(
            "{\"item\": \"Planks\", \"recipe\": [\"1 <ingredient>\", \"1 Log\"], \"procedure\": [\"Craft planks from a log\"]}",
            "Planks",
        )
        .expect("parsed");
        assert_eq!(copied.recipe, ["1 Log"]);
        assert_eq!(copied.stripped, 1);
    }

    /// With a JSON schema the teacher is held to the answer's shape (unconstrained, the local
    /// model wrote the recipe as objects); without one nothing is sent.
    #[test]
    fn the_teacher_is_asked_for_the_answer_shape_where_the_endpoint_takes_a_schema() {
        let mut llm = crate::config::Config::builtin().llm;
        llm.output_mode = crate::config::OutputMode::Structured;
        llm.constrain = crate::config::Constrain::JsonSchema;
        let format = options(&llm, "Planks").response_format.expect("schema");
        let schema = &format["json_schema"]["schema"];
        assert_eq!(schema["properties"]["item"]["enum"][0], "Planks");
        assert_eq!(schema["properties"]["recipe"]["items"]["type"], "string");
        assert_eq!(schema["additionalProperties"], false);
        llm.output_mode = crate::config::OutputMode::Text;
        assert!(options(&llm, "Planks").response_format.is_none());
    }
}
