#!/usr/bin/env python3
"""Export a trained detector checkpoint to ONNX for vistawise and verify it.

Usage (from the repository root):
    python tools/detector/export.py --weights .work/detector/runs/NAME/weights/best.pt \\
        --out models/minecraft-detector.onnx [--imgsz 384 640] [--end2end]

Default: input images [1, 3, 384, 640] (h, w: fits 16:9 frames with little padding), dynamic=False, simplify=True
(onnxslim), opset 18, raw head output0 [1, 4+nc, N] (N = anchors, NMS done by the caller).
After the export, every Softmax that is not over its last axis (the DFL head's) is rewritten as the reductions it is
defined as (onnx_rewrite.py: about 3 ms less a frame in ONNX Runtime on one CPU thread); the result must match the
Ultralytics graph's output within REWRITE_TOLERANCE on random inputs. --keep-graph skips it.
--dynamic: any input size (Ultralytics dynamic=True; give --imgsz 640): vistawise fits each frame into --imgsz and
pads only to a multiple of the stride (640x384 for 16:9, 640x640 for a square frame), as Ultralytics' predict does.
--end2end: NMS inside the graph (Ultralytics nms=True), output0 [1, max_det, 6] = x1, y1, x2, y2, conf, cls, with
--conf/--iou/--max-det baked in (defaults match config/default.toml: 0.25 / 0.45 / 300).

After export it checks that onnxruntime loads and runs the model, that the input shape is the one asked for, that the
metadata `names` are the 23 VistaWise classes in order (or those of --data), and that no absolute local path is in the
metadata (`description`, `args`, any value; rewritten with the onnx package if found). Then it writes
<out>.export.json: sha256 of the ONNX, export args, ONNX I/O and metadata, tool versions, and the training run's
command, epochs and best val metrics (read from the run dir = weights/..).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _yolo_env as env  # noqa: E402
import onnx_rewrite  # noqa: E402

DEFAULT_IMGSZ = [384, 640]
# Largest |difference| allowed between the rewritten and the Ultralytics graph's output (box coordinates are in input
# pixels, scores in [0, 1]; float reassociation gives about 1e-4).
REWRITE_TOLERANCE = 1e-2
DEFAULT_OPSET = 18  # Ultralytics' own choice for torch>=2.4 (best_onnx_opset); onnxruntime 1.31 supports it


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", required=True, help="RUN/weights/best.pt")
    ap.add_argument("--out", default=str(env.REPO / "models" / "minecraft-detector.onnx"))
    ap.add_argument("--imgsz", type=int, nargs="+", default=DEFAULT_IMGSZ, help="H W (or one value for square)")
    ap.add_argument("--end2end", action="store_true", help="embed NMS: output [1, max_det, 6]")
    ap.add_argument(
        "--dynamic",
        action="store_true",
        help="any input size up to --imgsz (each frame gets the smallest stride-multiple rectangle)",
    )
    ap.add_argument("--conf", type=float, default=0.25, help="--end2end only: confidence threshold baked in")
    ap.add_argument("--iou", type=float, default=0.45, help="--end2end only: NMS IoU threshold baked in")
    ap.add_argument("--max-det", type=int, default=300, help="--end2end only: detections per image")
    ap.add_argument("--opset", type=int, default=DEFAULT_OPSET, help="ONNX opset (0 = Ultralytics' choice)")
    ap.add_argument("--data", help="data.yaml whose names the model must carry (default: the 23 VistaWise classes)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--keep-graph", action="store_true", help="ship Ultralytics' graph as it is (no softmax rewrite)")
    return ap.parse_args(argv)


# ----------------------------------------------------------------------------------------------------------------------
# Metadata hygiene
# ----------------------------------------------------------------------------------------------------------------------
_ABS_PATH = re.compile(r"(?:(?<![\w.:/])/(?:[\w.@+-]+/)+[\w.@+-]*)|(?:\b[A-Za-z]:[\\/][^'\",}\s]*)")


def _local_prefixes() -> list[str]:
    out = {str(env.REPO), str(Path.home()), os.getcwd(), tempfile.gettempdir(), "/work/", "/home/", "/tmp/", "/root/"}
    return sorted((p for p in out if p and p != "/"), key=len, reverse=True)


def find_abs_paths(text: str) -> list[str]:
    hits = [m.group(0) for m in _ABS_PATH.finditer(text)]
    hits = [h for h in hits if not h.startswith("//")]  # URLs are matched below anyway
    hits = [h for h in hits if not re.search(r"https?:" + re.escape(h), text)]
    hits += [p for p in _local_prefixes() if p in text and not any(p in h for h in hits)]
    return hits


def _basename(p: str) -> str:
    return re.split(r"[\\/]", p.rstrip("\\/"))[-1]


def scrub_value(key: str, value: str) -> str:
    """Replace absolute paths in a metadata value by their file name."""
    if key == "args":
        try:
            d = ast.literal_eval(value)
            if isinstance(d, dict):
                for k, v in d.items():
                    if isinstance(v, str) and find_abs_paths(v):
                        d[k] = _ABS_PATH.sub(lambda m: _basename(m.group(0)), v)
                return str(d)
        except (ValueError, SyntaxError):
            pass
    return _ABS_PATH.sub(lambda m: _basename(m.group(0)), value)


def clean_metadata(onnx_path: Path) -> list[str]:
    """Rewrite metadata values that carry absolute local paths; return what was changed."""
    import onnx

    m = onnx.load(str(onnx_path))
    changed = []
    for p in m.metadata_props:
        if find_abs_paths(p.value):
            new = scrub_value(p.key, p.value)
            changed.append(f"{p.key}: {p.value!r} -> {new!r}")
            p.value = new
    if changed:
        onnx.save(m, str(onnx_path))
    return changed


# ----------------------------------------------------------------------------------------------------------------------
# Graph rewrite
# ----------------------------------------------------------------------------------------------------------------------
def input_sizes(imgsz: list[int], dynamic: bool) -> list[list[int]]:
    """The input sizes a model is checked at: its own, and for a dynamic model also a 16:9 frame's rectangle."""
    return [list(imgsz)] + ([[imgsz[0] * 3 // 5 // 32 * 32, imgsz[1]]] if dynamic else [])


def rewrite_graph(onnx_path: Path, imgsz: list[int], dynamic: bool) -> dict:
    """Apply onnx_rewrite.softmax_to_reductions in place; refuse a result that computes something else."""
    import numpy as np
    import onnx

    model = onnx.load(str(onnx_path))
    names = onnx_rewrite.softmax_to_reductions(model)
    if not names:
        return {"softmax_to_reductions": []}
    original = onnx_path.with_name(onnx_path.stem + ".ultralytics.onnx")
    shutil.copy(onnx_path, original)
    onnx.checker.check_model(model)
    onnx.save(model, str(onnx_path))
    rng = np.random.default_rng(0)
    inputs = [rng.random((1, 3, *hw), dtype=np.float32) for hw in input_sizes(imgsz, dynamic)]
    diff = onnx_rewrite.max_output_difference(original, onnx_path, inputs)
    if not diff <= REWRITE_TOLERANCE:
        raise SystemExit(
            f"error: the rewritten graph's output differs from Ultralytics' by {diff:.3g} (> {REWRITE_TOLERANCE}); "
            f"both left at {onnx_path.parent} (--keep-graph exports without the rewrite)"
        )
    original.unlink()
    print(f"[export] softmax rewritten as reductions: {names} (max |output difference| {diff:.2g})")
    return {"softmax_to_reductions": names, "max_abs_output_difference": diff}


# ----------------------------------------------------------------------------------------------------------------------
# Verification
# ----------------------------------------------------------------------------------------------------------------------
def verify(
    onnx_path: Path, imgsz: list[int], expected_names: list[str], end2end: bool, max_det: int, dynamic: bool = False
) -> dict:
    import numpy as np
    import onnx
    import onnxruntime as ort

    problems = []
    m = onnx.load(str(onnx_path))
    onnx.checker.check_model(m)
    meta = {p.key: p.value for p in m.metadata_props}
    names = env.names_list(ast.literal_eval(meta.get("names", "{}")))
    if names != expected_names:
        problems.append(f"metadata names {names} != expected {expected_names}")
    meta_imgsz = ast.literal_eval(meta.get("imgsz", "[]"))
    if list(meta_imgsz) != list(imgsz):
        problems.append(f"metadata imgsz {meta_imgsz} != asked {imgsz}")
    for k, v in meta.items():
        if hits := find_abs_paths(v):
            problems.append(f"metadata {k!r} still has absolute path(s) {hits}")

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()
    outs = sess.get_outputs()
    if dynamic:
        # Symbolic height and width (strings), fixed channels.
        shape_ok = len(inp) == 1 and len(inp[0].shape) == 4 and all(isinstance(d, str) for d in inp[0].shape[2:])
    else:
        shape_ok = len(inp) == 1 and list(inp[0].shape) == [1, 3, *imgsz]
    if not shape_ok:
        want_in = "[N, 3, height, width]" if dynamic else f"[1, 3, {imgsz[0]}, {imgsz[1]}]"
        problems.append(f"input {[(i.name, i.shape) for i in inp]} != {want_in}")
    # A dynamic model must run at its full size and at a smaller rectangle (a 16:9 frame's).
    sizes = input_sizes(imgsz, dynamic)
    nc = len(expected_names)
    for hw in sizes:
        x = np.full((1, 3, *hw), 114 / 255, dtype=np.float32)
        y = sess.run(None, {inp[0].name: x})[0]
        if end2end:
            want = [1, max_det, 6]
        else:
            strides = (8, 16, 32)
            want = [1, 4 + nc, sum((hw[0] // s) * (hw[1] // s) for s in strides)]
        if list(y.shape) != want:
            problems.append(f"output shape {list(y.shape)} at input {hw} != expected {want}")
        if not np.isfinite(y).all():
            problems.append(f"output has non-finite values on a grey {hw} image")
    return {
        "problems": problems,
        "ir_version": m.ir_version,
        "opset": {(o.domain or "ai.onnx"): o.version for o in m.opset_import},
        "inputs": [{"name": i.name, "type": i.type, "shape": list(i.shape)} for i in inp],
        "outputs": [{"name": o.name, "type": o.type, "shape": list(o.shape)} for o in outs],
        "metadata": meta,
    }


# ----------------------------------------------------------------------------------------------------------------------
# Training-run provenance
# ----------------------------------------------------------------------------------------------------------------------
def run_info(weights: Path, ckpt: dict) -> dict:
    run_dir = weights.resolve().parent.parent
    info = {"run_dir": env.rel(run_dir), "weights": env.rel(weights)}
    cmd = run_dir / "command.txt"
    if cmd.exists():
        info["command"] = cmd.read_text().strip().splitlines()
    prog = run_dir / "progress.json"
    if prog.exists():
        try:
            p = json.loads(prog.read_text())
            hist = p.get("history") or []
            info.update(
                status=p.get("status"),
                model_yaml=p.get("model_yaml"),
                epochs_completed=p.get("epoch"),
                epochs_planned=p.get("epochs"),
                best_epoch=p.get("best_epoch"),
                best_val=p.get("best_val"),
                final_val_of_best=p.get("final_best_val"),
                train_seconds=round(sum(h.get("epoch_seconds") or 0 for h in hist), 1),
            )
        except Exception as e:  # noqa: BLE001
            info["progress_error"] = str(e)
    vers = run_dir / "versions.json"
    if vers.exists():
        info["train_versions"] = json.loads(vers.read_text())
    ta = ckpt.get("train_args") or {}
    info["train_args"] = {
        k: ta.get(k)
        for k in ("model", "data", "epochs", "imgsz", "batch", "nbs", "optimizer", "lr0", "seed", "device", "patience")
        if k in ta
    }
    if isinstance(info["train_args"].get("model"), str):
        info["train_args"]["model"] = Path(info["train_args"]["model"]).name
    tm = ckpt.get("train_metrics") or {}
    if tm:
        info["checkpoint_val_metrics"] = {k: round(float(v), 5) for k, v in tm.items()}
    info["checkpoint_date"] = ckpt.get("date")
    return info


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.time()
    imgsz = args.imgsz * 2 if len(args.imgsz) == 1 else args.imgsz
    if len(imgsz) != 2 or any(v % 32 for v in imgsz):
        raise SystemExit(f"error: --imgsz must be H W, multiples of 32 (got {args.imgsz})")
    weights = Path(args.weights).expanduser().resolve()
    if not weights.is_file():
        raise SystemExit(f"error: weights not found: {weights}")
    out = Path(args.out).expanduser().resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    expected = (
        env.names_list(env.load_yaml(env.resolve_data_yaml(args.data))["names"]) if args.data else env.VISTAWISE_NAMES
    )
    threads = args.threads or env.default_threads()
    work = Path(tempfile.mkdtemp(prefix=".export-", dir=out.parent))
    env.setup_offline(env.REPO / ".work" / "detector" / ".ultralytics-config", threads, cpu_only=True)

    import torch  # noqa: F401

    env.check_ultralytics_version()
    env.pin_threads(threads)
    from ultralytics import YOLO

    ok = False
    try:
        src = work / "model.pt"  # Ultralytics writes the .onnx next to the .pt: keep it out of the run dir
        shutil.copy(weights, src)
        ckpt = torch.load(str(src), map_location="cpu", weights_only=False)
        export_args = dict(
            format="onnx",
            imgsz=imgsz,
            dynamic=bool(args.dynamic),
            simplify=True,
            batch=1,
            device="cpu",
            nms=bool(args.end2end),
        )
        if args.opset:
            export_args["opset"] = args.opset
        if args.end2end:
            export_args.update(conf=args.conf, iou=args.iou, max_det=args.max_det, agnostic_nms=False)
        cwd = os.getcwd()
        os.chdir(work)  # anything Ultralytics resolves against the cwd stays in the temp folder
        try:
            f = YOLO(str(src), task="detect").export(**export_args)
        finally:
            os.chdir(cwd)
        f = Path(f)
        changed = clean_metadata(f)
        for c in changed:
            print(f"[export] metadata rewritten: {c}")
        rewrites = {} if args.keep_graph else rewrite_graph(f, imgsz, bool(args.dynamic))
        report = verify(f, imgsz, expected, args.end2end, args.max_det, dynamic=bool(args.dynamic))
        if report["problems"]:
            for p in report["problems"]:
                print(f"[export] PROBLEM: {p}", file=sys.stderr)
            raise SystemExit(f"error: exported model failed verification; left at {f}")
        tmp_out = out.with_name(f".{out.name}.tmp")
        shutil.copy(f, tmp_out)
        os.replace(tmp_out, out)
        ok = True
    finally:
        if ok or not any(work.glob("*.onnx")):  # keep a failed export around for inspection
            shutil.rmtree(work, ignore_errors=True)

    meta = report.pop("metadata")
    info = {
        "file": out.name,
        "sha256": env.sha256_file(out),
        "size_bytes": out.stat().st_size,
        "export": {
            "command": ["python", "tools/detector/export.py", *(argv if argv is not None else sys.argv[1:])],
            "imgsz_hw": imgsz,
            "end2end": bool(args.end2end),
            "output": (
                f"output0 [1, {args.max_det}, 6] = x1, y1, x2, y2, conf, cls (input pixels)"
                if args.end2end
                else f"output0 [1, 4+{len(expected)}, N] = cx, cy, w, h (input pixels), then {len(expected)} class scores"
            ),
            **{k: v for k, v in export_args.items() if k != "device"},
            "opset_used": report["opset"].get("ai.onnx"),
            "metadata_rewritten": changed,
            "graph_rewrites": rewrites,
        },
        "onnx": {**report, "metadata": {k: v for k, v in meta.items()}},
        "versions": env.versions(),
        "training": run_info(weights, ckpt),
    }
    info["versions"].pop("cuda_available", None)
    env.atomic_write_json(out.with_name(out.name + ".export.json"), info)
    print(
        f"[export] {env.rel(out)} ({info['size_bytes'] / 1e6:.2f} MB, sha256 {info['sha256'][:16]}...) "
        f"input {report['inputs'][0]['shape']} output {report['outputs'][0]['shape']}; "
        f"verified with onnxruntime; {env.rel(out)}.export.json written ({time.time() - t0:.0f}s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
