//! The agent loop on a real X server: a real window shows a game frame, `vistawise play`
//! captures it, detects with a real ONNX model, pools, plans, validates, records and acts.

use crate::support;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::support::{TestWindow, XServer, binary};
use vistawise::agent::Session;

const TITLE: &str = "Minecraft agent test";

fn frame() -> image::RgbImage {
    image::open(support::fixture("detector/images/wide_16x9.png"))
        .expect("fixture frame")
        .to_rgb8()
}

fn play(display: &str, sessions: &std::path::Path, args: &[&str]) -> Command {
    let mut cmd = binary();
    cmd.arg("play")
        .args(args)
        .env("DISPLAY", display)
        .env("VISTAWISE_ORT_LIB", support::ort_lib())
        .env("VISTAWISE_GAME__WINDOW_TITLE", TITLE)
        .env(
            "VISTAWISE_DETECTOR__MODEL",
            "tests/fixtures/detector/tiny-raw.onnx",
        )
        .env("VISTAWISE_SESSION__DIR", sessions);
    cmd
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("run");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

fn start_game_window(x: &XServer) -> TestWindow {
    let window = TestWindow::open(&x.display, TITLE, 640, 360);
    window.show_image(&frame());
    window.activate(&x.display);
    window
}

#[test]
fn a_dry_run_records_every_step_and_sends_nothing() {
    let (_x, _window, sessions) = recorded_session();
    let session = Session::load(&sessions.path().join("s")).expect("session");
    assert_eq!(session.steps.len(), 3);
    assert!(!session.truncated_tail);
    assert_eq!(session.meta.policy, "planner");
    assert!(session.meta.dry_run);
    assert_eq!(session.end.as_deref(), Some("step limit (3) reached"));
    let first = &session.steps[0];
    // The real detector found the frame's trunk and log icon. The icon is drawn at the top of
    // the frame, on no hotbar or inventory slot of a 640x360 window (`[gui] bag_regions`), so
    // the log is not owned: to make planks the planner goes for a log. It looks in the bag
    // first (`[planner] bag_screen`: the HUD shows only the hotbar), closes it, and aims at
    // the trunk.
    assert_eq!((first.frame_w, first.frame_h), (640, 360));
    assert!(
        first.detections.iter().any(|d| d.class == "trunk"),
        "{:?}",
        first.detections
    );
    assert!(first.inventory.contains("Log"), "{}", first.inventory);
    assert!(first.prompt.contains("Obtain planks."));
    assert!(first.prompt_tokens > 500);
    let skills: Vec<_> = session
        .steps
        .iter()
        .map(|s| s.action.as_ref().map(|a| a.skill.as_str()))
        .collect();
    assert_eq!(
        skills,
        [Some("open_inventory"), Some("close_screen"), Some("turn")]
    );
    assert_eq!(first.validation, vistawise::agent::Validation::Valid);
    assert!(!first.events.is_empty());
    for s in &session.steps {
        assert!(session.dir.join(&s.frame).is_file());
        let outcome = session.outcome(s.step).expect("outcome");
        assert_eq!(outcome.result, vistawise::skills::ActResult::DryRun);
        assert_eq!(outcome.result.to_string(), "dry run: nothing sent");
        assert!(outcome.sent.is_empty());
    }
    let frame = session.frame(first).expect("frame");
    assert_eq!(frame.dimensions(), (640, 360));
}

#[test]
fn a_real_run_sends_the_validated_events_to_the_game_window() {
    let x = XServer::start(1280, 800);
    let _window = start_game_window(&x);
    let sessions = tempfile::tempdir().expect("temp");
    let (code, out, err) = run(&mut play(
        &x.display,
        sessions.path(),
        &[
            "--task",
            "planks",
            "--policy",
            "planner",
            "--max-steps",
            "3",
            "--session-id",
            "real",
        ],
    ));
    assert_eq!(code, 1, "{out}{err}");
    let session = Session::load(&sessions.path().join("real")).expect("session");
    // Everything planned was sent, every step (the record keeps the waits too).
    for s in &session.steps {
        let outcome = session.outcome(s.step).expect("outcome");
        assert_eq!(outcome.result, vistawise::skills::ActResult::Done);
        assert_eq!(outcome.sent, s.events);
    }
    // The frame's log icon is on no bag slot (see above): after the look in the bag (open,
    // close), the planner aims at the trunk.
    let step = &session.steps[2];
    let action = step.action.as_ref().expect("action");
    assert_eq!(action.skill, "turn", "{step:?}");
    let outcome = session.outcome(3).expect("outcome");
    // The trunk is up and to the left of the crosshair: relative mouse motion up-left.
    assert!(
        outcome.sent.iter().any(|e| matches!(
            e,
            vistawise::skills::InputEvent::MoveBy { dx, dy } if *dx < 0 && *dy < 0
        )),
        "{:?}",
        outcome.sent
    );
    assert!(outcome.released.is_empty());
}

#[test]
fn a_kill_9_loses_no_completed_step() {
    let x = XServer::start(1280, 800);
    let _window = start_game_window(&x);
    let sessions = tempfile::tempdir().expect("temp");
    let mut child = play(
        &x.display,
        sessions.path(),
        &[
            "--task",
            "planks",
            "--policy",
            "planner",
            "--dry-run",
            "--max-steps",
            "0",
            "--max-minutes",
            "0",
            "--session-id",
            "killed",
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("spawn");
    let log = sessions.path().join("killed/session.jsonl");
    support::wait_until(
        Duration::from_secs(60),
        || std::fs::read_to_string(&log).is_ok_and(|t| t.lines().count() >= 6),
        "a few steps to be recorded",
    );
    child.kill().expect("kill -9");
    child.wait().expect("wait");
    let text = std::fs::read_to_string(&log).expect("log");
    let session = Session::load(&sessions.path().join("killed")).expect("readable after kill -9");
    let complete_lines = text.lines().filter(|l| l.ends_with('}')).count();
    assert!(session.steps.len() + session.outcomes.len() >= complete_lines - 1);
    assert!(session.steps.len() >= 3);
    assert!(session.end.is_none());
    for s in &session.steps {
        assert!(
            session.dir.join(&s.frame).is_file(),
            "frame of step {} missing",
            s.step
        );
    }
    // The interrupted session replays: every completed step, same decisions.
    let (code, out, err) = vistawise(&[
        "replay",
        sessions.path().join("killed").to_str().expect("utf8"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!("0 of {} decisions changed", session.steps.len())),
        "{out}"
    );
    // A torn last line (as a crash mid-write leaves it) is skipped, not fatal.
    std::fs::write(
        &log,
        format!("{text}{{\"kind\":\"step\",\"step\":99,\"t\":"),
    )
    .expect("tear");
    let torn = Session::load(&sessions.path().join("killed")).expect("torn tail tolerated");
    assert!(torn.truncated_tail);
    assert_eq!(torn.steps.len(), session.steps.len());
}

/// Records a 3-step dry-run session and returns (server, window, sessions dir).
fn recorded_session() -> (XServer, TestWindow, tempfile::TempDir) {
    let x = XServer::start(1280, 800);
    let window = start_game_window(&x);
    let sessions = tempfile::tempdir().expect("temp");
    let (code, out, err) = run(&mut play(
        &x.display,
        sessions.path(),
        &[
            "--task",
            "planks",
            "--policy",
            "planner",
            "--dry-run",
            "--max-steps",
            "3",
            "--session-id",
            "s",
        ],
    ));
    assert_eq!(code, 1, "{out}{err}");
    (x, window, sessions)
}

fn vistawise(args: &[&str]) -> (i32, String, String) {
    run(binary()
        .args(args)
        .env("VISTAWISE_ORT_LIB", support::ort_lib())
        .env(
            "VISTAWISE_DETECTOR__MODEL",
            "tests/fixtures/detector/tiny-raw.onnx",
        ))
}

#[test]
fn replay_reproduces_a_session_and_reports_what_a_change_changes() {
    let (_x, _w, sessions) = recorded_session();
    let dir = sessions.path().join("s");
    let dir = dir.to_str().expect("utf8");
    // Same detector, graph, prompt and recorded decisions: nothing differs.
    let (code, out, err) = vistawise(&["replay", dir]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0 of 3 decisions changed"), "{out}");
    assert!(
        !out.contains("detections") && !out.contains("prompt line"),
        "{out}"
    );
    // Replaying recorded answers is deterministic: two runs give identical reports.
    let (_, first, _) = vistawise(&["replay", dir, "--json"]);
    let (_, second, _) = vistawise(&["replay", dir, "--json"]);
    assert_eq!(first, second);
    // Another prompt template: the prompts differ, the recorded decisions do not.
    let template = sessions.path().join("other.txt");
    let original = std::fs::read_to_string(support::repo().join("config/prompts/vistawise.txt"))
        .expect("template");
    std::fs::write(&template, format!("You are a careful player.\n{original}")).expect("write");
    let (code, out, _) = vistawise(&[
        "replay",
        dir,
        "--prompt-template",
        template.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("prompt line 1: recorded \"In Minecraft"),
        "{out}"
    );
    // Another detector (the end-to-end fixture model): detections are compared box by box, and
    // the planner re-decides on them.
    let (code, out, _) = vistawise(&[
        "replay",
        dir,
        "--model",
        "tests/fixtures/detector/tiny-e2e.onnx",
        "--policy",
        "planner",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["steps"], 3);
    assert_eq!(code, if v["decisions_changed"] == 0 { 0 } else { 1 });
}

#[test]
fn the_report_is_one_self_contained_html_page() {
    let (_x, _w, sessions) = recorded_session();
    let dir = sessions.path().join("s");
    let out_file = sessions.path().join("report.html");
    let (code, out, err) = vistawise(&[
        "report",
        dir.to_str().expect("utf8"),
        "-o",
        out_file.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let html = std::fs::read_to_string(&out_file).expect("report");
    assert_eq!(html.matches("<section id=\"step-").count(), 3);
    assert_eq!(html.matches("src=\"data:image/jpeg;base64,").count(), 3);
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    assert!(html.contains("open_inventory()"));
    assert!(html.contains("<details><summary>Prompt</summary>"));
    assert!(html.contains("step limit (3) reached"));
}

#[test]
fn the_report_renders_in_headless_chromium_without_console_errors() {
    // A full loop with no display: recorded frames, the dry-run backend, the planner.
    let sessions = tempfile::tempdir().expect("temp");
    let (code, out, err) = run(binary()
        .args([
            "play",
            "--task",
            "planks",
            "--policy",
            "planner",
            "--dry-run",
            "--session-id",
            "f",
        ])
        .arg("--frames")
        .arg(support::fixture("detector/images"))
        .env_remove("DISPLAY")
        .env("VISTAWISE_ORT_LIB", support::ort_lib())
        .env(
            "VISTAWISE_DETECTOR__MODEL",
            "tests/fixtures/detector/tiny-raw.onnx",
        )
        .env("VISTAWISE_SESSION__DIR", sessions.path()));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("no more recorded frames after 4 steps"),
        "{out}"
    );
    let report = sessions.path().join("report.html");
    let (code, _, err) = vistawise(&[
        "report",
        sessions.path().join("f").to_str().expect("utf8"),
        "-o",
        report.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 0, "{err}");
    let artifacts = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifacts dir");
    let shot = artifacts.join("report.png");
    let _ = std::fs::remove_file(&shot);
    let url = format!("file://{}", report.display());
    let browser = |extra: &[&str]| {
        Command::new("chromium")
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--enable-logging=stderr",
                "--v=0",
            ])
            .args(extra)
            .arg(&url)
            .output()
            .expect("chromium is not installed: run scripts/setup.sh --with-x")
    };
    let dom = browser(&["--dump-dom"]);
    let rendered = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(
        rendered.matches("<section id=\"step-").count(),
        4,
        "{rendered:.500}"
    );
    assert!(rendered.contains("aria-label=\"stage timings\""));
    let console = String::from_utf8_lossy(&dom.stderr);
    assert!(
        !console.lines().any(|l| l.contains("CONSOLE")),
        "console messages: {console}"
    );
    let shot_arg = format!("--screenshot={}", shot.display());
    let taken = browser(&[&shot_arg, "--window-size=1280,2400"]);
    assert!(
        taken.status.success(),
        "{}",
        String::from_utf8_lossy(&taken.stderr)
    );
    let png = image::open(&shot).expect("screenshot written");
    assert_eq!(png.width(), 1280);
    eprintln!("report screenshot: {}", shot.display());
}

/// `play --frames DIR --dry-run` with the planner, no display.
fn play_frames(frames: &std::path::Path, sessions: &std::path::Path, id: &str) -> Command {
    play_frames_with(frames, sessions, id, "planner")
}

fn play_frames_with(
    frames: &std::path::Path,
    sessions: &std::path::Path,
    id: &str,
    policy: &str,
) -> Command {
    let mut cmd = binary();
    cmd.args([
        "play",
        "--task",
        "planks",
        "--policy",
        policy,
        "--dry-run",
        "--session-id",
        id,
    ])
    .arg("--frames")
    .arg(frames)
    .env_remove("DISPLAY")
    .env("VISTAWISE_ORT_LIB", support::ort_lib())
    .env(
        "VISTAWISE_DETECTOR__MODEL",
        "tests/fixtures/detector/tiny-raw.onnx",
    )
    .env("VISTAWISE_SESSION__DIR", sessions);
    cmd
}

#[test]
fn a_frame_cut_short_ends_the_session_with_its_reason_in_the_end_record() {
    let dir = tempfile::tempdir().expect("temp");
    let frames = dir.path().join("frames");
    std::fs::create_dir_all(&frames).expect("frames dir");
    let mut jpeg = Vec::new();
    frame()
        .write_to(
            &mut std::io::Cursor::new(&mut jpeg),
            image::ImageFormat::Jpeg,
        )
        .expect("encode");
    for i in 1..=4 {
        let bytes = if i == 3 {
            &jpeg[..jpeg.len() / 3]
        } else {
            &jpeg[..]
        };
        std::fs::write(frames.join(format!("{i:06}.jpg")), bytes).expect("write");
    }
    let sessions = dir.path().join("sessions");
    let (code, out, err) = run(&mut play_frames(&frames, &sessions, "cut"));
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        err.contains("000003.jpg") && err.contains("cut short"),
        "{out}{err}"
    );
    let session = Session::load(&sessions.join("cut")).expect("session");
    assert_eq!(session.steps.len(), 2, "the cut frame was played");
    let end = session.end.expect("an end record");
    assert!(
        end.starts_with("error: ") && end.contains("000003.jpg"),
        "{end}"
    );
}

#[test]
fn a_session_whose_answer_held_a_non_finite_number_stays_readable() {
    // Before the parsers refused `nan`, such an answer's parsed call was written with a
    // `null` argument; report and replay must still read that file.
    let dir = tempfile::tempdir().expect("temp");
    let sessions = dir.path().join("sessions");
    let (code, out, err) = run(&mut play_frames(
        &support::fixture("detector/images"),
        &sessions,
        "nan",
    ));
    assert_eq!(code, 1, "{out}{err}");
    let log = sessions.join("nan/session.jsonl");
    let text = std::fs::read_to_string(&log).expect("log");
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let step = lines
        .iter_mut()
        .find(|l| l["kind"] == "step")
        .expect("a step");
    step["attempts"] = serde_json::json!([{
        "answer": "Action: mine_log(nan)",
        "parsed": {"skill": "mine_log", "args": [{"value": null}]},
        "rejected": "argument `nan` is not a finite number"
    }]);
    let rewritten: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&log, rewritten.join("\n") + "\n").expect("rewrite");
    let session = Session::load(&sessions.join("nan")).expect("readable");
    let parsed = session.steps[0].attempts[0]
        .parsed
        .as_ref()
        .expect("parsed");
    assert!(parsed.args[0].value.is_nan());
    let report = dir.path().join("report.html");
    let (code, _, err) = vistawise(&[
        "report",
        sessions.join("nan").to_str().expect("utf8"),
        "-o",
        report.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn ctrl_c_while_the_llm_is_slow_ends_the_session_at_once() {
    // An endpoint that takes a minute to answer: SIGINT must cut the request, not wait for it
    // (and its retries), and the session must still close with its end record.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = rt.block_on(async {
        let server = wiremock::MockServer::start().await;
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .respond_with(wiremock::ResponseTemplate::new(200).set_delay(Duration::from_secs(60)))
            .mount(&server)
            .await;
        server
    });
    let sessions = tempfile::tempdir().expect("temp");
    let mut child = play_frames_with(
        &support::fixture("detector/images"),
        sessions.path(),
        "slow",
        "llm",
    )
    .args(["--max-cost", "0"])
    .args(["--set", &format!("llm.base_url={}/v1", server.uri())])
    .args(["--set", "llm.model=slow", "--set", "llm.timeout_secs=90"])
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("spawn");
    support::wait_until(
        Duration::from_secs(60),
        || {
            rt.block_on(server.received_requests())
                .is_some_and(|r| !r.is_empty())
        },
        "the first LLM request",
    );
    let started = std::time::Instant::now();
    // SAFETY: signalling our own child process by its pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    child.wait().expect("wait");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "SIGINT took {:?} to end the session",
        started.elapsed()
    );
    let session = Session::load(&sessions.path().join("slow")).expect("session");
    let end = session.end.expect("an end record");
    assert!(end.starts_with("stopped: interrupted"), "{end}");
}

/// A picture with a different colour in every pixel, so a shifted or swapped capture shows.
fn pattern(w: u32, h: u32) -> image::RgbImage {
    image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([
            (x * 7 % 256) as u8,
            (y * 11 % 256) as u8,
            ((x + y) % 256) as u8,
        ])
    })
}

#[test]
fn the_window_capture_reads_the_shown_pixels_and_follows_the_window() {
    use vistawise::capture::frame::CaptureError;
    use vistawise::capture::{PixelPath, Transport, WindowCapture};
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{ConfigureWindowAux, ConnectionExt};
    use x11rb::wrapper::ConnectionExt as _;

    let x = XServer::start(1280, 800);
    let window = TestWindow::open(&x.display, TITLE, 320, 180);
    let shown = pattern(320, 180);
    window.show_image(&shown);
    let mut shared = WindowCapture::open_on(Some(&x.display), window.id, Transport::Auto)
        .expect("capture over MIT-SHM");
    let mut core = WindowCapture::open_on(Some(&x.display), window.id, Transport::Core)
        .expect("capture over the core request");
    assert_eq!(
        shared.pixel_path(),
        PixelPath::SharedMemory,
        "Xvfb offers MIT-SHM"
    );
    assert_eq!(core.pixel_path(), PixelPath::CoreRequest);
    for capture in [&mut shared, &mut core] {
        let (image, info) = capture.grab().expect("grab");
        assert!(image == shown, "the captured pixels are the shown ones");
        assert_eq!((info.width, info.height, info.id), (320, 180, window.id));
        assert_eq!(info.title, TITLE);
        assert!(!info.minimized);
    }

    // Moved and grown: the capture follows without being opened again.
    let (_, before) = shared.grab().expect("grab");
    window
        .conn
        .configure_window(
            window.id,
            &ConfigureWindowAux::new()
                .x(before.x + 100)
                .y(before.y + 50)
                .width(640)
                .height(360),
        )
        .expect("configure");
    window.conn.sync().expect("sync");
    let bigger = pattern(640, 360);
    support::wait_until(
        Duration::from_secs(10),
        || {
            shared
                .grab()
                .is_ok_and(|(_, i)| i.width == 640 && i.x != before.x)
        },
        "the window to move and grow",
    );
    window.show_image(&bigger);
    let (image, info) = shared.grab().expect("grab after the move");
    assert!(image == bigger, "the grown window's pixels come back whole");
    assert_eq!((info.width, info.height), (640, 360));
    assert!(
        shared.pixel_path() == PixelPath::SharedMemory,
        "the shared buffer grew with the window"
    );

    window.conn.destroy_window(window.id).expect("destroy");
    window.conn.flush().expect("flush");
    support::wait_until(
        Duration::from_secs(10),
        || matches!(shared.grab(), Err(CaptureError::Gone(id)) if id == window.id),
        "a grab of the destroyed window to say it is gone",
    );
}

#[test]
fn the_step_bench_times_every_stage_on_frames_captured_from_its_own_window() {
    let x = XServer::start(1280, 800);
    let frames = tempfile::tempdir().expect("temp");
    let wide = frame();
    for (i, img) in [wide.clone(), image::imageops::flip_horizontal(&wide)]
        .iter()
        .enumerate()
    {
        img.save(frames.path().join(format!("{i:06}.png")))
            .expect("frame");
    }
    let dir = frames.path().to_str().expect("utf-8 path");
    // `bench step --json` on these frames, shown on this display; its report.
    let bench = |args: &[&str]| -> serde_json::Value {
        let (code, out, err) = run(binary()
            .args(["bench", "step", "--frames", dir, "--json"])
            .args(args)
            .env("DISPLAY", &x.display)
            .env("VISTAWISE_ORT_LIB", support::ort_lib())
            .env(
                "VISTAWISE_DETECTOR__MODEL",
                "tests/fixtures/detector/tiny-raw.onnx",
            ));
        assert_eq!(code, 0, "{out}{err}");
        serde_json::from_str(&out).expect("JSON report")
    };
    let report = bench(&["--steps", "4", "--warmup", "2", "--task", "planks"]);
    assert_eq!(report["steps"], 4);
    assert_eq!(
        (report["frame_w"].as_u64(), report["frame_h"].as_u64()),
        (Some(640), Some(360))
    );
    assert_eq!(report["capture"], "shared-memory");
    assert_eq!(
        report["capture_mismatches"], 0,
        "every captured frame is the shown one"
    );
    let stages = report["stages"].as_array().expect("stages");
    let names: Vec<&str> = stages.iter().filter_map(|s| s["stage"].as_str()).collect();
    assert_eq!(names, vistawise::agent::bench::STAGES);
    let median = |name: &str| {
        stages
            .iter()
            .find(|s| s["stage"] == name)
            .and_then(|s| s["median_ms"].as_f64())
            .expect("stage")
    };
    for s in stages {
        let (min, med) = (
            s["min_ms"].as_f64().expect("min"),
            s["median_ms"].as_f64().expect("median"),
        );
        assert!(min > 0.0 && min <= med, "{s}");
    }
    let overhead = report["overhead"].as_f64().expect("overhead");
    assert!(overhead.is_finite() && overhead > -1.0, "{overhead}");
    assert!(report["floor"]["min_ms"].as_f64() > Some(0.0));
    assert!(median("step") > median("inference"));

    // xcap, the capture where no X connection opens, forced: the same pixels come back.
    let report = bench(&[
        "--steps",
        "2",
        "--warmup",
        "1",
        "--set",
        "game.capture=xcap",
    ]);
    assert_eq!(report["capture"], "xcap");
    assert_eq!(report["steps"], 2);
    assert_eq!(
        report["capture_mismatches"], 0,
        "every frame captured through xcap is the shown one"
    );

    // Frames of two sizes cannot be shown in one window: refused by name.
    image::RgbImage::new(32, 32)
        .save(frames.path().join("000009.png"))
        .expect("odd frame");
    let (code, _, err) = run(binary()
        .args(["bench", "step", "--frames", dir, "--capture", "none"])
        .env("VISTAWISE_ORT_LIB", support::ort_lib()));
    assert_ne!(code, 0);
    assert!(err.contains("000009.png is 32x32"), "{err}");
}
