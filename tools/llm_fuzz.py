#!/usr/bin/env python3
"""Plays `vistawise play --frames DIR --dry-run --policy llm` against a hostile OpenAI-compatible
endpoint and counts what got through.

The endpoint (a local HTTP server in this process) answers every request with one hostile kind,
drawn at random from a fixed seed: garbage and HTML bodies, truncated JSON, empty or null
choices, bad `usage`, unknown skills, out-of-range, non-integer and non-finite arguments, 100 KB
answers, unicode look-alikes, 429/500/503 with odd Retry-After values, connection resets,
time-outs, and well-formed calls of random skills with random arguments (some in range).

Each session is then read back: every accepted action is checked against `skills list --json`
(known skill, arity, ranges, whole numbers for ints, positions inside the window), every session
must end with an end record and render with `vistawise report`, and no process may panic
(exit 101). Prints the counts and writes them to OUT/counts.json.

    python3 tools/llm_fuzz.py --answers 10000 --out .work/llm-fuzz
"""

import argparse
import http.server
import json
import math
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = REPO / "target" / "debug" / "vistawise"
FRAMES = REPO / "tests" / "fixtures" / "detector" / "images"
WINDOW_FRAME = "wide_16x9.png"


class Hostile:
    """The answers, one per request, from a seeded generator."""

    def __init__(self, seed, skills):
        self.rng = random.Random(seed)
        self.skills = skills
        self.lock = threading.Lock()
        self.served = {}

    def number(self):
        r = self.rng
        return r.choice([
            str(r.randint(-3000, 3000)),
            f"{r.uniform(-50, 50):.3f}",
            r.choice(["nan", "NaN", "inf", "-inf", "1e309", "-1e400", "1e-400", "\"7\"",
                      "0x10", "1_000", "\uff14", "", " ", "--1", "1e9"]),
        ])

    def call(self):
        r = self.rng
        skill = r.choice(self.skills)
        n = len(skill["params"]) + r.choice([0, 0, 0, -1, 1])
        args = []
        for i in range(max(n, 0)):
            p = skill["params"][i] if i < len(skill["params"]) else None
            if p and r.random() < 0.6:
                lo = p.get("min", 0 if p["type"] in ("x", "y") else -10)
                hi = p.get("max", 1279 if p["type"] == "x" else 719 if p["type"] == "y" else 10)
                v = r.uniform(lo, hi)
                args.append(str(int(v)) if p["type"] in ("int", "x", "y") else f"{v:.2f}")
            else:
                args.append(self.number())
            if p and r.random() < 0.2:
                args[-1] = f"{p['name']}={args[-1]}"
        name = skill["name"] if r.random() < 0.9 else r.choice(["fly_away", "mine_log2", "", "rm -rf"])
        return f"{name}({', '.join(args)})"

    def respond(self):
        """(status, headers, body bytes) or a special action: 'reset' / ('sleep', s, inner)."""
        r = self.rng
        with self.lock:
            kind = r.choices(
                ["call", "json_call", "garbage", "html", "truncated", "no_choices", "null_content",
                 "bad_usage", "no_usage", "huge", "unicode", "status", "reset", "timeout"],
                weights=[30, 8, 6, 3, 3, 3, 3, 3, 6, 2, 4, 8, 2, 0.4],
            )[0]
            self.served[kind] = self.served.get(kind, 0) + 1
            usage = {"prompt_tokens": r.randint(100, 2000), "completion_tokens": r.randint(1, 50)}

            def completion(content, usage=usage):
                body = {"model": "fuzz", "choices": [{"message": {"role": "assistant", "content": content}}]}
                if usage is not None:
                    body["usage"] = usage
                return 200, {}, json.dumps(body).encode()

            if kind == "call":
                return completion(r.choice(["", "Reasoning: the trunk.\n", "```\n"]) + "Action: " + self.call())
            if kind == "json_call":
                return completion(json.dumps({"skill": self.call().split("(")[0],
                                              "args": [self.number() for _ in range(r.randint(0, 3))]}))
            if kind == "garbage":
                return 200, {}, bytes(r.getrandbits(8) for _ in range(r.randint(0, 300)))
            if kind == "html":
                return r.choice([200, 502]), {"Content-Type": "text/html"}, b"<html><body><h1>Bad Gateway</h1></body></html>"
            if kind == "truncated":
                return 200, {}, b'{"choices": [{"message": {"content": "Action: mine_log(2'
            if kind == "no_choices":
                return 200, {}, b'{"choices": []}'
            if kind == "null_content":
                return completion(None)
            if kind == "bad_usage":
                return completion("Action: " + self.call(),
                                  usage=r.choice([{"prompt_tokens": -5}, {"prompt_tokens": 1e30},
                                                  {"prompt_tokens": "many"}, []]))
            if kind == "no_usage":
                return completion("Action: " + self.call(), usage=None)
            if kind == "huge":
                return completion("x" * 100_000 + "\nAction: " + self.call())
            if kind == "unicode":
                return completion(r.choice(["Action: mine_log(\uff12)", "Action: m\u0456ne_log(2)",
                                            "\u202eAction: mine_log(2)", "Action: mine_log(2)\u0000",
                                            "Action: 🪓(1)"]))
            if kind == "status":
                status = r.choice([429, 500, 503, 400, 401, 404])
                headers = {}
                if status in (429, 503):
                    headers["Retry-After"] = r.choice(["0", "0.05", "soon", "-1", "nan",
                                                       "Wed, 21 Oct 2015 07:28:00 GMT"])
                return status, headers, b'{"error": {"message": "no"}}'
            if kind == "reset":
                return "reset"
            return ("sleep", 3.0, completion("Action: " + self.call()))


def serve(hostile):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(length)
            answer = hostile.respond()
            if answer == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                self.connection.close()
                return
            if isinstance(answer, tuple) and answer[0] == "sleep":
                time.sleep(answer[1])
                answer = answer[2]
            status, headers, body = answer
            try:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def check_action(action, skills, window):
    """Why a recorded action is invalid, or None."""
    skill = skills.get(action["skill"])
    if skill is None:
        return f"unknown skill {action['skill']}"
    params = skill["params"]
    args = action["args"]
    if len(args) != len(params):
        return f"{action['skill']}: {len(args)} args for {len(params)} params"
    # Positional arguments fill the parameters in order, named ones their own.
    named = {a["name"]: a["value"] for a in args if a.get("name")}
    positional = iter(a["value"] for a in args if not a.get("name"))
    values = [named[p["name"]] if p["name"] in named else next(positional, None) for p in params]
    for p, v in zip(params, values):
        if v is None or not isinstance(v, (int, float)) or not math.isfinite(v):
            return f"{p['name']} = {v}"
        if p["type"] == "int" and v != int(v):
            return f"{p['name']} = {v} is not whole"
        if p["type"] == "x" and not 0 <= v < window[0]:
            return f"{p['name']} = {v} outside the window"
        if p["type"] == "y" and not 0 <= v < window[1]:
            return f"{p['name']} = {v} outside the window"
        if "min" in p and v < p["min"] or "max" in p and v > p["max"]:
            return f"{p['name']} = {v} out of range"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--answers", type=int, default=10_000, help="stop after this many answers were served")
    ap.add_argument("--frames-per-session", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=REPO / ".work" / "llm-fuzz")
    ap.add_argument("--resume", action="store_true",
                    help="count the sessions already in OUT and go on from there (else OUT is emptied)")
    args = ap.parse_args()
    if not BIN.is_file():
        sys.exit(f"{BIN} is missing: cargo build first")
    skills_json = subprocess.run([str(BIN), "--game", "minecraft", "skills", "list", "--json"],
                                 cwd=REPO, capture_output=True, text=True, check=True).stdout
    skill_list = json.loads(skills_json)
    skills = {s["name"]: s for s in skill_list}
    sessions = args.out / "sessions"
    done = sorted(sessions.glob("fuzz-*")) if args.resume else []
    # A resumed run draws other answers than the sessions it found.
    hostile = Hostile(args.seed + len(done), skill_list)
    server = serve(hostile)
    port = server.server_address[1]

    frames = args.out / "frames"
    if not args.resume:
        shutil.rmtree(args.out, ignore_errors=True)
    if not frames.is_dir():
        frames.mkdir(parents=True)
        src = FRAMES / WINDOW_FRAME
        for i in range(args.frames_per_session):
            os.symlink(src, frames / f"{i:06}.png")
    counts = {"sessions": 0, "answers": 0, "steps": 0, "accepted": 0, "invalid_accepted": 0,
              "panics": 0, "unclosed": 0, "unreadable": 0, "estimated_usage_steps": 0,
              "exit_codes": {}, "invalid": []}
    started = time.time()
    n = 0
    def read_session(sid, code, stderr):
        counts["exit_codes"][str(code)] = counts["exit_codes"].get(str(code), 0) + 1
        if code == 101 or "panicked" in stderr:
            counts["panics"] += 1
            print(f"{sid}: PANIC\n{stderr[-2000:]}", file=sys.stderr)
        counts["sessions"] += 1
        log = sessions / sid / "session.jsonl"
        ended = False
        # JSON lines end with "\n" only: an answer may hold U+2028 or U+0085, which
        # str.splitlines() would take for line ends.
        text = log.read_bytes().decode("utf-8") if log.is_file() else ""
        for line in filter(None, text.split("\n")):
            rec = json.loads(line)
            if rec["kind"] == "end":
                ended = True
                if rec["reason"].startswith("error"):
                    counts["error_ends"] = counts.get("error_ends", 0) + 1
            if rec["kind"] != "step":
                continue
            counts["steps"] += 1
            counts["answers"] += len(rec.get("attempts", []))
            if rec.get("usage", {}).get("estimated"):
                counts["estimated_usage_steps"] += 1
            if rec.get("action"):
                counts["accepted"] += 1
                why = check_action(rec["action"], skills, (rec["frame_w"], rec["frame_h"]))
                if why:
                    counts["invalid_accepted"] += 1
                    counts["invalid"].append(f"{sid} step {rec['step']}: {why}")
        if not ended:
            counts["unclosed"] += 1
        # A real file, not os.devnull: the report is the reader under test, and its output
        # goes beside the session it read.
        report = subprocess.run([str(BIN), "report", str(sessions / sid),
                                 "-o", str(sessions / sid / "report.html")],
                                cwd=REPO, capture_output=True, text=True)
        if report.returncode != 0:
            counts["unreadable"] += 1
            print(f"{sid}: report failed: {report.stderr[-500:]}", file=sys.stderr)

    for d in done:
        # The exit status of a session found on disk is not known; its records are.
        read_session(d.name, "earlier run", "")
        n += 1
    while counts["answers"] < args.answers:
        n += 1
        sid = f"fuzz-{n:04}"
        cmd = [str(BIN), "--game", "minecraft",
               "--set", f"llm.base_url=http://127.0.0.1:{port}/v1",
               "--set", "llm.model=fuzz", "--set", "llm.api_key_env=VW_FUZZ_NO_KEY",
               "--set", "llm.timeout_secs=2", "--set", "llm.max_retries=2",
               "--set", "llm.retry_backoff_ms=10", "--set", f"session.dir={sessions}",
               "play", "--task", "log", "--policy", "llm", "--dry-run", "--max-cost", "0",
               "--max-steps", "0", "--max-minutes", "0", "--frames", str(frames), "--session-id", sid]
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        read_session(sid, proc.returncode, proc.stderr)
        print(f"\r{counts['sessions']} sessions, {counts['answers']} answers, "
              f"{counts['accepted']} accepted, {counts['invalid_accepted']} invalid accepted, "
              f"{counts['panics']} panics, {time.time() - started:.0f} s", end="", flush=True)
    print()
    counts["served"] = hostile.served
    counts["seconds"] = round(time.time() - started, 1)
    (args.out / "counts.json").write_text(json.dumps(counts, indent=2))
    print(json.dumps({k: v for k, v in counts.items() if k != "invalid"}, indent=2))
    server.shutdown()
    bad = counts["invalid_accepted"] or counts["panics"] or counts["unclosed"] or counts["unreadable"]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
