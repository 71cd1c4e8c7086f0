//! How the model is asked to answer: a JSON schema the endpoint enforces, or free text.

use serde_json::{Value as Json, json};

use crate::config::{Constrain, OutputMode};

/// Whether answers are JSON objects (structured mode with a JSON schema) or text.
pub fn answers_in_json(mode: OutputMode, constrain: Constrain) -> bool {
    mode == OutputMode::Structured && constrain == Constrain::JsonSchema
}

/// An OpenAI-style strict `response_format` holding `schema` under `name`.
pub fn schema_format(name: &str, schema: Json) -> Json {
    json!({
        "type": "json_schema",
        "json_schema": {"name": name, "strict": true, "schema": schema}
    })
}
