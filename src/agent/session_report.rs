//! The session report: one self-contained HTML page (frames embedded, no network at view time)
//! with a timeline of steps: frame with boxes, pooled graph, prompt and answers (collapsible),
//! action and outcome, stage timings, tokens and cost, and totals.

use std::fmt::Write as _;

use base64::Engine;

use super::session::{Session, SessionError, StepRecord};
use crate::perception::overlay;

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn frame_data_uri(session: &Session, step: &StepRecord) -> Result<String, SessionError> {
    let mut frame = session.frame(step)?;
    overlay::draw_detections(&mut frame, &step.detections);
    let mut bytes = Vec::new();
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, 80);
    frame
        .write_with_encoder(encoder)
        .map_err(|e| SessionError::Io {
            path: session.dir.join(&step.frame),
            source: std::io::Error::other(e.to_string()),
        })?;
    Ok(format!(
        "data:image/jpeg;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Reads one stage's milliseconds from a step.
type StageOf = fn(&StepRecord) -> f64;

const STAGE_COLOURS: [(&str, &str); 6] = [
    ("capture", "#8c564b"),
    ("detect", "#1f77b4"),
    ("graph", "#2ca02c"),
    ("prompt", "#9467bd"),
    ("policy", "#ff7f0e"),
    ("act", "#d62728"),
];

/// Stacked bars: milliseconds per stage for every step (inline SVG).
fn stage_chart(session: &Session) -> String {
    let rows: Vec<[f64; 6]> = session
        .steps
        .iter()
        .map(|s| {
            let act = session.outcome(s.step).map_or(0.0, |o| o.act_ms);
            let m = &s.stage_ms;
            [m.capture, m.detect, m.graph, m.prompt, m.policy, act]
        })
        .collect();
    let max = rows
        .iter()
        .map(|r| r.iter().sum::<f64>())
        .fold(1.0, f64::max);
    let (bar_h, width, left) = (14.0, 600.0, 50.0);
    let height = rows.len() as f64 * (bar_h + 4.0) + 40.0;
    let mut svg = format!(
        "<h3>Time per step by stage</h3><svg role=\"img\" aria-label=\"stage timings\" width=\"{w}\" height=\"{height}\" xmlns=\"http://www.w3.org/2000/svg\">",
        w = width + left + 80.0
    );
    for (i, r) in rows.iter().enumerate() {
        let y = 20.0 + i as f64 * (bar_h + 4.0);
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{:.0}\" font-size=\"11\">step {}</text>",
            y + 11.0,
            i + 1
        );
        let mut x = left;
        for (v, (name, colour)) in r.iter().zip(STAGE_COLOURS) {
            let w = v / max * width;
            let _ = write!(
                svg,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{bar_h}\" fill=\"{colour}\"><title>{name}: {v:.1} ms</title></rect>"
            );
            x += w;
        }
        let _ = write!(
            svg,
            "<text x=\"{:.0}\" y=\"{:.0}\" font-size=\"11\">{:.0} ms</text>",
            x + 4.0,
            y + 11.0,
            r.iter().sum::<f64>()
        );
    }
    let legend_y = height - 6.0;
    for (i, (name, colour)) in STAGE_COLOURS.iter().enumerate() {
        let x = left + i as f64 * 90.0;
        let _ = write!(
            svg,
            "<rect x=\"{x}\" y=\"{:.0}\" width=\"10\" height=\"10\" fill=\"{colour}\"/><text x=\"{:.0}\" y=\"{legend_y:.0}\" font-size=\"11\">{name}</text>",
            legend_y - 9.0,
            x + 14.0
        );
    }
    svg.push_str("</svg>");
    svg
}

/// " (N cached, P%)" when the endpoint served prompt tokens from its prefix cache.
fn cached_note(cached: u64, prompt: u64) -> String {
    if cached == 0 || prompt == 0 {
        return String::new();
    }
    format!(
        " ({cached} cached, {:.0}%)",
        100.0 * cached as f64 / prompt as f64
    )
}

/// Bars: tokens per step, with the running cost.
fn token_chart(session: &Session) -> String {
    let tokens: Vec<u64> = session
        .steps
        .iter()
        .map(|s| s.usage.prompt_tokens + s.usage.completion_tokens)
        .collect();
    let max = tokens.iter().copied().max().unwrap_or(0).max(1) as f64;
    let (bar_w, height) = (12.0, 120.0);
    let width = (tokens.len() as f64 * (bar_w + 3.0) + 60.0).max(420.0);
    let mut svg = format!(
        "<h3>Tokens per step and running cost</h3><svg role=\"img\" aria-label=\"tokens and cost\" width=\"{width:.0}\" height=\"{:.0}\" xmlns=\"http://www.w3.org/2000/svg\">",
        height + 20.0
    );
    let mut cost = 0.0;
    for (i, (t, s)) in tokens.iter().zip(&session.steps).enumerate() {
        cost += s.cost_usd.unwrap_or(0.0);
        let h = *t as f64 / max * height;
        let x = 10.0 + i as f64 * (bar_w + 3.0);
        let _ = write!(
            svg,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar_w}\" height=\"{h:.1}\" fill=\"#1f77b4\"><title>step {}: {t} tokens, ${cost:.4} so far</title></rect>",
            height - h,
            i + 1
        );
    }
    let caption = if tokens.iter().all(|t| *t == 0) {
        "no LLM tokens (planner policy or no answers)".to_string()
    } else {
        format!("max {max:.0} tokens/step; total ${cost:.4}")
    };
    let _ = write!(
        svg,
        "<text x=\"10\" y=\"{:.0}\" font-size=\"11\">{caption}</text></svg>",
        height + 15.0
    );
    svg
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}\
h1{font-size:1.4em}section{border-top:1px solid #ccc;padding:1em 0}\
.step{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1.5em}\
img{max-width:100%;border:1px solid #999}pre{white-space:pre-wrap;background:#f6f6f6;padding:.5em;font-size:.85em}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}\
.bad{color:#b00}.ok{color:#070}";

/// Renders the report of a session.
pub fn render(session: &Session) -> Result<String, SessionError> {
    let mut html = String::new();
    header(&mut html, session);
    stage_table(&mut html, session);
    html.push_str(&stage_chart(session));
    html.push_str(&token_chart(session));
    for s in &session.steps {
        step_section(&mut html, session, s)?;
    }
    html.push_str("</body></html>\n");
    Ok(html)
}

/// The page's head and the session's summary: task, policy, end, tokens, cost, files.
fn header(html: &mut String, session: &Session) {
    let m = &session.meta;
    let total_cost: f64 = session.steps.iter().filter_map(|s| s.cost_usd).sum();
    let prompt_tokens: u64 = session.steps.iter().map(|s| s.usage.prompt_tokens).sum();
    let completion_tokens: u64 = session
        .steps
        .iter()
        .map(|s| s.usage.completion_tokens)
        .sum();
    let cached_tokens: u64 = session.steps.iter().map(|s| s.usage.cached_tokens).sum();
    let cached = cached_note(cached_tokens, prompt_tokens);
    let _ = write!(
        html,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>vistawise session {id}</title>\
         <style>{STYLE}</style></head><body><h1>Session {id}</h1>\
         <p>Task <b>{task}</b> ({profile}), policy <b>{policy}</b>{dry}; started {started}; \
         vistawise {version}.</p><p>Ended: <b>{end}</b>{torn}. {steps} steps, {pt} prompt{cached} + {ct} \
         completion tokens, ${cost:.4}, {secs:.1} s.</p><p>Detector {det} (sha256 {dsha}); graph {kg} (sha256 {ksha}).</p>",
        id = esc(&session
            .dir
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default()),
        task = esc(&m.task),
        profile = esc(&m.profile),
        policy = esc(&m.policy),
        dry = if m.dry_run { " (dry run)" } else { "" },
        started = esc(&m.started),
        version = esc(&m.vistawise_version),
        end = esc(session
            .end
            .as_deref()
            .unwrap_or("did not finish (no end record)")),
        torn = if session.truncated_tail {
            "; the last line was cut off and skipped"
        } else {
            ""
        },
        steps = session.steps.len(),
        pt = prompt_tokens,
        ct = completion_tokens,
        cost = total_cost,
        secs = session.steps.last().map_or(0.0, |s| s.t),
        det = esc(&m.detector),
        dsha = esc(&m.detector_sha256),
        kg = esc(&m.kg),
        ksha = esc(&m.kg_sha256),
    );
}

/// Median and maximum milliseconds of each stage over the steps.
fn stage_table(html: &mut String, session: &Session) {
    let stages: [(&str, StageOf); 6] = [
        ("capture", |s| s.stage_ms.capture),
        ("detect", |s| s.stage_ms.detect),
        ("graph", |s| s.stage_ms.graph),
        ("prompt", |s| s.stage_ms.prompt),
        ("policy", |s| s.stage_ms.policy),
        ("act", |s| s.stage_ms.act),
    ];
    html.push_str("<table><tr><th>stage</th><th>median ms</th><th>max ms</th></tr>");
    for (name, get) in stages {
        let values: Vec<f64> = session
            .steps
            .iter()
            .map(|s| {
                if name == "act" {
                    session.outcome(s.step).map_or(0.0, |o| o.act_ms)
                } else {
                    get(s)
                }
            })
            .collect();
        let max = values.iter().copied().fold(0.0, f64::max);
        let _ = write!(
            html,
            "<tr><td>{name}</td><td>{:.1}</td><td>{max:.1}</td></tr>",
            median(values)
        );
    }
    html.push_str("</table>");
}

/// One step: its frame, action and outcome, what it saw, its stage times and tokens, the prompt
/// and every answer.
fn step_section(html: &mut String, session: &Session, s: &StepRecord) -> Result<(), SessionError> {
    let outcome = session.outcome(s.step);
    let action = s
        .action
        .as_ref()
        .map_or("(none)".to_string(), |a| a.to_string());
    let class = if s.validation.is_valid() { "ok" } else { "bad" };
    let _ = write!(
        html,
        "<section id=\"step-{n}\"><h2>Step {n} <small>t = {t:.1} s</small></h2><div class=\"step\">\
         <div><img alt=\"frame {n}\" src=\"{img}\"><p>{dets} detections</p></div><div>\
         <p>Action: <b>{action}</b> <span class=\"{class}\">({validation})</span><br>Outcome: {outcome}</p>\
         <p>Knowledge:</p><pre>{knowledge}</pre><p>Inventory: {inventory}<br>Environment: {environment}</p>\
         <p>Stages (ms): capture {c:.1}, detect {d:.1}, graph {g:.2}, prompt {p:.2}, policy {pol:.1}, act {a:.1}. \
         Tokens: {pt}{cached} + {ct} (prompt counted {tok}); cost {cost}.</p>",
        n = s.step,
        t = s.t,
        img = frame_data_uri(session, s)?,
        dets = s.detections.len(),
        action = esc(&action),
        validation = esc(&s.validation.to_string()),
        outcome = esc(&outcome.map_or_else(|| "(not run)".to_string(), |o| o.result.to_string())),
        knowledge = esc(&s.knowledge),
        inventory = esc(&s.inventory),
        environment = esc(&s.environment),
        c = s.stage_ms.capture,
        d = s.stage_ms.detect,
        g = s.stage_ms.graph,
        p = s.stage_ms.prompt,
        pol = s.stage_ms.policy,
        a = outcome.map_or(0.0, |o| o.act_ms),
        pt = s.usage.prompt_tokens,
        cached = cached_note(s.usage.cached_tokens, s.usage.prompt_tokens),
        ct = s.usage.completion_tokens,
        tok = s.prompt_tokens,
        cost = s
            .cost_usd
            .map_or("unknown".to_string(), |c| format!("${c:.5}")),
    );
    if let Some(note) = &s.success_note {
        let _ = write!(html, "<p class=\"bad\">Success check: {}</p>", esc(note));
    }
    let _ = write!(
        html,
        "<details><summary>Prompt</summary><pre>{}</pre></details>",
        esc(&s.prompt)
    );
    for (i, a) in s.attempts.iter().enumerate() {
        let _ = write!(
            html,
            "<details><summary>Answer {}{}</summary><pre>{}</pre></details>",
            i + 1,
            a.rejected
                .as_ref()
                .map_or(String::new(), |r| format!(" (rejected: {})", esc(r))),
            esc(&a.answer)
        );
    }
    if !s.reasoning.is_empty() && s.attempts.is_empty() {
        let _ = write!(html, "<p>Planner: {}</p>", esc(&s.reasoning));
    }
    html.push_str("</div></div></section>");
    Ok(())
}
