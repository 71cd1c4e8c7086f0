//! The Rust all-MiniLM-L6-v2 pipeline (WordPiece + ONNX encoder + mean pooling) against the
//! token ids and embeddings sentence-transformers produced (tests/fixtures/minilm/reference.json).

use crate::support;

use vistawise::embedding::{SentenceEncoder, cosine};

fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string(support::fixture("minilm/reference.json")).expect("read");
    serde_json::from_str(&text).expect("json")
}

fn sentences(r: &serde_json::Value) -> &Vec<serde_json::Value> {
    r["sentences"].as_array().expect("sentences")
}

fn floats(v: &serde_json::Value) -> Vec<f32> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number") as f32)
        .collect()
}

#[test]
fn token_ids_and_embeddings_match_sentence_transformers() {
    support::init_ort();
    let mut encoder = SentenceEncoder::load(&support::minilm_dir(), 1).expect("load");
    let r = reference();
    let mut worst = 0f32;
    for s in sentences(&r) {
        let text = s["text"].as_str().expect("text");
        let expected: Vec<i64> = s["input_ids"]
            .as_array()
            .expect("ids")
            .iter()
            .map(|x| x.as_i64().expect("id"))
            .collect();
        let encoding = encoder.tokenizer().encode(text);
        assert_eq!(encoding.ids, expected, "token ids of {text:?}");
        assert_eq!(
            encoding.truncated,
            s["truncated"].as_bool().expect("truncated"),
            "{text:?}"
        );
        let got = encoder.embed(text).expect("embed");
        let want = floats(&s["embedding"]);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            worst = worst.max((g - w).abs());
        }
    }
    assert!(sentences(&r).len() >= 10);
    assert!(worst < 1e-4, "largest embedding difference {worst}");
}

#[test]
fn similar_texts_score_higher_than_unrelated_ones() {
    support::init_ort();
    let mut encoder = SentenceEncoder::load(&support::minilm_dir(), 1).expect("load");
    let mut e = |t: &str| encoder.embed(t).expect("embed");
    let pickaxe = e("Craft a wooden pickaxe");
    let same = e("Obtain a wooden pickaxe.");
    let other = e("Don't fall into lava");
    assert!(cosine(&pickaxe, &same) > 0.7);
    assert!(cosine(&pickaxe, &same) > cosine(&pickaxe, &other) + 0.3);
}

#[test]
fn a_missing_model_folder_names_the_fix() {
    support::init_ort();
    let dir = tempfile::tempdir().expect("temp");
    let err = SentenceEncoder::load(dir.path(), 1)
        .err()
        .expect("must fail")
        .to_string();
    assert!(err.contains("scripts/fetch-minilm.sh"), "{err}");
}
