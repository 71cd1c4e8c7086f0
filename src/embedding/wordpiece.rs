//! BERT's uncased WordPiece tokenizer, as all-MiniLM-L6-v2 uses it.
//!
//! Written by hand on purpose: the model needs exactly one fixed configuration (Hugging Face's
//! `BertNormalizer` with clean-text, CJK spacing, accent stripping and lowercasing, then
//! `BertPreTokenizer`, then greedy WordPiece), which is about a hundred lines, whereas the
//! `tokenizers` crate brings a large dependency tree for it. The tests pin it to the token ids
//! the Python tokenizer gives (`tests/fixtures/minilm/reference.json`).

use std::collections::HashMap;
use std::path::Path;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

#[derive(Debug, thiserror::Error)]
pub enum VocabError {
    #[error("cannot read vocabulary {path}: {source}")]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("vocabulary {path} lacks the special token {token}")]
    MissingSpecial {
        path: std::path::PathBuf,
        token: &'static str,
    },
}

/// Token ids of one text: `[CLS] pieces [SEP]`, truncated to the model's maximum length.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoding {
    pub ids: Vec<i64>,
    /// True when pieces were dropped to fit the maximum length.
    pub truncated: bool,
}

pub struct WordPiece {
    vocab: HashMap<String, i64>,
    unk: i64,
    cls: i64,
    sep: i64,
    max_len: usize,
}

const MAX_CHARS_PER_WORD: usize = 100;

impl WordPiece {
    /// Loads `vocab.txt` (one token per line, id = line number). `max_len` counts [CLS] and [SEP].
    pub fn from_file(path: &Path, max_len: usize) -> Result<Self, VocabError> {
        let text = std::fs::read_to_string(path).map_err(|source| VocabError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let vocab: HashMap<String, i64> = text
            .lines()
            .enumerate()
            .map(|(i, t)| (t.to_string(), i as i64))
            .collect();
        let special = |token: &'static str| {
            vocab
                .get(token)
                .copied()
                .ok_or_else(|| VocabError::MissingSpecial {
                    path: path.to_path_buf(),
                    token,
                })
        };
        Ok(WordPiece {
            unk: special("[UNK]")?,
            cls: special("[CLS]")?,
            sep: special("[SEP]")?,
            vocab,
            max_len: max_len.max(2),
        })
    }

    pub fn encode(&self, text: &str) -> Encoding {
        let mut pieces = Vec::new();
        for word in pre_tokenize(&normalize(text)) {
            self.word_pieces(&word, &mut pieces);
        }
        let room = self.max_len - 2;
        let truncated = pieces.len() > room;
        pieces.truncate(room);
        let mut ids = Vec::with_capacity(pieces.len() + 2);
        ids.push(self.cls);
        ids.extend(pieces);
        ids.push(self.sep);
        Encoding { ids, truncated }
    }

    /// Greedy longest-match-first; a word with any unmatched position is one [UNK].
    fn word_pieces(&self, word: &str, out: &mut Vec<i64>) {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > MAX_CHARS_PER_WORD {
            out.push(self.unk);
            return;
        }
        let mut found = Vec::new();
        let mut start = 0;
        while start < chars.len() {
            let from = chars[start].0;
            let piece = (start + 1..=chars.len()).rev().find_map(|end| {
                let to = chars.get(end).map_or(word.len(), |c| c.0);
                let sub = &word[from..to];
                let id = if start == 0 {
                    self.vocab.get(sub)
                } else {
                    self.vocab.get(&format!("##{sub}"))
                };
                id.map(|id| (*id, end))
            });
            match piece {
                Some((id, end)) => {
                    found.push(id);
                    start = end;
                }
                None => {
                    out.push(self.unk);
                    return;
                }
            }
        }
        out.extend(found);
    }
}

/// BertNormalizer: clean text, space out CJK ideographs, strip accents, lowercase (in that order).
fn normalize(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .filter(|&c| c != '\0' && c != '\u{fffd}' && !is_control(c))
        .map(|c| if is_whitespace(c) { ' ' } else { c })
        .collect();
    let mut spaced = String::with_capacity(cleaned.len());
    for c in cleaned.chars() {
        if is_cjk(c) {
            spaced.push(' ');
            spaced.push(c);
            spaced.push(' ');
        } else {
            spaced.push(c);
        }
    }
    spaced
        .nfd()
        .filter(|&c| get_general_category(c) != GeneralCategory::NonspacingMark)
        .flat_map(char::to_lowercase)
        .collect()
}

/// BertPreTokenizer: split on whitespace, and every punctuation character is a word of its own.
fn pre_tokenize(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for chunk in text.split(char::is_whitespace) {
        let mut word = String::new();
        for c in chunk.chars() {
            if is_punctuation(c) {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                words.push(c.to_string());
            } else {
                word.push(c);
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Category C* (other), except the three whitespace controls.
fn is_control(c: char) -> bool {
    use GeneralCategory::*;
    !matches!(c, '\t' | '\n' | '\r')
        && matches!(
            get_general_category(c),
            Control | Format | Surrogate | PrivateUse | Unassigned
        )
}

fn is_punctuation(c: char) -> bool {
    use GeneralCategory::*;
    c.is_ascii_punctuation()
        || matches!(
            get_general_category(c),
            ConnectorPunctuation
                | DashPunctuation
                | OpenPunctuation
                | ClosePunctuation
                | InitialPunctuation
                | FinalPunctuation
                | OtherPunctuation
        )
}

/// The CJK ideograph blocks BERT puts spaces around.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPiece {
        let tokens = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "pick", "##ax", "##e", ".", "cafe", "a", "##b",
        ];
        let vocab = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.to_string(), i as i64))
            .collect();
        WordPiece {
            vocab,
            unk: 1,
            cls: 2,
            sep: 3,
            max_len: 6,
        }
    }

    #[test]
    fn greedy_pieces_accents_and_unknown_words() {
        let wp = tiny();
        assert_eq!(wp.encode("Pickaxe.").ids, vec![2, 4, 5, 6, 7, 3]);
        assert_eq!(wp.encode("CAFÉ").ids, vec![2, 8, 3]);
        // "zz" has no piece: the whole word is [UNK], not a partial match.
        assert_eq!(wp.encode("abzz").ids, vec![2, 1, 3]);
    }

    #[test]
    fn truncates_to_max_len_keeping_sep() {
        let e = tiny().encode("a a a a a a");
        assert_eq!(e.ids, vec![2, 9, 9, 9, 9, 3]);
        assert!(e.truncated);
    }

    #[test]
    fn normalizer_cleans_spaces_cjk_and_controls() {
        assert_eq!(normalize("A\u{0}b\tC\u{200b}钻"), "ab c 钻 ");
        assert_eq!(pre_tokenize("don't  stop!"), ["don", "'", "t", "stop", "!"]);
    }
}
