#!/usr/bin/env python3
"""Train vistawise's Minecraft object detector (Ultralytics YOLO, 23 VistaWise classes) - resumable across sessions.

Usage (from the repository root):
    python tools/detector/train.py --data .work/detector/data/data.yaml --name y11n-640            # CPU
    python tools/detector/train.py --data .work/detector/data/data.yaml --name y11n-640 \\
        --device 0 --batch 32 --workers 8                                                          # GPU

Re-running the SAME command resumes from RUN/weights/last.pt (Ultralytics resume=True) at the epoch after the last
completed one; a run killed mid-epoch (SIGTERM, SIGKILL, power loss) loses only the unfinished epoch. When the run is
finished, re-running it only prints where the results are.

Run directory (default .work/detector/runs/<name>; VISTAWISE_TRAIN_DIR replaces .work/detector/runs; --run-dir names
the run directory itself):
    weights/last.pt, weights/best.pt   checkpoints, written atomically after every epoch (best = best val fitness,
                                       0.1*mAP50 + 0.9*mAP50-95 on the val split)
    progress.json                      epoch, total, per-epoch val metrics (+ per class), time per epoch, ETA (atomic)
    progress.log                       the same, one line per epoch, plus session start/resume/finish lines
    ultralytics.log                    Ultralytics' own log lines (no progress bars)
    command.txt, versions.json         exact command line(s) and tool versions
    model.yaml copy, args.yaml, results.csv   (Ultralytics' own files)

Offline: YOLO_OFFLINE=1, YOLO_CONFIG_DIR inside the runs folder with a local TTF as Arial.ttf, model built from a
YAML with pretrained=False, amp=False, plots=False. Training runs from inside the dataset folder with a relative data
path so no absolute local path reaches the checkpoint's data arg (and the ONNX 'description' metadata).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shlex
import signal
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _yolo_env as env  # noqa: E402

DEFAULT_RUNS = env.REPO / ".work" / "detector" / "runs"
DEFAULT_DATA = env.REPO / ".work" / "detector" / "data" / "data.yaml"
DEFAULT_ARCH = "yolo11.yaml"  # ships inside the ultralytics package (ultralytics/cfg/models/11/yolo11.yaml)


def now_iso() -> str:
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="data.yaml (or its folder); default %(default)s")
    ap.add_argument("--name", default="vistawise-det", help="run name (folder under the runs dir)")
    ap.add_argument("--run-dir", help="run directory (overrides VISTAWISE_TRAIN_DIR/<name>)")
    ap.add_argument(
        "--model-yaml",
        default=DEFAULT_ARCH,
        help="model definition: a YAML path or a name shipped with ultralytics (yolo11.yaml, yolov8.yaml, yolo26.yaml)"
        "; default %(default)s",
    )
    ap.add_argument("--scale", default=None, help="model scale n/s/m/l/x (default: from the YAML name, else n)")
    ap.add_argument(
        "--init-weights",
        help="start from these weights (a .pt checkpoint such as an earlier run's best.pt) instead of random ones:"
        " finetuning; layers whose shapes differ (another class count) start fresh",
    )
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--imgsz", type=int, default=640, help="training image size (square, long side)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--nbs", type=int, default=None, help="nominal batch size (default: = --batch, no accumulation)")
    ap.add_argument("--device", default="cpu", help="cpu, or a CUDA index such as 0")
    ap.add_argument("--workers", type=int, default=8, help="dataloader workers (Ultralytics forces 0 on CPU)")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: cpu_count-1, max 8)")
    ap.add_argument("--patience", type=int, default=100, help="early-stopping patience in epochs (0 = off)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Ultralytics train argument (YAML value), repeatable, e.g. --set close_mosaic=10 --set fliplr=0",
    )
    args = ap.parse_args(argv)
    if args.init_weights:
        # Absolute now: training runs from inside the dataset folder.
        args.init_weights = str(Path(args.init_weights).expanduser().resolve())
        if not Path(args.init_weights).is_file():
            ap.error(f"--init-weights: no such file {args.init_weights}")
    return args


def resolve_run_dir(args) -> Path:
    if args.run_dir:
        return Path(args.run_dir).expanduser().resolve()
    root = Path(os.environ.get("VISTAWISE_TRAIN_DIR") or DEFAULT_RUNS).expanduser()
    return (root / args.name).resolve()


def parse_sets(items: list[str]) -> dict:
    import yaml

    out = {}
    for it in items:
        if "=" not in it:
            raise SystemExit(f"error: --set expects KEY=VALUE, got {it!r}")
        k, v = it.split("=", 1)
        out[k.strip()] = yaml.safe_load(v)
    return out


# ----------------------------------------------------------------------------------------------------------------------
# Model definition
# ----------------------------------------------------------------------------------------------------------------------
def write_model_yaml(model_yaml: str, scale: str | None, nc: int, run_dir: Path) -> Path:
    """Copy the model YAML into the run dir with nc set and the scale fixed (file name + a single `scales` entry)."""
    import yaml
    from ultralytics.nn.tasks import guess_model_scale
    from ultralytics.utils.checks import check_yaml

    p = Path(model_yaml).expanduser()
    if not p.is_file():
        # Names shipped with ultralytics; "yolo11n.yaml" -> "yolo11.yaml" + scale n.
        unified = re.sub(r"(\d+)([nslmx])(.+)?$", r"\1\3", p.name)
        src = check_yaml(p.name, hard=False) or check_yaml(unified)
        p = Path(src)
    d = yaml.safe_load(p.read_text())
    scale = scale or guess_model_scale(model_yaml) or None
    scales = d.get("scales")
    if scales:
        scale = scale or next(iter(scales))
        if scale not in scales:
            raise SystemExit(f"error: scale {scale!r} not in {p.name} scales {list(scales)}")
        d["scales"] = {scale: scales[scale]}  # parse_model takes the only scale, whatever the file is called
    d["nc"] = nc
    stem = re.sub(r"(\d+)([nslmx])$", r"\1", p.stem)
    if not re.search(r"yolo(e-)?v?\d+$", stem):
        stem = f"{stem}-yolo0"  # keep guess_model_scale() happy
    prefix = "" if stem.startswith("vistawise") else "vistawise-"
    out = run_dir / f"{prefix}{stem}{scale or ''}.yaml"
    header = f"# Copied by tools/detector/train.py from {p.name} (nc={nc}, scale={scale})\n"
    env.atomic_write_text(out, header + yaml.safe_dump(d, sort_keys=False, default_flow_style=None))
    return out


# ----------------------------------------------------------------------------------------------------------------------
# Progress
# ----------------------------------------------------------------------------------------------------------------------
class Progress:
    """progress.json (atomic) + progress.log, preserved across resumed sessions."""

    def __init__(self, run_dir: Path, names: list[str]):
        self.run_dir = run_dir
        self.json_path = run_dir / "progress.json"
        self.log_path = run_dir / "progress.log"
        self.names = names
        self.state = {}
        if self.json_path.exists():
            try:
                self.state = json.loads(self.json_path.read_text())
            except Exception:  # noqa: BLE001
                self.state = {}
        self.state.setdefault("history", [])
        self.state.setdefault("sessions", [])
        self.session_epoch_times: list[float] = []

    def log(self, line: str) -> None:
        stamp = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S")
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(f"{stamp} {line}\n")
            f.flush()
            os.fsync(f.fileno())
        print(f"[train] {line}", flush=True)

    def save(self) -> None:
        self.state["updated"] = now_iso()
        env.atomic_write_json(self.json_path, self.state)

    def start_session(self, kind: str, start_epoch: int, total: int, command: str) -> None:
        # Drop epochs that will be re-done (a kill between save and progress write, or a fresh restart).
        self.state["history"] = [h for h in self.state["history"] if h["epoch"] <= start_epoch]
        self.state.update(
            status="running",
            epoch=start_epoch,
            epochs=total,
            pid=os.getpid(),
            host=os.uname().nodename,
        )
        self.state["sessions"].append({"kind": kind, "started": now_iso(), "start_epoch": start_epoch + 1})
        self.save()
        self.log(f"session {len(self.state['sessions'])} ({kind}) starting at epoch {start_epoch + 1}/{total}: {command}")

    def set_status(self, status: str, **extra) -> None:
        self.state.update(status=status, **extra)
        if self.state["sessions"]:
            self.state["sessions"][-1].update(ended=now_iso(), status=status)
        self.save()

    def on_epoch(self, trainer, final_eval: bool) -> None:
        m = {k: float(v) for k, v in (trainer.metrics or {}).items()}
        row = {
            "precision": m.get("metrics/precision(B)"),
            "recall": m.get("metrics/recall(B)"),
            "mAP50": m.get("metrics/mAP50(B)"),
            "mAP50-95": m.get("metrics/mAP50-95(B)"),
        }
        per_class = {}
        try:
            box = trainer.validator.metrics.box
            for i, c in enumerate(box.ap_class_index):
                per_class[self.names[int(c)]] = {
                    "mAP50": round(float(box.ap50[i]), 5),
                    "mAP50-95": round(float(box.ap[i]), 5),
                }
        except Exception:  # noqa: BLE001 - per-class numbers are a bonus
            pass
        total = int(trainer.epochs)
        if final_eval:
            self.state["final_best_val"] = {**row, "per_class": per_class, "weights": "weights/best.pt"}
            self.log(
                f"final val of best.pt: mAP50={row['mAP50']:.4f} mAP50-95={row['mAP50-95']:.4f} "
                f"P={row['precision']:.4f} R={row['recall']:.4f}"
            )
            self.save()
            return
        epoch = int(trainer.epoch) + 1  # 1-based, completed
        dt = float(trainer.epoch_time or 0.0)
        self.session_epoch_times.append(dt)
        recent = self.session_epoch_times[-5:]
        mean_dt = sum(recent) / len(recent)
        remaining = max(0, total - epoch)
        losses = {}
        try:
            losses = {k: round(float(v), 5) for k, v in trainer.label_loss_items(trainer.tloss, prefix="train").items()}
        except Exception:  # noqa: BLE001
            pass
        losses.update({k: round(v, 5) for k, v in m.items() if k.startswith("val/")})
        entry = {
            "epoch": epoch,
            "time": now_iso(),
            "epoch_seconds": round(dt, 2),
            **{k: (round(v, 5) if v is not None else None) for k, v in row.items()},
            "fitness": round(float(trainer.fitness), 5) if trainer.fitness is not None else None,
            "lr": {k: round(float(v), 8) for k, v in (getattr(trainer, "lr", None) or {}).items()},
            "losses": losses,
            "per_class": per_class,
        }
        self.state["history"] = [h for h in self.state["history"] if h["epoch"] < epoch] + [entry]
        # Ultralytics rewrites best.pt whenever fitness >= the best so far: ties go to the latest epoch.
        best = max(self.state["history"], key=lambda h: (h.get("fitness") or -1.0, h["epoch"]))
        eta = mean_dt * remaining
        self.state.update(
            epoch=epoch,
            epochs=total,
            last_epoch_seconds=round(dt, 2),
            mean_epoch_seconds=round(mean_dt, 2),
            eta_seconds=round(eta),
            eta_iso=datetime.fromtimestamp(time.time() + eta).astimezone().isoformat(timespec="seconds"),
            best_epoch=best["epoch"],
            best_val={k: best.get(k) for k in ("mAP50", "mAP50-95", "precision", "recall", "fitness")},
            early_stop_patience=getattr(trainer.stopper, "patience", None),
        )
        self.save()
        self.log(
            f"epoch {epoch}/{total} {dt:.1f}s val mAP50={row['mAP50']:.4f} mAP50-95={row['mAP50-95']:.4f} "
            f"P={row['precision']:.4f} R={row['recall']:.4f} | best epoch {best['epoch']} | "
            f"ETA {eta / 60:.1f} min"
        )


# ----------------------------------------------------------------------------------------------------------------------
# Trainer with crash-safe checkpoints
# ----------------------------------------------------------------------------------------------------------------------
_BLOCK = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}


def _replace_atomically(pairs: list[tuple[Path, Path]]) -> None:
    """fsync + rename tmp -> dst for each pair with termination signals blocked, so the set lands together."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCK)
    try:
        for tmp, dst in pairs:
            if tmp.exists():
                with open(tmp, "rb") as f:
                    os.fsync(f.fileno())
                os.replace(tmp, dst)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def read_results_csv_stdlib(path: Path) -> dict:
    """results.csv as {column: [values]} (numbers as float), like polars' to_dict(); {} if unreadable."""
    import csv

    def number(v: str):
        try:
            return float(v)
        except ValueError:
            return v

    try:
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f))
    except (OSError, csv.Error):
        return {}
    if not rows:
        return {}
    return {k.strip(): [number(r[k].strip()) for r in rows] for k in rows[0]}


def make_trainer_class():
    import ultralytics.engine.trainer as ut
    from ultralytics.models.yolo.detect import DetectionTrainer

    # strip_optimizer() (end of training) rewrites last.pt/best.pt in place with torch.save: make it atomic too.
    if not getattr(ut.strip_optimizer, "_vistawise_atomic", False):
        _orig_strip = ut.strip_optimizer

        def strip_optimizer_atomic(f="best.pt", s="", updates=None):
            f = Path(f)
            dst = Path(s) if s else f
            tmp = dst.with_name(f".{dst.stem}.strip.tmp{dst.suffix}")
            out = _orig_strip(f, s=str(tmp), updates=updates)
            _replace_atomically([(tmp, dst)])
            return out

        strip_optimizer_atomic._vistawise_atomic = True
        ut.strip_optimizer = strip_optimizer_atomic

    class VistawiseTrainer(DetectionTrainer):
        """DetectionTrainer whose per-epoch last.pt/best.pt are written to temp files and renamed atomically."""

        def read_results_csv(self):
            # Ultralytics reads results.csv (stored in every checkpoint) with polars. A GPU box that has torch
            # but not polars (ultralytics installed --no-deps from a carried wheel) reads it with the csv module.
            try:
                import polars  # noqa: F401
            except ImportError:
                return read_results_csv_stdlib(Path(self.csv))
            return super().read_results_csv()

        def save_model(self):
            last, best = self.last, self.best
            tmp_last = last.with_name(".last.tmp.pt")
            tmp_best = best.with_name(".best.tmp.pt")
            for t in (tmp_last, tmp_best):
                t.unlink(missing_ok=True)
            self.last, self.best = tmp_last, tmp_best
            try:
                ok = super().save_model()
            finally:
                self.last, self.best = last, best
            # best first: if we die in between, last.pt is the previous epoch and that epoch is simply redone.
            _replace_atomically([(tmp_best, best), (tmp_last, last)])
            return ok

    return VistawiseTrainer


def checkpoint_state(last: Path):
    """('none' | 'resumable' | 'finished' | 'corrupt', epoch(0-based) or None, train_args or {})."""
    if not last.exists():
        return "none", None, {}
    import torch

    try:
        ck = torch.load(str(last), map_location="cpu", weights_only=False)
    except Exception as e:  # noqa: BLE001
        return "corrupt", str(e), {}
    ep = ck.get("epoch", -1)
    if ep is not None and ep >= 0 and ck.get("optimizer") is not None:
        return "resumable", int(ep), ck.get("train_args") or {}
    return "finished", None, ck.get("train_args") or {}


def trim_results_csv(run_dir: Path, completed: int) -> None:
    """Drop results.csv rows for epochs past the checkpoint (they will be re-run and re-appended)."""
    csv = run_dir / "results.csv"
    if not csv.exists():
        return
    lines = csv.read_text().splitlines()
    if not lines:
        return
    keep = [lines[0]]
    for ln in lines[1:]:
        try:
            if int(float(ln.split(",")[0])) <= completed:
                keep.append(ln)
        except ValueError:
            keep.append(ln)
    if len(keep) != len(lines):
        env.atomic_write_text(csv, "\n".join(keep) + "\n")


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.time()
    if Path(args.model_yaml).expanduser().is_file():  # resolve before we chdir into the dataset folder
        args.model_yaml = str(Path(args.model_yaml).expanduser().resolve())
    run_dir = resolve_run_dir(args)
    data_yaml = env.resolve_data_yaml(args.data)
    env.guard_heldout(data_yaml)
    threads = args.threads or env.default_threads()
    cpu = str(args.device).lower() == "cpu"
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "weights").mkdir(exist_ok=True)
    env.setup_offline(run_dir.parent / ".ultralytics-config", threads, cpu_only=cpu)
    extra = parse_sets(args.set)

    data = env.load_yaml(data_yaml)
    names = env.names_list(data.get("names") or [])
    nc = int(data.get("nc") or len(names))
    if names != env.VISTAWISE_NAMES:
        print(f"warning: {data_yaml} names differ from the 23 VistaWise classes: {names}", file=sys.stderr)

    command = shlex.join([sys.executable, *sys.argv]) if argv is None else shlex.join(["train.py", *argv])
    cwd = os.getcwd()

    import ultralytics  # noqa: F401  (after setup_offline)

    env.check_ultralytics_version()
    env.pin_threads(threads)
    from ultralytics import YOLO
    from ultralytics.utils import LOGGER

    fh = logging.FileHandler(run_dir / "ultralytics.log", encoding="utf-8")
    fh.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    LOGGER.addHandler(fh)

    last = run_dir / "weights" / "last.pt"
    state, ep, ck_args = checkpoint_state(last)
    progress = Progress(run_dir, names)
    if state == "corrupt":
        raise SystemExit(
            f"error: {last} cannot be loaded ({ep}). Move it away (weights/best.pt may still be good) to start "
            "over, or use a new --name."
        )
    if state == "finished":
        progress.log(f"run already finished ({last}); nothing to do. Export with tools/detector/export.py")
        if progress.state.get("status") != "finished":
            progress.set_status("finished")
        return 0

    with open(run_dir / "command.txt", "a" if state == "resumable" else "w", encoding="utf-8") as f:
        if state == "resumable":
            f.write(f"# {now_iso()} resumed (epoch {ep + 2}) with:\n")
        f.write(f"cd {shlex.quote(cwd)} && {command}\n")
    vers = env.versions()
    vers["threads"] = threads
    env.atomic_write_json(run_dir / "versions.json", vers)

    # Progress callbacks.
    saved = {"epoch": None}

    def on_model_save(trainer):
        saved["epoch"] = trainer.epoch

    def on_fit_epoch_end(trainer):
        # final_eval() (best.pt on val, after the last epoch) calls this hook too, with epoch+1 and no save before it.
        final_eval = saved["epoch"] != trainer.epoch
        progress.on_epoch(trainer, final_eval)

    def on_train_end(trainer):
        progress.set_status("finished", finished=now_iso(), train_hours=round((time.time() - t0) / 3600, 4))
        progress.log(f"finished: best.pt={trainer.best} last.pt={trainer.last}")

    def on_sigterm(signum, frame):
        progress.set_status("interrupted", interrupted_by=signal.Signals(signum).name)
        progress.log(f"interrupted by {signal.Signals(signum).name}; re-run the same command to resume")
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)
    signal.signal(signal.SIGHUP, on_sigterm)

    Trainer = make_trainer_class()
    # Relative data path from inside the dataset folder: no absolute local path in args['data'] / ONNX metadata.
    os.chdir(data_yaml.parent)
    try:
        if state == "resumable":
            trim_results_csv(run_dir, ep + 1)
            model = YOLO(str(last), task="detect")
            total = int(ck_args.get("epochs", args.epochs))
            if total != args.epochs:
                print(f"warning: resuming keeps the run's epochs={total} (asked {args.epochs})", file=sys.stderr)
            progress.start_session("resume", ep + 1, total, command)
            train_kw = dict(
                resume=True,
                data=data_yaml.name,
                save_dir=str(run_dir),  # the run folder may have been moved/copied since
                device=args.device,
                workers=args.workers,
                batch=args.batch,
                patience=args.patience,
                plots=False,
            )
        else:
            yaml_path = write_model_yaml(args.model_yaml, args.scale, nc, run_dir)
            model = YOLO(str(yaml_path), task="detect")
            if args.init_weights:
                # Ultralytics copies every tensor whose name and shape match.
                model.load(args.init_weights)
            progress.state = {
                "history": [],
                "sessions": [],
                "model_yaml": yaml_path.name,
                "model_yaml_source": args.model_yaml,
                "data_yaml": str(data_yaml),
                "imgsz": args.imgsz,
                "batch": args.batch,
                "device": args.device,
                "init_weights": args.init_weights,
            }
            progress.start_session("fresh", 0, args.epochs, command)
            train_kw = dict(
                data=data_yaml.name,
                epochs=args.epochs,
                imgsz=args.imgsz,
                batch=args.batch,
                nbs=args.nbs or args.batch,  # no gradient accumulation by default (small batches converge faster)
                device=args.device,
                workers=args.workers,
                patience=args.patience,
                seed=args.seed,
                deterministic=True,
                pretrained=bool(args.init_weights),
                amp=False,
                plots=False,
                val=True,
                save=True,
                save_period=-1,
                save_dir=str(run_dir),
                exist_ok=True,
                verbose=True,
            )
            train_kw.update(extra)
        model.add_callback("on_model_save", on_model_save)
        model.add_callback("on_fit_epoch_end", on_fit_epoch_end)
        model.add_callback("on_train_end", on_train_end)
        model.train(trainer=Trainer, **train_kw)
    except KeyboardInterrupt:
        progress.set_status("interrupted", interrupted_by="SIGINT")
        progress.log("interrupted by SIGINT; re-run the same command to resume")
        return 130
    except SystemExit:
        raise
    except BaseException as e:
        progress.set_status("failed", error=f"{type(e).__name__}: {e}")
        progress.log(f"failed: {type(e).__name__}: {e}")
        raise
    finally:
        os.chdir(cwd)
    print(f"[train] done in {(time.time() - t0) / 60:.1f} min; run dir {run_dir}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
