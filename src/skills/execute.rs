//! Sends an expanded skill call, and guarantees that whatever it pressed is released: when the
//! call ends, fails, is stopped, and when the thread unwinds from a panic.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::expand::InputEvent;
use super::input::{InputBackend, InputError};
use super::keys::{Button, Key};

/// Why the agent must stop now. Stored in a [`StopFlag`] as its discriminant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum StopReason {
    Interrupted = 1,
    EmergencyKey = 2,
    PointerInCorner = 3,
    WindowLost = 4,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StopReason::Interrupted => "interrupted (Ctrl-C / SIGTERM)",
            StopReason::EmergencyKey => "emergency stop key pressed",
            StopReason::PointerInCorner => "pointer held in a screen corner",
            StopReason::WindowLost => "the game window lost focus or disappeared",
        })
    }
}

/// What became of a step's input events. A session stores it as the text `Display` gives
/// ("done", "dry run: nothing sent", "stopped: ...", "failed: ..."), and reads that text back.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", from = "String")]
pub enum ActResult {
    /// Every event was sent.
    Done,
    /// A dry run: nothing was sent.
    DryRun,
    /// A stop cut the events short (what was held was released).
    Stopped(String),
    /// An event could not be sent (what was held was released).
    Failed(String),
}

impl ActResult {
    /// The action ran as asked (or would have, in a dry run): whether it did any good is for
    /// the next frame to tell.
    pub fn ran(&self) -> bool {
        matches!(self, ActResult::Done | ActResult::DryRun)
    }
}

impl std::fmt::Display for ActResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActResult::Done => f.write_str("done"),
            ActResult::DryRun => f.write_str("dry run: nothing sent"),
            ActResult::Stopped(why) => write!(f, "stopped: {why}"),
            ActResult::Failed(why) => write!(f, "failed: {why}"),
        }
    }
}

impl From<ActResult> for String {
    fn from(r: ActResult) -> String {
        r.to_string()
    }
}

impl From<String> for ActResult {
    /// The session text back; a text of no known form is a failure that says what it was.
    fn from(s: String) -> ActResult {
        if s == "done" {
            ActResult::Done
        } else if s.starts_with("dry run") {
            ActResult::DryRun
        } else if let Some(why) = s.strip_prefix("stopped: ") {
            ActResult::Stopped(why.to_string())
        } else if let Some(why) = s.strip_prefix("failed: ") {
            ActResult::Failed(why.to_string())
        } else {
            ActResult::Failed(s)
        }
    }
}

impl From<Result<(), ExecError>> for ActResult {
    fn from(r: Result<(), ExecError>) -> ActResult {
        match r {
            Ok(()) => ActResult::Done,
            Err(ExecError::Stopped(why)) => ActResult::Stopped(why.to_string()),
            Err(ExecError::Input(e)) => ActResult::Failed(e.to_string()),
        }
    }
}

/// Shared between the executor, the signal handlers and the emergency-stop watcher.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(pub Arc<AtomicUsize>);

impl StopFlag {
    pub fn request(&self, reason: StopReason) {
        // The first reason wins; later ones do not overwrite it.
        let _ = self
            .0
            .compare_exchange(0, reason as usize, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Clears a focus/window loss once the window is back (the other reasons are final).
    pub fn clear_window_lost(&self) {
        let _ = self.0.compare_exchange(
            StopReason::WindowLost as usize,
            0,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
    }

    pub fn reason(&self) -> Option<StopReason> {
        match self.0.load(Ordering::SeqCst) {
            1 => Some(StopReason::Interrupted),
            2 => Some(StopReason::EmergencyKey),
            3 => Some(StopReason::PointerInCorner),
            4 => Some(StopReason::WindowLost),
            _ => None,
        }
    }

    /// Makes SIGINT and SIGTERM request a stop instead of killing the process, so held input
    /// is released on the way out. A second signal exits at once (status 130): the way out
    /// when the first one seems to do nothing.
    pub fn on_signals(&self) -> std::io::Result<()> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let signalled = Arc::new(std::sync::atomic::AtomicBool::new(false));
        for sig in [SIGINT, SIGTERM] {
            // Handlers run in the order they were registered: the exit looks at the flag
            // before the first signal sets it.
            signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&signalled))?;
            signal_hook::flag::register(sig, Arc::clone(&signalled))?;
            signal_hook::flag::register_usize(
                sig,
                Arc::clone(&self.0),
                StopReason::Interrupted as usize,
            )?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("stopped: {0}")]
    Stopped(StopReason),
    #[error(transparent)]
    Input(#[from] InputError),
}

/// Keys and buttons currently pressed through a backend; released when dropped.
struct Held<'b> {
    backend: &'b mut dyn InputBackend,
    keys: BTreeSet<Key>,
    buttons: BTreeSet<Button>,
}

impl Held<'_> {
    fn send(&mut self, event: &InputEvent) -> Result<(), InputError> {
        self.backend.send(event)?;
        match *event {
            InputEvent::KeyDown { key } => {
                self.keys.insert(key);
            }
            InputEvent::KeyUp { key } => {
                self.keys.remove(&key);
            }
            InputEvent::ButtonDown { button } => {
                self.buttons.insert(button);
            }
            InputEvent::ButtonUp { button } => {
                self.buttons.remove(&button);
            }
            _ => {}
        }
        Ok(())
    }

    /// Releases everything; keeps going past errors so one failure cannot leave others held.
    fn release_all(&mut self) -> Vec<InputEvent> {
        let mut released = Vec::new();
        let ups = self
            .buttons
            .iter()
            .map(|&button| InputEvent::ButtonUp { button })
            .chain(self.keys.iter().map(|&key| InputEvent::KeyUp { key }))
            .collect::<Vec<_>>();
        for e in ups {
            if let Err(err) = self.backend.send(&e) {
                tracing::error!("could not release held input ({e}): {err}");
            }
            released.push(e);
        }
        self.keys.clear();
        self.buttons.clear();
        released
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if !self.keys.is_empty() || !self.buttons.is_empty() {
            let released = self.release_all();
            tracing::warn!("released held input on the way out: {released:?}");
        }
    }
}

/// What a call sent (for the session record), including releases done on the way out.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Executed {
    pub events: Vec<InputEvent>,
    pub released: Vec<InputEvent>,
}

/// How often a wait looks at the stop flag: the emergency stop acts within this.
const STOP_POLL: Duration = Duration::from_millis(10);

/// Sends `events` in order. Stops between events (and within waits) as soon as `stop` is set;
/// whatever is held is released before it returns, on every path.
pub fn execute(
    backend: &mut dyn InputBackend,
    events: &[InputEvent],
    stop: &StopFlag,
    executed: &mut Executed,
) -> Result<(), ExecError> {
    let mut held = Held {
        backend,
        keys: BTreeSet::new(),
        buttons: BTreeSet::new(),
    };
    let result = send_all(&mut held, events, stop, executed);
    executed.released = held.release_all();
    result
}

fn send_all(
    held: &mut Held,
    events: &[InputEvent],
    stop: &StopFlag,
    executed: &mut Executed,
) -> Result<(), ExecError> {
    for event in events {
        if let Some(reason) = stop.reason() {
            return Err(ExecError::Stopped(reason));
        }
        match *event {
            InputEvent::Wait { ms } => {
                let until = Instant::now() + Duration::from_millis(ms);
                loop {
                    let now = Instant::now();
                    if now >= until {
                        break;
                    }
                    if let Some(reason) = stop.reason() {
                        return Err(ExecError::Stopped(reason));
                    }
                    std::thread::sleep(STOP_POLL.min(until - now));
                }
            }
            _ => held.send(event)?,
        }
        executed.events.push(*event);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::input::{DryRun, WindowRect};

    #[test]
    fn an_act_result_reads_back_from_the_text_a_session_holds() {
        let all = [
            ActResult::Done,
            ActResult::DryRun,
            ActResult::Stopped(StopReason::EmergencyKey.to_string()),
            ActResult::Failed("xdo: no display".into()),
        ];
        for r in all {
            let json = serde_json::to_string(&r).expect("serialise");
            assert!(json.starts_with('"'), "stored as its text: {json}");
            let back: ActResult = serde_json::from_str(&json).expect("read back");
            assert_eq!(back, r);
        }
        assert_eq!(
            serde_json::to_string(&ActResult::DryRun).expect("serialise"),
            "\"dry run: nothing sent\""
        );
        assert!(ActResult::Done.ran() && ActResult::DryRun.ran());
        assert!(!ActResult::Stopped("x".into()).ran());
        // A text of no known form is kept, as a failure.
        assert_eq!(
            ActResult::from("window moved".to_string()),
            ActResult::Failed("window moved".into())
        );
    }

    const WINDOW: WindowRect = WindowRect {
        x: 0,
        y: 0,
        w: 100,
        h: 100,
    };

    #[test]
    fn a_stop_mid_call_releases_what_was_held() {
        let mut backend = DryRun::new(WINDOW);
        let stop = StopFlag::default();
        let w = Key::Char('w');
        let events = [
            InputEvent::KeyDown { key: w },
            InputEvent::ButtonDown {
                button: Button::Left,
            },
            InputEvent::Wait { ms: 5_000 },
            InputEvent::KeyUp { key: w },
        ];
        let stopper = stop.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            stopper.request(StopReason::EmergencyKey);
        });
        let started = Instant::now();
        let mut done = Executed::default();
        let err = execute(&mut backend, &events, &stop, &mut done).expect_err("stopped");
        t.join().expect("join");
        assert!(matches!(err, ExecError::Stopped(StopReason::EmergencyKey)));
        assert!(started.elapsed() < Duration::from_millis(1_000));
        assert_eq!(
            backend.sent[2..],
            [
                InputEvent::ButtonUp {
                    button: Button::Left
                },
                InputEvent::KeyUp { key: w }
            ]
        );
        assert_eq!(done.released.len(), 2);
    }

    #[test]
    fn an_outside_target_fails_and_releases() {
        let mut backend = DryRun::new(WINDOW);
        let events = [
            InputEvent::KeyDown { key: Key::Shift },
            InputEvent::MoveTo { x: 100, y: 5 },
        ];
        let mut done = Executed::default();
        let err =
            execute(&mut backend, &events, &StopFlag::default(), &mut done).expect_err("outside");
        assert!(
            err.to_string().contains("outside the 100x100 game window"),
            "{err}"
        );
        assert_eq!(
            backend.sent,
            [
                InputEvent::KeyDown { key: Key::Shift },
                InputEvent::KeyUp { key: Key::Shift }
            ]
        );
    }

    #[test]
    fn a_panic_while_holding_releases_on_unwind() {
        struct Panicky(Vec<InputEvent>);
        impl InputBackend for Panicky {
            fn send(&mut self, e: &InputEvent) -> Result<(), InputError> {
                if matches!(e, InputEvent::MoveBy { .. }) {
                    panic!("backend bug");
                }
                self.0.push(*e);
                Ok(())
            }
            fn name(&self) -> &'static str {
                "panicky"
            }
        }
        let mut backend = Panicky(Vec::new());
        let events = [
            InputEvent::ButtonDown {
                button: Button::Right,
            },
            InputEvent::MoveBy { dx: 1, dy: 0 },
        ];
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut done = Executed::default();
            let _ = execute(&mut backend, &events, &StopFlag::default(), &mut done);
        }));
        assert!(outcome.is_err());
        assert_eq!(
            backend.0.last(),
            Some(&InputEvent::ButtonUp {
                button: Button::Right
            })
        );
    }
}
