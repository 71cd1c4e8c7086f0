//! The action prompt, from the paper's template (Table 9) kept as a data file
//! (`config/prompts/vistawise.txt`): `{placeholders}` filled with the task, crosshair, distance to
//! the target, pooled knowledge, inventory and environment status, skill library, recalled
//! decisions, chain-of-thought questions and the output format. Equal inputs give byte-identical
//! prompts; their size is counted in tokens with the model family's tokenizer.

use std::path::{Path, PathBuf};

use crate::knowledge::PooledText;
use crate::skills::SkillLibrary;
use crate::tasks::Task;
use crate::toml_lines::{self, DataFileError};

/// Every placeholder the template may use.
pub const PLACEHOLDERS: [&str; 11] = [
    "task_description",
    "crosshair_position",
    "distance",
    "knowledge",
    "inventory",
    "environment",
    "skill_library",
    "recalled_decisions",
    "long_term_memory",
    "cot_questions",
    "output_format",
];

#[derive(Debug, Clone)]
pub struct PromptTemplate {
    text: String,
    pub source: PathBuf,
}

impl PromptTemplate {
    /// Loads a template; an unknown or unclosed placeholder is an error at its line.
    pub fn load(path: &Path) -> Result<Self, DataFileError> {
        let text = toml_lines::read(path)?;
        Self::parse(text, path)
    }

    pub fn parse(text: String, path: &Path) -> Result<Self, DataFileError> {
        let mut rest = 0;
        while let Some(open) = text[rest..].find('{').map(|i| rest + i) {
            let line = toml_lines::line_at(&text, open);
            let close = text[open..]
                .find('}')
                .map(|i| open + i)
                .ok_or_else(|| DataFileError::at(path, line, "a '{' without its closing '}'"))?;
            let name = &text[open + 1..close];
            if !PLACEHOLDERS.contains(&name) {
                return Err(DataFileError::at(
                    path,
                    line,
                    format!(
                        "unknown placeholder {{{name}}}; known: {}",
                        PLACEHOLDERS.join(", ")
                    ),
                ));
            }
            rest = close + 1;
        }
        Ok(PromptTemplate {
            text,
            source: path.to_path_buf(),
        })
    }

    /// Fills the placeholders (single pass: filled-in text is never re-expanded).
    pub fn render(&self, values: &PromptValues) -> String {
        let mut out = String::with_capacity(self.text.len() * 2);
        let mut rest = self.text.as_str();
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            // `parse` checked every placeholder is closed and known.
            let close = rest[open..].find('}').map_or(rest.len(), |i| open + i);
            out.push_str(&values.get(&rest[open + 1..close]));
            rest = rest.get(close + 1..).unwrap_or("");
        }
        out.push_str(rest);
        out
    }
}

/// Everything a prompt is made of, already as text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptValues {
    pub task_description: String,
    pub crosshair_position: String,
    pub distance: String,
    pub pooled: PooledText,
    pub skill_library: String,
    pub recalled_decisions: String,
    /// The long-term memory modules' sections, each with its own header and a trailing blank
    /// line; empty (and so rendering as nothing) when no module is on or none has anything.
    pub long_term_memory: String,
    pub cot_questions: String,
    pub output_format: String,
}

impl PromptValues {
    fn get(&self, name: &str) -> String {
        let or_none = |s: &str| {
            if s.trim().is_empty() {
                "none".to_string()
            } else {
                s.to_string()
            }
        };
        match name {
            "task_description" => self.task_description.clone(),
            "crosshair_position" => self.crosshair_position.clone(),
            "distance" => self.distance.clone(),
            "knowledge" => or_none(&self.pooled.knowledge),
            "inventory" => or_none(&self.pooled.inventory),
            "environment" => or_none(&self.pooled.environment),
            "skill_library" => self.skill_library.clone(),
            "recalled_decisions" => or_none(&self.recalled_decisions),
            "long_term_memory" => self.long_term_memory.clone(),
            "cot_questions" => self.cot_questions.clone(),
            "output_format" => self.output_format.clone(),
            _ => String::new(),
        }
    }
}

/// The skill library as the prompt lists it: one `signature: description` per line.
pub fn skill_library_text(library: &SkillLibrary) -> String {
    library
        .skills
        .iter()
        .map(|s| format!("- {}: {}", s.signature(), s.description))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn cot_text(task: &Task) -> String {
    task.cot
        .iter()
        .enumerate()
        .map(|(i, q)| format!("{}. {q}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the answer must look like, per output mode.
pub fn output_format_text(json_answers: bool) -> &'static str {
    match json_answers {
        false => {
            // No concrete call as the example: small models copied it every step.
            "Answer the questions briefly, then give exactly one action on the last line, in the \
             form:\nAction: skill_function(*params)\nwith the name of one available action and \
             its parameters as numbers, in the order its format lists them."
        }
        true => {
            "Answer with one JSON object: {\"reasoning\": \"<brief answers to the questions>\", \
             \"skill\": \"<skill name>\", \"args\": {\"<param>\": <number>, ...}}"
        }
    }
}

/// "If applicable, ..." sentence: where the closest seen target entity is against the reach.
pub fn distance_text(target: Option<(&str, bool)>) -> String {
    match target {
        Some((name, true)) => format!(
            "The distance between the player and the {name} is less than the interactable range."
        ),
        Some((name, false)) => format!(
            "The distance between the player and the {name} is greater than the interactable range."
        ),
        None => String::new(),
    }
}

/// Counts tokens the way OpenAI's models do (tiktoken's o200k_base, GPT-4o and later);
/// other endpoints count differently, which is why the provider's own usage numbers are
/// recorded too.
///
/// A step's prompt is mostly the same text as the step before (the template, the skill
/// library, the questions): the text is cut into lines where the tokenizer's own pre-split
/// always cuts, and each line's count is remembered, so only the lines that changed are
/// encoded. The sum equals the count of the whole text (a test holds it to that).
pub struct TokenCounter {
    bpe: tiktoken_rs::CoreBPE,
    lines: std::sync::Mutex<std::collections::HashMap<String, usize>>,
    #[cfg(test)]
    encoded: std::sync::atomic::AtomicUsize,
}

/// Lines remembered at most; past it the memory starts again (a session's static lines come
/// back at once).
const REMEMBERED_LINES: usize = 4096;

impl TokenCounter {
    pub fn o200k() -> Result<Self, String> {
        tiktoken_rs::o200k_base()
            .map(|bpe| TokenCounter {
                bpe,
                lines: Default::default(),
                #[cfg(test)]
                encoded: Default::default(),
            })
            .map_err(|e| format!("cannot load the o200k_base tokenizer: {e}"))
    }

    pub fn count(&self, text: &str) -> usize {
        let Ok(mut lines) = self.lines.lock() else {
            return self.encode(text);
        };
        if lines.len() > REMEMBERED_LINES {
            lines.clear();
        }
        pretokenizer_lines(text)
            .map(|line| match lines.get(line) {
                Some(&n) => n,
                None => {
                    let n = self.encode(line);
                    lines.insert(line.to_string(), n);
                    n
                }
            })
            .sum()
    }

    fn encode(&self, text: &str) -> usize {
        #[cfg(test)]
        self.encoded
            .fetch_add(text.len(), std::sync::atomic::Ordering::Relaxed);
        self.bpe.encode_with_special_tokens(text).len()
    }
}

/// `text` cut after each run of newlines that a character other than whitespace or `/` follows.
/// o200k_base's pre-split never joins such a newline to what follows it (its pieces that hold a
/// newline end in newlines, or in `/` after punctuation), and BPE merges only within a piece,
/// so the lines' counts add up to the whole text's.
fn pretokenizer_lines(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        while i < bytes.len() {
            let cut = i > start
                && matches!(bytes[i - 1], b'\n' | b'\r')
                && !bytes[i].is_ascii_whitespace()
                && bytes[i] != b'/'
                && text.is_char_boundary(i)
                && !text[i..].starts_with(char::is_whitespace);
            if cut {
                let line = &text[start..i];
                start = i;
                return Some(line);
            }
            i += 1;
        }
        let line = &text[start..];
        start = bytes.len();
        Some(line)
    })
}

/// The inputs of one step's prompt.
pub struct StepInputs<'a> {
    pub task: &'a Task,
    pub kg: &'a crate::knowledge::KnowledgeGraph,
    pub pooled: &'a crate::knowledge::Subgraph,
    /// The pooled graph as text (`knowledge::textualize`), made once per step.
    pub text: &'a PooledText,
    pub visual: &'a crate::knowledge::VisualState,
    pub perception: &'a crate::perception::Perception,
    pub library: &'a SkillLibrary,
    pub memory: &'a super::memory_stack::MemoryStack,
    pub recall_steps: usize,
    /// The `{long_term_memory}` text (see `crate::longterm`).
    pub long_term: &'a str,
    /// Structured mode with a JSON schema: answers are JSON objects (else `Action:` lines).
    pub json_answers: bool,
}

/// Fills the template's values for one step.
pub fn step_values(inputs: &StepInputs) -> PromptValues {
    let (cx, cy) = (
        inputs.perception.frame_w as f32 / 2.0,
        inputs.perception.frame_h as f32 / 2.0,
    );
    // The pooled environment entity nearest the crosshair is "the target" of the distance line.
    let nearest = inputs
        .pooled
        .nodes
        .iter()
        .filter_map(|n| {
            inputs
                .visual
                .attributes
                .get(n)
                .map(|a| (inputs.kg.name(*n), a))
        })
        .flat_map(|(name, a)| a.entities.iter().map(move |e| (name, e)))
        .min_by(|a, b| {
            let d = |e: &crate::perception::EnvironmentEntity| (e.x - cx).hypot(e.y - cy);
            d(a.1).total_cmp(&d(b.1)).then_with(|| a.0.cmp(b.0))
        })
        .map(|(name, e)| (name, e.in_reach));
    PromptValues {
        task_description: inputs.task.description.clone(),
        crosshair_position: format!("({cx:.0}, {cy:.0})"),
        distance: distance_text(nearest),
        pooled: inputs.text.clone(),
        skill_library: skill_library_text(inputs.library),
        recalled_decisions: inputs.memory.recall_text(inputs.recall_steps),
        long_term_memory: inputs.long_term.to_string(),
        cot_questions: cot_text(inputs.task),
        output_format: output_format_text(inputs.json_answers).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_fill_once_and_unknown_ones_are_errors_with_lines() {
        let t = PromptTemplate::parse(
            "Task: {task_description}\nSee {knowledge}".into(),
            Path::new("p.txt"),
        )
        .expect("valid");
        let values = PromptValues {
            task_description: "mine {knowledge}".into(),
            ..PromptValues::default()
        };
        // The filled-in text is not expanded again; empty sections read "none".
        assert_eq!(t.render(&values), "Task: mine {knowledge}\nSee none");
        let err = PromptTemplate::parse("a\n{tsk}".into(), Path::new("p.txt")).expect_err("bad");
        assert!(
            err.to_string()
                .starts_with("p.txt:2: unknown placeholder {tsk}"),
            "{err}"
        );
        let err = PromptTemplate::parse("{task".into(), Path::new("p.txt")).expect_err("open");
        assert!(err.to_string().contains("p.txt:1:"), "{err}");
    }

    #[test]
    fn an_empty_long_term_memory_section_renders_as_nothing() {
        let t = PromptTemplate::parse(
            "Decisions:\n{recalled_decisions}\n\n{long_term_memory}Questions".into(),
            Path::new("p.txt"),
        )
        .expect("valid");
        let mut values = PromptValues::default();
        assert_eq!(t.render(&values), "Decisions:\nnone\n\nQuestions");
        values.long_term_memory = "Memory:\nx\n\n".into();
        assert_eq!(
            t.render(&values),
            "Decisions:\nnone\n\nMemory:\nx\n\nQuestions"
        );
    }

    #[test]
    fn tokens_are_counted_like_tiktoken() {
        let c = TokenCounter::o200k().expect("tokenizer");
        // tiktoken: len(o200k_base.encode("hello world")) == 2
        assert_eq!(c.count("hello world"), 2);
        assert_eq!(c.count(""), 0);
    }

    fn whole(c: &TokenCounter, text: &str) -> usize {
        c.bpe.encode_with_special_tokens(text).len()
    }

    #[test]
    fn a_prompt_counted_by_lines_has_the_tokens_of_the_whole_and_encodes_only_new_lines() {
        let c = TokenCounter::o200k().expect("tokenizer");
        let template = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/prompts/vistawise.txt"),
        )
        .expect("template");
        let step = |inventory: &str| {
            template.replace("{inventory}", inventory).replace(
                "{skill_library}",
                "- mine_block(): digs\n- turn(dx, dy): looks\n  /x",
            )
        };
        let first = step("Oak Log: 1 slot at (305, 274) [hotbar key 1] x3");
        assert_eq!(c.count(&first), whole(&c, &first));
        let before = c.encoded.load(std::sync::atomic::Ordering::Relaxed);
        let second = step("Oak Log: 1 slot at (305, 274) [hotbar key 1] x4");
        assert_eq!(c.count(&second), whole(&c, &second));
        let encoded = c.encoded.load(std::sync::atomic::Ordering::Relaxed) - before;
        assert!(
            encoded < 80,
            "only the changed line is encoded again, not the {}-byte prompt: {encoded} bytes",
            second.len()
        );
    }

    proptest::proptest! {
        #[test]
        fn counting_by_lines_equals_counting_the_whole(
            text in "([a-zA-Z0-9 :/()\\-]{0,6}[\n\r ]{0,3}(\u{a0}|\u{3000}|é|,)?){0,40}"
        ) {
            static COUNTER: std::sync::OnceLock<TokenCounter> = std::sync::OnceLock::new();
            let c = COUNTER.get_or_init(|| TokenCounter::o200k().expect("tokenizer"));
            proptest::prop_assert_eq!(c.count(&text), whole(c, &text));
        }
    }
}
