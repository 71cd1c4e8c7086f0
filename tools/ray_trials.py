"""Runs from nothing as Ray tasks: `tools/closed_loop_runs.py --start nothing --ray [ADDRESS]`.

Each world is one task that asks for the CPUs a trial needs (`--trial-cpus`, 2: the game
server, the client and the agent), takes a free X display on whatever node runs it (the game
scripts start their own Xvfb there and pick free ports), starts the game at its own spawn, plays,
stops the game and returns its row, the same row the sequential runner writes. Sessions and game
folders are written under `--out`, which must be a path every node sees (one machine: any path;
a cluster: a shared file system mounted at the same path): nothing is copied back.

A trial that raised (a game that did not start or stopped answering) or whose node or worker
was lost is run again once (Ray's `max_retries` and `retry_exceptions`); failing twice, its row
says `trial_failed` and it is listed apart, never counted as a failure of the agent. Ctrl-C
cancels every trial: each gets a KeyboardInterrupt, whose `finally` stops its game; trials on
the driver's own node are stopped by the driver first (a local cluster dies with the terminal's
Ctrl-C before its workers' `finally` runs), and the runner exits with 130.

Ray is not a dependency of anything else: `pip install ray` (scripts/setup.sh --with-x installs it into
.work/raypy for the test of this runner; put that on PYTHONPATH). How to start a cluster:
docs/sweeps.md.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

# Displays a trial may take: well above those the tests and the docs use (:83-:99).
FIRST_DISPLAY = 120
DISPLAYS = 200


def import_ray():
    try:
        import ray
    except ImportError as e:
        raise SystemExit(f"closed_loop_runs: --ray needs Ray ({e}): `pip install ray`, or "
                         "PYTHONPATH=.work/raypy after scripts/test.sh installed it there")
    return ray


def claim_display() -> tuple[str, Path]:
    """A display number no X server and no other trial on this node holds, and the claim file
    that keeps it ours (its pid in it: a claim whose process is gone is taken over)."""
    for n in range(FIRST_DISPLAY, FIRST_DISPLAY + DISPLAYS):
        if Path(f"/tmp/.X{n}-lock").exists() or Path(f"/tmp/.X11-unix/X{n}").exists():
            continue
        claim = Path(f"/tmp/vistawise-trial-display-{n}.claim")
        try:
            fd = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                holder = int(claim.read_text().strip() or "0")
                os.kill(holder, 0)
                continue
            except (ValueError, ProcessLookupError, OSError):
                claim.unlink(missing_ok=True)  # its trial died: take it on the next pass
                continue
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        return f":{n}", claim
    raise RuntimeError(f"no free X display in :{FIRST_DISPLAY}-:{FIRST_DISPLAY + DISPLAYS - 1}")


def trial(args, world: int, out: str, milestones) -> dict:
    """One world as a Ray task (runs on a worker, on any node)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import closed_loop_runs

    display, claim = claim_display()
    # Where this trial runs, for the driver's last resort on Ctrl-C (`stop_local_trials`).
    marker = Path(out) / f"trial-{world}.json"
    marker.write_text(json.dumps({"node": os.uname().nodename, "pgid": os.getpgid(0), "display": display}))
    t0 = time.time()
    try:
        run = closed_loop_runs.nothing_world(args, world, Path(out), milestones, display, strict=True)
    finally:
        claim.unlink(missing_ok=True)
        marker.unlink(missing_ok=True)
    run["trial"] = {"node": os.uname().nodename, "display": display,
                    "seconds": round(time.time() - t0, 1)}
    return run


def stop_local_trials(args, out: Path, worlds: list[int]) -> None:
    """Ctrl-C in a terminal reaches the whole foreground group, and with it the local cluster
    this driver started: its raylet dies, and its workers with it, before they run the `finally`
    that stops their games. So the driver stops what those trials left on this node: the
    agent (its worker's process group, which the agent's Ctrl-C handling ends with every key
    released) and the game. A trial on another node is not touched from here: its own raylet
    lives on and cancels it."""
    import closed_loop_runs

    here = os.uname().nodename
    for world in worlds:
        marker = out / f"trial-{world}.json"
        try:
            trial_at = json.loads(marker.read_text())
        except (OSError, json.JSONDecodeError):
            continue  # never started, or finished and stopped its game
        if trial_at.get("node") != here:
            continue
        try:
            os.killpg(int(trial_at["pgid"]), signal.SIGINT)
        except (ProcessLookupError, PermissionError, KeyError, ValueError):
            pass
        closed_loop_runs.stop_world_game(args, world, out, trial_at["display"])
        marker.unlink(missing_ok=True)
        print(f"ray: stopped the game of world {world} on {here}", file=sys.stderr, flush=True)


def nothing_runs_on_ray(args, out: Path, batch: dict, milestones) -> list[dict]:
    """Every world of the batch as a Ray task; the rows in world order, runs.json written after
    each one that ends (as the sequential runner does)."""
    import closed_loop_runs

    ray = import_ray()
    args.bin = str(Path(args.bin).resolve())
    # The agent's own settings (VISTAWISE_ORT_LIB and the like) reach every worker.
    env = {k: v for k, v in os.environ.items() if k.startswith("VISTAWISE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parent),
                                         os.environ.get("PYTHONPATH", "")]).strip(os.pathsep)
    # No usage report sent home (nothing outside may be reachable from a node).
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    t0 = time.time()
    ray.init(address=args.ray or None, include_dashboard=False, log_to_driver=True,
             runtime_env={"env_vars": env})
    batch["ray"] = {"address": args.ray or "local or RAY_ADDRESS", "trial_cpus": args.trial_cpus,
                    "nodes": len(ray.nodes()), "cpus": ray.cluster_resources().get("CPU", 0),
                    "start_seconds": round(time.time() - t0, 1)}
    print(f"ray: {batch['ray']['nodes']} node(s), {batch['ray']['cpus']:g} CPUs, "
          f"{args.trial_cpus:g} a trial", flush=True)
    remote = ray.remote(num_cpus=args.trial_cpus, max_retries=1, retry_exceptions=True)(trial)
    refs = {remote.remote(args, world, str(out), milestones): world for world in batch["worlds"]}
    runs: list[dict] = []
    pending = list(refs)
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            world = refs[done[0]]
            try:
                run = ray.get(done[0])
            except ray.exceptions.RayError as e:
                # Raised by the trial twice, or its worker or node lost twice.
                first = str(e).strip().splitlines()
                run = {"world": world, "trial_failed": (first[-1] if first else type(e).__name__)[:300]}
            runs.append(run)
            closed_loop_runs.report_world(run)
            closed_loop_runs.write_runs(out, batch, runs)
    except KeyboardInterrupt:
        print(f"ray: interrupted; cancelling {len(pending)} trial(s) and stopping their games",
              file=sys.stderr, flush=True)
        # First what needs nothing of Ray: a local cluster got the terminal's Ctrl-C too, and
        # calls into it can then wait on it for minutes (a test's interrupted runner did).
        stop_local_trials(args, out, [refs[r] for r in pending])

        def cancel() -> None:
            try:
                for ref in pending:
                    ray.cancel(ref)
                # A cancelled trial's `finally` stops its game (on other nodes: their raylets
                # live on); give them the time a stop takes.
                ray.wait(pending, num_returns=len(pending), timeout=60)
                for ref in pending:
                    ray.cancel(ref, force=True)
                ray.shutdown()
            except Exception as e:  # noqa: BLE001 - the cluster itself may be gone
                print(f"ray: cancelling failed ({e})", file=sys.stderr, flush=True)

        canceller = threading.Thread(target=cancel, daemon=True)
        canceller.start()
        canceller.join(75)
        # Ray's own exit hooks would wait on a dead local cluster again: the trials are
        # stopped and runs.json holds every finished one.
        os._exit(130)
    finally:
        ray.shutdown()
    batch["ray"]["wall_seconds"] = round(time.time() - t0, 1)
    closed_loop_runs.write_runs(out, batch, runs)
    return sorted(runs, key=lambda r: r["world"])
