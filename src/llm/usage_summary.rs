//! What a run of decisions cost in tokens, cache and time: one line for `replay` and
//! `policy eval`. The figure the prompt order is judged by is the share of prompt tokens the
//! endpoint had to compute after the first decision (the first one fills the prefix cache).

use super::client::Usage;

/// One decision: its tokens, the seconds it took and its cost (`None`: unknown).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spent {
    pub usage: Usage,
    pub seconds: f64,
    pub cost_usd: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct UsageSummary {
    pub decisions: usize,
    pub usage: Usage,
    /// The tokens of every decision but the first.
    pub after_first: Usage,
    pub first_s: Option<f64>,
    pub median_after_first_s: Option<f64>,
    /// `None` when some decision's cost is unknown.
    pub cost_usd: Option<f64>,
}

impl UsageSummary {
    pub fn of(spent: &[Spent]) -> Self {
        let mut usage = Usage::default();
        let mut after_first = Usage::default();
        for (i, s) in spent.iter().enumerate() {
            usage.add(s.usage);
            if i > 0 {
                after_first.add(s.usage);
            }
        }
        let mut rest: Vec<f64> = spent.iter().skip(1).map(|s| s.seconds).collect();
        rest.sort_by(f64::total_cmp);
        UsageSummary {
            decisions: spent.len(),
            usage,
            after_first,
            first_s: spent.first().map(|s| s.seconds),
            median_after_first_s: (!rest.is_empty()).then(|| rest[rest.len() / 2]),
            cost_usd: spent.iter().map(|s| s.cost_usd).sum(),
        }
    }

    /// Of the prompt tokens after the first decision, the share the endpoint computed (not
    /// served from its cache); `None` with one decision or none.
    pub fn uncached_share_after_first(&self) -> Option<f64> {
        (self.after_first.prompt_tokens > 0).then(|| {
            self.after_first.uncached_prompt_tokens() as f64 / self.after_first.prompt_tokens as f64
        })
    }

    /// "tokens: P prompt (C cached) + K completion; after the first decision U of P' prompt
    /// tokens computed (X%); S s first decision, M s median after; cost $"
    pub fn line(&self) -> String {
        let u = &self.usage;
        let mut out = format!(
            "tokens: {} prompt ({} cached) + {} completion{}",
            u.prompt_tokens,
            u.cached_tokens,
            u.completion_tokens,
            if u.estimated {
                " (partly counted by the agent)"
            } else {
                ""
            }
        );
        if let Some(share) = self.uncached_share_after_first() {
            out.push_str(&format!(
                "; after the first decision {} of {} prompt tokens computed ({:.0}%)",
                self.after_first.uncached_prompt_tokens(),
                self.after_first.prompt_tokens,
                100.0 * share
            ));
        }
        if let Some(first) = self.first_s {
            out.push_str(&format!("; {first:.1} s first decision"));
        }
        if let Some(m) = self.median_after_first_s {
            out.push_str(&format!(", {m:.1} s median after"));
        }
        out.push_str(&match self.cost_usd {
            Some(c) => format!("; cost ${c:.4}"),
            None => "; cost unknown (no price for this model)".into(),
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spent(prompt: u64, cached: u64, seconds: f64) -> Spent {
        Spent {
            usage: Usage {
                prompt_tokens: prompt,
                completion_tokens: 10,
                cached_tokens: cached,
                estimated: false,
            },
            seconds,
            cost_usd: Some(0.0),
        }
    }

    #[test]
    fn the_first_decision_fills_the_cache_and_is_left_out_of_the_share() {
        let s = UsageSummary::of(&[
            spent(1000, 0, 9.0),
            spent(1000, 800, 2.0),
            spent(1000, 700, 3.0),
            spent(1000, 750, 2.5),
        ]);
        assert_eq!(s.usage.prompt_tokens, 4000);
        assert_eq!(s.usage.cached_tokens, 2250);
        assert_eq!(s.after_first.uncached_prompt_tokens(), 750);
        assert_eq!(s.uncached_share_after_first(), Some(0.25));
        assert_eq!(s.first_s, Some(9.0));
        assert_eq!(s.median_after_first_s, Some(2.5));
        let line = s.line();
        assert!(
            line.contains("after the first decision 750 of 3000 prompt tokens computed (25%)"),
            "{line}"
        );
        // One unknown cost makes the sum unknown.
        let mut unknown = spent(10, 0, 1.0);
        unknown.cost_usd = None;
        assert_eq!(
            UsageSummary::of(&[spent(10, 0, 1.0), unknown]).cost_usd,
            None
        );
        assert_eq!(
            UsageSummary::of(&[spent(10, 0, 1.0)]).uncached_share_after_first(),
            None
        );
    }
}
