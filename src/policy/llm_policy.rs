//! The LLM policy: ask, read the answer, validate it against the skill library and the window,
//! and send an invalid answer back with the reason (up to `llm.max_invalid_answers` times).
//! Only a validated call with its expanded events ever leaves this module.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::action::{parse_structured, parse_text};
use super::constrain;
use super::prompt::TokenCounter;
use crate::config::{Constrain, LlmConfig, OutputMode};
use crate::llm::{
    ChatMessage, ChatOptions, LlmClient, LlmError, PriceTable, Usage, answers_in_json,
};
use crate::skills::{ExpandContext, InputEvent, SkillCall, SkillLibrary, plan};
use crate::toml_lines::DataFileError;

/// One answer of the model and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub answer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parsed: Option<SkillCall>,
    /// Why the answer could not be used (sent back to the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
}

/// A validated action: the call and exactly the events it will send.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValidAction {
    pub call: SkillCall,
    pub events: Vec<InputEvent>,
    pub reasoning: String,
}

/// Everything one decision cost and produced; `action` is `None` when every answer was invalid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Turn {
    pub action: Option<ValidAction>,
    pub attempts: Vec<Attempt>,
    pub usage: Usage,
    /// Dollars, when the model has a price.
    pub cost_usd: Option<f64>,
    pub http_attempts: u32,
    /// Requests whose response carried no `usage`: what was sent and the answer, for
    /// [`LlmPolicy::count_unreported`].
    #[serde(skip)]
    pub unreported: Vec<(String, String)>,
}

/// The sub-goal policy's question answered: the option picked (`None` when every answer
/// named none), with the answers, tokens and cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub goal: Option<String>,
    pub reasoning: String,
    pub attempts: Vec<Attempt>,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    /// Requests whose response carried no `usage` ([`LlmPolicy::count_unreported_choice`]).
    pub unreported: Vec<(String, String)>,
}

/// The goal an answer names: the last `Goal:` line's item (text) or the `goal` field (JSON),
/// as the option it matches without regard to case or surrounding quotes and markup; the rest
/// of the answer is the reasoning.
pub fn read_goal(answer: &str, json: bool, options: &[String]) -> Result<(String, String), String> {
    let (named, reasoning) = if json {
        let v: serde_json::Value =
            serde_json::from_str(answer.trim()).map_err(|e| format!("not a JSON object: {e}"))?;
        let goal = v
            .get("goal")
            .and_then(|g| g.as_str())
            .ok_or("no \"goal\" string")?
            .to_string();
        let why = v
            .get("reasoning")
            .and_then(|r| r.as_str())
            .unwrap_or_default()
            .to_string();
        (goal, why)
    } else {
        let line = answer
            .lines()
            .rev()
            .find_map(|l| {
                let l = l.trim().trim_start_matches(['*', '#', '-', ' ']);
                let lower = l.to_ascii_lowercase();
                lower
                    .starts_with("goal")
                    .then(|| l[4..].trim_start_matches(['*', ':', '=', ' ']).to_string())
            })
            .ok_or("no line `Goal: <item>`")?;
        (line, answer.to_string())
    };
    let clean = named.trim().trim_matches(['`', '"', '\'', '*', '.', ' ']);
    options
        .iter()
        .find(|o| o.eq_ignore_ascii_case(clean))
        .map(|o| (o.clone(), reasoning))
        .ok_or_else(|| format!("\"{clean}\" is not one of the items to choose from"))
}

/// Reads one answer into a call and its reasoning.
fn read_answer(answer: &str, json: bool) -> Result<(SkillCall, String), String> {
    if json {
        parse_structured(answer)
            .map(|(call, why)| (call, why.unwrap_or_default()))
            .map_err(|e| e.to_string())
    } else {
        parse_text(answer)
            .map(|call| (call, answer.to_string()))
            .map_err(|e| e.to_string())
    }
}

/// The only way to a [`ValidAction`]: parse, then bind and expand against the skill library
/// and the window. The error is the reason sent back to the model.
pub fn validate_answer(
    answer: &str,
    json: bool,
    library: &SkillLibrary,
    ctx: &ExpandContext,
) -> Result<ValidAction, String> {
    let (call, reasoning) = read_answer(answer, json)?;
    validate_call(call, reasoning, library, ctx)
}

/// Checks a parsed call against the skill library and the window (expanding it to events).
fn validate_call(
    call: SkillCall,
    reasoning: String,
    library: &SkillLibrary,
    ctx: &ExpandContext,
) -> Result<ValidAction, String> {
    let events = plan(library, &call, ctx).map_err(|e| e.to_string())?;
    Ok(ValidAction {
        call,
        events,
        reasoning,
    })
}

/// Why the LLM policy of the config cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum LlmSetupError {
    #[error(transparent)]
    Client(#[from] LlmError),
    #[error(transparent)]
    Prices(#[from] DataFileError),
    #[error(
        "model \"{model}\" has no price in {}, so the cost cap cannot work: add it, or set no cap (--max-cost 0)",
        prices.display()
    )]
    NoPrice { model: String, prices: PathBuf },
}

pub struct LlmPolicy {
    client: LlmClient,
    prices: PriceTable,
    mode: OutputMode,
    constrain: Constrain,
    max_invalid: u32,
    max_tokens: u32,
    temperature: f32,
    reasoning_max_chars: u32,
}

impl LlmPolicy {
    pub fn new(client: LlmClient, prices: PriceTable, config: &LlmConfig) -> Self {
        LlmPolicy {
            client,
            prices,
            mode: config.output_mode,
            constrain: config.constrain,
            max_invalid: config.max_invalid_answers,
            max_tokens: config.max_tokens,
            temperature: config.temperature,
            reasoning_max_chars: config.reasoning_max_chars,
        }
    }

    /// The policy of `config`: its endpoint's client (recording every exchange under
    /// `record_to` when given) and its price table. With a cost cap (`cost_cap_usd` > 0) the
    /// model must have a price: without one the cap could not work.
    pub fn from_config(
        config: &LlmConfig,
        record_to: Option<&Path>,
        cost_cap_usd: f64,
    ) -> Result<Self, LlmSetupError> {
        let mut client = LlmClient::new(config)?;
        if let Some(dir) = record_to {
            client = client.record_to(dir)?;
        }
        let prices = PriceTable::load(&config.prices)?;
        if cost_cap_usd > 0.0 && prices.find(&config.model).is_none() {
            return Err(LlmSetupError::NoPrice {
                model: config.model.clone(),
                prices: config.prices.clone(),
            });
        }
        Ok(LlmPolicy::new(client, prices, config))
    }

    pub fn model(&self) -> &str {
        self.client.model()
    }

    fn options(&self, library: &SkillLibrary, ctx: &ExpandContext) -> ChatOptions {
        let mut options = ChatOptions {
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            ..ChatOptions::default()
        };
        if self.mode == OutputMode::Structured {
            match self.constrain {
                Constrain::JsonSchema => {
                    options.response_format = Some(constrain::response_format(
                        library,
                        ctx.window_w,
                        ctx.window_h,
                        self.reasoning_max_chars,
                    ));
                }
                Constrain::Grammar => {
                    options.grammar = Some(constrain::gbnf(
                        library,
                        ctx.window_w,
                        ctx.window_h,
                        self.reasoning_max_chars,
                    ));
                }
            }
        }
        options
    }

    fn json_answers(&self) -> bool {
        answers_in_json(self.mode, self.constrain)
    }

    fn retry_request(&self, reason: &str) -> String {
        let form = if self.json_answers() {
            "Reply with the JSON object only"
        } else {
            "Reply again and end with exactly one line `Action: skill_function(*params)`"
        };
        format!(
            "Your answer could not be used: {reason}. {form}, using only the available actions \
             with valid arguments."
        )
    }

    /// Asks for the next action. Transport failures (after the client's retries) are errors;
    /// answers that stay invalid give a `Turn` without an action.
    pub async fn decide(
        &self,
        prompt: &str,
        library: &SkillLibrary,
        ctx: &ExpandContext<'_>,
    ) -> Result<Turn, LlmError> {
        let options = self.options(library, ctx);
        let mut messages = vec![ChatMessage::user(prompt)];
        let mut turn = Turn {
            action: None,
            attempts: Vec::new(),
            usage: Usage::default(),
            cost_usd: Some(0.0),
            http_attempts: 0,
            unreported: Vec::new(),
        };
        for _ in 0..=self.max_invalid {
            let completion = self.client.chat(&messages, &options).await?;
            turn.http_attempts += completion.attempts;
            let answer = completion.response.text();
            match completion.response.usage() {
                Some(u) => turn.usage.add(u),
                None => {
                    let sent: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
                    turn.unreported.push((sent.join("\n"), answer.clone()));
                }
            }
            // Parsed once: the call is kept for the record even when validation rejects it.
            let (parsed, outcome) = match read_answer(&answer, self.json_answers()) {
                Ok((call, reasoning)) => (
                    Some(call.clone()),
                    validate_call(call, reasoning, library, ctx),
                ),
                Err(e) => (None, Err(e)),
            };
            match outcome {
                Ok(action) => {
                    turn.attempts.push(Attempt {
                        answer,
                        parsed,
                        rejected: None,
                    });
                    turn.action = Some(action);
                    break;
                }
                Err(reason) => {
                    messages.push(ChatMessage::assistant(answer.clone()));
                    messages.push(ChatMessage::user(self.retry_request(&reason)));
                    turn.attempts.push(Attempt {
                        answer,
                        parsed,
                        rejected: Some(reason),
                    });
                }
            }
        }
        turn.cost_usd = self.prices.cost(self.client.model(), turn.usage);
        Ok(turn)
    }

    /// Asks which of `options` to obtain next (the sub-goal policy): the answer's last
    /// `Goal: <name>` line (text) or `{"reasoning", "goal"}` (structured, `goal` one of the
    /// options), matched to an option without regard to case; an answer naming none of them is
    /// sent back with the options up to `llm.max_invalid_answers` times.
    pub async fn choose(&self, prompt: &str, options: &[String]) -> Result<Choice, LlmError> {
        let json = self.json_answers();
        let mut request = ChatOptions {
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            ..ChatOptions::default()
        };
        if json {
            request.response_format =
                Some(constrain::goal_format(options, self.reasoning_max_chars));
        }
        let mut messages = vec![ChatMessage::user(prompt)];
        let mut choice = Choice {
            goal: None,
            reasoning: String::new(),
            attempts: Vec::new(),
            usage: Usage::default(),
            cost_usd: Some(0.0),
            unreported: Vec::new(),
        };
        for _ in 0..=self.max_invalid {
            let completion = self.client.chat(&messages, &request).await?;
            let answer = completion.response.text();
            match completion.response.usage() {
                Some(u) => choice.usage.add(u),
                None => {
                    let sent: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
                    choice.unreported.push((sent.join("\n"), answer.clone()));
                }
            }
            match read_goal(&answer, json, options) {
                Ok((goal, reasoning)) => {
                    choice.attempts.push(Attempt {
                        answer,
                        parsed: None,
                        rejected: None,
                    });
                    choice.goal = Some(goal);
                    choice.reasoning = reasoning;
                    break;
                }
                Err(reason) => {
                    messages.push(ChatMessage::assistant(answer.clone()));
                    messages.push(ChatMessage::user(format!(
                        "Your answer could not be used: {reason}. End with exactly one line \
                         `Goal: <item>` naming one of: {}.",
                        options.join(", ")
                    )));
                    choice.attempts.push(Attempt {
                        answer,
                        parsed: None,
                        rejected: Some(reason),
                    });
                }
            }
        }
        choice.cost_usd = self.prices.cost(self.client.model(), choice.usage);
        Ok(choice)
    }

    /// Counts the tokens of the requests whose response carried no `usage` (o200k_base, the
    /// prompt's own counter) into the turn's usage and cost, and marks the usage `estimated`.
    pub fn count_unreported(&self, turn: &mut Turn, counter: &TokenCounter) {
        self.count_into(
            &mut turn.usage,
            &mut turn.cost_usd,
            &mut turn.unreported,
            counter,
        );
    }

    /// [`Self::count_unreported`] for the sub-goal question.
    pub fn count_unreported_choice(&self, choice: &mut Choice, counter: &TokenCounter) {
        self.count_into(
            &mut choice.usage,
            &mut choice.cost_usd,
            &mut choice.unreported,
            counter,
        );
    }

    fn count_into(
        &self,
        usage: &mut Usage,
        cost_usd: &mut Option<f64>,
        unreported: &mut Vec<(String, String)>,
        counter: &TokenCounter,
    ) {
        if unreported.is_empty() {
            return;
        }
        for (sent, answer) in unreported.drain(..) {
            usage.prompt_tokens += counter.count(&sent) as u64;
            usage.completion_tokens += counter.count(&answer) as u64;
        }
        usage.estimated = true;
        *cost_usd = self.prices.cost(self.client.model(), *usage);
    }
}
