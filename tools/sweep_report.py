#!/usr/bin/env python3
"""One self-contained HTML page for a sweep of closed-loop trials: the `runs.json` of one or more
batches of `tools/closed_loop_runs.py --start nothing` (each batch a detector, prompt, LLM or
commit to compare), drawn as

- per milestone of the tech tree, each batch's success rate with its 95% interval (Wilson's
  score interval of the binomial: 10 trials say little, and the bars show how little), beside the
  paper's Table 1 rate;
- per milestone, the minutes and the steps each trial took to reach it, as dots (one a trial)
  with the median marked;
- every trial in a table, with a link to its session report (`report.html` in the session folder,
  as `vistawise report` writes it; the folder itself where there is none).

No script, no external file: the page is inline SVG and CSS, and opens from disk in any browser.

Usage (stdlib only):
    python3 tools/sweep_report.py out/nothing-a/runs.json out/nothing-b/runs.json -o sweep.html
    python3 tools/sweep_report.py docs/results/from-nothing/*.json -o sweep.html --title "From nothing"
"""

import argparse
import html
import json
import math
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from closed_loop_runs import MILESTONES, PAPER_TABLE1, not_counted  # noqa: E402

# One colour a batch, in order (distinct for colour-blind readers: Okabe-Ito).
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]

ROW_H = 18          # one batch's bar in a milestone's row
LABEL_W = 130       # the milestone names left of the plots
PLOT_W = 560        # the plot's width


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of k successes in n trials."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def load(paths: list[Path]) -> list[dict]:
    """Each runs.json as a batch: its record, its runs, where it lies and its label."""
    batches = []
    for p in paths:
        try:
            data = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise SystemExit(f"sweep_report: {p}: {e}")
        if not isinstance(data, dict) or "batch" not in data or "runs" not in data:
            raise SystemExit(f"sweep_report: {p}: not a from-nothing runs.json (no \"batch\" and \"runs\")")
        b = data["batch"]
        if b.get("game") not in MILESTONES:
            raise SystemExit(f"sweep_report: {p}: batch.game {b.get('game')!r} is none of {sorted(MILESTONES)}")
        worlds = b.get("worlds") or []
        span = f"{worlds[0]}-{worlds[-1]}" if worlds else "?"
        label = b.get("label") or f"{b['game']} {b.get('policy', '?')} {span} ({str(b.get('commit', '?'))[:7]})"
        # A Ray trial that failed twice (tools/ray_trials.py) or a run stopped by Ctrl-C is no
        # run of the agent: listed with the trials, never counted.
        runs = [r for r in data["runs"] if not not_counted(r)]
        failed = [r for r in data["runs"] if not_counted(r)]
        batches.append({"batch": b, "runs": runs, "failed": failed, "dir": p.parent, "label": label})
    return batches


def milestones_of(batches: list[dict]) -> list[str]:
    """The milestones up to the furthest target of the sweep, in tech-tree order."""
    names: list[str] = []
    for b in batches:
        game = MILESTONES[b["batch"]["game"]]
        order = [n for n, _ in game]
        target = b["batch"].get("target", order[-1])
        for n in order[: order.index(target) + 1] if target in order else order:
            if n not in names:
                names.append(n)
    return names


def has_milestone(b: dict, name: str) -> bool:
    """Whether the batch's game counts the milestone (Minetest has no crafting table item)."""
    return any(n == name for n, _ in MILESTONES[b["batch"]["game"]])


def nice_ticks(top: float) -> list[float]:
    """Round ticks from 0 to at least `top`, at most 6 of them (steps of 1, 2 or 5 x 10^k)."""
    raw = max(top, 1e-9) / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return [i * step for i in range(0, int(math.ceil(top / step)) + 1)]


def esc(s) -> str:
    return html.escape(str(s), quote=True)


def chart_frame(label: str, names: list[str], n_batches: int, ticks: list[tuple[float, str]], x) -> tuple[list[str], float]:
    """An SVG chart's opening, its vertical grid lines with their tick labels, and a label a
    milestone row; returns the lines and the height of a row (a bar a batch in it)."""
    group_h = n_batches * ROW_H + 10
    height = 30 + group_h * len(names) + 20
    width = LABEL_W + PLOT_W + 60
    out = [f'<svg role="img" aria-label="{esc(label)}" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">']
    for v, text in ticks:
        out.append(f'<line x1="{x(v):.1f}" y1="20" x2="{x(v):.1f}" y2="{height - 20}" class="grid"/>')
        out.append(f'<text x="{x(v):.1f}" y="14" class="tick">{text}</text>')
    for i, name in enumerate(names):
        top = 24 + i * group_h
        out.append(f'<text x="{LABEL_W - 8}" y="{top + group_h / 2:.1f}" class="label">{esc(name)}</text>')
    return out, group_h


def rate_chart(batches: list[dict], names: list[str]) -> str:
    """Success rate per milestone: a bar a batch with its interval, the paper's rate marked."""
    n_b = len(batches)
    x = lambda v: LABEL_W + v * PLOT_W  # noqa: E731
    ticks = [(t / 10, f"{t / 10:.1f}") for t in range(0, 11, 2)]
    out, group_h = chart_frame("success rate per milestone", names, n_b, ticks, x)
    for i, name in enumerate(names):
        top = 24 + i * group_h
        for j, b in enumerate(batches):
            runs = b["runs"]
            y = top + j * ROW_H
            if not has_milestone(b, name):
                out.append(f'<text x="{x(0) + 4:.1f}" y="{y + ROW_H / 2 + 4}" class="count">'
                           f'n/a ({esc(b["batch"]["game"])} has no {esc(name)})</text>')
                continue
            k = sum(1 for r in runs if name in (r.get("milestones") or {}))
            n = len(runs)
            lo, hi = wilson(k, n)
            p = k / n if n else 0.0
            colour = COLOURS[j % len(COLOURS)]
            out.append(f'<rect x="{x(0):.1f}" y="{y + 3}" width="{p * PLOT_W:.1f}" height="{ROW_H - 6}" '
                       f'fill="{colour}" class="bar"><title>{esc(b["label"])}: {name} {k}/{n} '
                       f'({p:.2f}, 95% {lo:.2f}-{hi:.2f})</title></rect>')
            mid = y + ROW_H / 2
            out.append(f'<line x1="{x(lo):.1f}" y1="{mid}" x2="{x(hi):.1f}" y2="{mid}" class="whisker"/>')
            for v in (lo, hi):
                out.append(f'<line x1="{x(v):.1f}" y1="{mid - 4}" x2="{x(v):.1f}" y2="{mid + 4}" class="whisker"/>')
            out.append(f'<text x="{x(1) + 6:.1f}" y="{mid + 4}" class="count">{k}/{n}</text>')
        if name in PAPER_TABLE1:
            v = PAPER_TABLE1[name]
            out.append(f'<line x1="{x(v):.1f}" y1="{top}" x2="{x(v):.1f}" y2="{top + n_b * ROW_H}" class="paper">'
                       f'<title>the paper (Table 1): {v:.2f}</title></line>')
    out.append("</svg>")
    return "\n".join(out)


def strip_chart(batches: list[dict], names: list[str], key: str, unit: str, scale: float) -> str:
    """Per milestone, a dot per trial that reached it (its minutes or steps), a batch a row, the
    median marked."""
    values = [r["milestones"][n][key] * scale for b in batches for r in b["runs"]
              for n in names if n in (r.get("milestones") or {})]
    ticks = nice_ticks(max(values, default=1.0) or 1.0)
    top_v = ticks[-1]
    x = lambda v: LABEL_W + v / top_v * PLOT_W  # noqa: E731
    out, group_h = chart_frame(f"{unit} to each milestone", names, len(batches),
                               [(v, f"{v:.3g}") for v in ticks], x)
    for i, name in enumerate(names):
        top = 24 + i * group_h
        for j, b in enumerate(batches):
            y = top + j * ROW_H + ROW_H / 2
            colour = COLOURS[j % len(COLOURS)]
            got = [(r, r["milestones"][name][key] * scale) for r in b["runs"] if name in (r.get("milestones") or {})]
            for r, v in got:
                out.append(f'<circle cx="{x(v):.1f}" cy="{y}" r="4" fill="{colour}" class="dot">'
                           f'<title>world {esc(r.get("world", "?"))}: {v:.3g} {esc(unit)}</title></circle>')
            if got:
                med = statistics.median(v for _, v in got)
                out.append(f'<line x1="{x(med):.1f}" y1="{y - 7}" x2="{x(med):.1f}" y2="{y + 7}" class="median">'
                           f'<title>{esc(b["label"])}: median {med:.3g} {esc(unit)}</title></line>')
    out.append("</svg>")
    return "\n".join(out)


def trial_end(r: dict) -> str:
    if why := not_counted(r):
        return why
    if r.get("error"):
        return f"game failed: {r['error']}"
    if r.get("died"):
        return "died"
    return "success" if r.get("success") else "not reached"


def trials_table(b: dict, names: list[str], out_dir: Path) -> str:
    rows = []
    for r in sorted(b["runs"] + b.get("failed", []), key=lambda r: r.get("world", 0)):
        got = r.get("milestones") or {}
        furthest = next((n for n in reversed(names) if n in got), "-")
        session = b["dir"] / r.get("session", "")
        target = session / "report.html" if (session / "report.html").exists() else session
        href = os.path.relpath(target, out_dir) if r.get("session") else ""
        link = f'<a href="{esc(href)}">{esc(r["session"])}</a>' if href else "-"
        minutes = f"{r['seconds'] / 60:.1f}" if isinstance(r.get("seconds"), (int, float)) else "-"
        rows.append(f"<tr><td>{esc(r.get('world', '?'))}</td><td>{esc(trial_end(r))}</td>"
                    f"<td>{esc(furthest)}</td><td>{esc(r.get('steps', '-'))}</td><td>{minutes}</td>"
                    f"<td>{link}</td></tr>")
    return ("<table><thead><tr><th>world</th><th>end</th><th>furthest milestone</th><th>steps</th>"
            "<th>minutes</th><th>session</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px auto; max-width: 900px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
.legend span { display: inline-block; margin-right: 16px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }
svg text { font: 12px system-ui, sans-serif; fill: #222; }
svg .label { text-anchor: end; dominant-baseline: middle; }
svg .tick { text-anchor: middle; fill: #666; }
svg .grid { stroke: #e4e4e4; }
svg .whisker { stroke: #222; stroke-width: 1.5; }
svg .paper { stroke: #d00; stroke-width: 3; }
svg .median { stroke: #222; stroke-width: 2; }
svg .dot { fill-opacity: 0.75; }
"""


def render(batches: list[dict], title: str, out_dir: Path) -> str:
    names = milestones_of(batches)
    legend = "".join(f'<span><i style="background:{COLOURS[j % len(COLOURS)]}"></i>{esc(b["label"])}</span>'
                     for j, b in enumerate(batches))
    legend += '<span><i style="background:#d00"></i>the paper (Table 1)</span>'
    about = "".join(
        f"<tr><td>{esc(b['label'])}</td><td>{esc(b['batch'].get('target', '?'))}</td>"
        f"<td>{len(b['runs'])}</td><td>{esc(b['batch'].get('window', '?'))}</td>"
        f"<td>{esc(b['batch'].get('max_minutes', '?'))}</td><td>{esc(str(b['batch'].get('commit', '?'))[:10])}</td>"
        f"<td>{esc(b['batch'].get('date', '?'))}</td></tr>" for b in batches)
    trials = "".join(f"<h3>{esc(b['label'])}</h3>" + trials_table(b, names, out_dir) for b in batches)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title><style>{STYLE}</style></head>
<body>
<h1>{esc(title)}</h1>
<table><thead><tr><th>batch</th><th>target</th><th>trials</th><th>window</th><th>minutes a trial</th>
<th>commit</th><th>date</th></tr></thead><tbody>{about}</tbody></table>
<p class="legend">{legend}</p>
<section id="rates"><h2>Success rate per milestone</h2>
<p>Bars: the share of trials that held the milestone; whiskers: its 95% interval (Wilson); red:
the paper's rate (Table 1, VistaWise, 15 trials).</p>
{rate_chart(batches, names)}</section>
<section id="minutes"><h2>Minutes to each milestone</h2>
<p>A dot a trial that held it; the black tick is the median.</p>
{strip_chart(batches, names, "seconds", "minutes", 1 / 60)}</section>
<section id="steps"><h2>Steps to each milestone</h2>
{strip_chart(batches, names, "step", "steps", 1.0)}</section>
<section id="trials"><h2>Trials</h2>{trials}</section>
</body></html>
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="runs.json of each batch")
    ap.add_argument("-o", "--out", type=Path, required=True, help="the HTML file to write")
    ap.add_argument("--title", default="Sweep: closed-loop trials from nothing")
    args = ap.parse_args(argv)
    batches = load(args.runs)
    page = render(batches, args.title, args.out.resolve().parent)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(args.out.suffix + ".tmp")
    tmp.write_text(page)
    os.replace(tmp, args.out)
    print(f"sweep report: {args.out} ({len(batches)} batches, "
          f"{sum(len(b['runs']) for b in batches)} trials)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
