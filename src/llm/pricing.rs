//! Cost of LLM calls from a price table (`config/prices.toml`).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::client::Usage;
use crate::toml_lines::{self, DataFileError};

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub model: String,
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    /// Prompt tokens served from the provider's prefix cache (OpenAI bills them at a
    /// fraction of the input price); left out, they cost the input price.
    #[serde(default)]
    pub cached_input_per_mtok: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrices {
    price: Vec<Spanned<Price>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    pub prices: Vec<Price>,
    pub source: PathBuf,
}

impl PriceTable {
    pub fn load(path: &Path) -> Result<Self, DataFileError> {
        let text = toml_lines::read(path)?;
        let raw: RawPrices =
            toml_lines::from_str(&text).map_err(|(line, m)| DataFileError::at(path, line, m))?;
        let mut prices = Vec::new();
        for spanned in raw.price {
            let line = toml_lines::line_at(&text, spanned.span().start);
            let p = spanned.into_inner();
            let ok = |v: f64| v.is_finite() && v >= 0.0;
            if p.model.trim().is_empty()
                || !ok(p.input_per_mtok)
                || !ok(p.output_per_mtok)
                || !p.cached_input_per_mtok.is_none_or(ok)
            {
                return Err(DataFileError::at(
                    path,
                    line,
                    "a price needs a model name and non-negative prices",
                ));
            }
            prices.push(p);
        }
        Ok(PriceTable {
            prices,
            source: path.to_path_buf(),
        })
    }

    pub fn find(&self, model: &str) -> Option<&Price> {
        self.prices
            .iter()
            .find(|p| match p.model.strip_suffix('*') {
                Some(prefix) => model.starts_with(prefix),
                None => model == p.model,
            })
    }

    /// Dollars for `usage` on `model`, cached prompt tokens at the cached price; `None` when
    /// the model has no price.
    pub fn cost(&self, model: &str, usage: Usage) -> Option<f64> {
        self.find(model).map(|p| {
            let cached_price = p.cached_input_per_mtok.unwrap_or(p.input_per_mtok);
            (usage.uncached_prompt_tokens() as f64 * p.input_per_mtok
                + usage.cached_tokens as f64 * cached_price
                + usage.completion_tokens as f64 * p.output_per_mtok)
                / 1e6
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_match_wins_and_prefixes_need_a_star() {
        let t = PriceTable {
            prices: vec![
                Price {
                    model: "gpt-4o-mini*".into(),
                    input_per_mtok: 0.15,
                    output_per_mtok: 0.6,
                    cached_input_per_mtok: Some(0.075),
                },
                Price {
                    model: "gpt-4o*".into(),
                    input_per_mtok: 2.5,
                    output_per_mtok: 10.0,
                    cached_input_per_mtok: None,
                },
                Price {
                    model: "exact".into(),
                    input_per_mtok: 1.0,
                    output_per_mtok: 1.0,
                    cached_input_per_mtok: None,
                },
            ],
            source: PathBuf::new(),
        };
        let usage = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 100_000,
            cached_tokens: 0,
            estimated: false,
        };
        assert_eq!(t.cost("gpt-4o-2024-08-06", usage), Some(3.5));
        assert_eq!(t.cost("gpt-4o-mini", usage), Some(0.21));
        assert_eq!(t.cost("exactly", usage), None);
        assert_eq!(t.cost("exact", usage), Some(1.1));
        // Cached prompt tokens at the cached price where there is one, else the input price.
        let cached = Usage {
            cached_tokens: 800_000,
            ..usage
        };
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-9);
        assert!(close(t.cost("gpt-4o-mini", cached), 0.03 + 0.06 + 0.06));
        assert!(close(t.cost("gpt-4o", cached), 3.5));
    }

    #[test]
    fn a_negative_cached_price_is_an_error_at_its_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("prices.toml");
        std::fs::write(
            &path,
            "[[price]]\nmodel = \"a\"\ninput_per_mtok = 1.0\noutput_per_mtok = 1.0\n\n\
             [[price]]\nmodel = \"b\"\ninput_per_mtok = 1.0\noutput_per_mtok = 1.0\n\
             cached_input_per_mtok = -0.5\n",
        )
        .expect("write");
        let err = PriceTable::load(&path).expect_err("negative");
        assert!(err.to_string().contains("prices.toml:6"), "{err}");
    }

    #[test]
    fn the_shipped_table_loads() {
        let t = PriceTable::load(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/prices.toml"
        )))
        .expect("prices");
        assert!(t.find("gpt-4o").is_some());
    }
}
