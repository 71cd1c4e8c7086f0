//! The input guard: a child process that releases every held key and button once the agent is
//! gone, however it went. Ctrl-C, SIGTERM, errors and panics are handled inside the agent; a
//! `kill -9` runs nothing of it, but the kernel still closes the pipe the guard reads.

use std::io::Read;
use std::process::{Child, Command, ExitCode, Stdio};

use anyhow::{Context, Result};

/// `vistawise input-guard` (hidden; started by commands that send real input): waits for its
/// stdin to close, then releases what the X server reports held.
pub fn run() -> Result<ExitCode> {
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin();
    // Nothing is ever written; the read returns when the agent's end of the pipe closes.
    while stdin.read(&mut sink).is_ok_and(|n| n > 0) {}
    let released = vistawise::skills::release_held_input(None)
        .map_err(|e| anyhow::anyhow!("input guard: cannot release held input: {e}"))?;
    if !released.is_empty() {
        eprintln!(
            "input guard: the agent ended with input held; released keycodes {:?}, buttons {:?}",
            released.keycodes, released.buttons
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The running guard; dropping it closes the pipe and waits for the guard's release.
pub struct InputGuard(Child);

impl InputGuard {
    pub fn start() -> Result<Self> {
        use std::os::unix::process::CommandExt;
        let exe = std::env::current_exe().context("cannot find the vistawise binary")?;
        let child = Command::new(exe)
            .arg("input-guard")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            // Its own process group: a Ctrl-C at the terminal reaches the agent, which releases
            // and exits, not the guard first.
            .process_group(0)
            .spawn()
            .context("cannot start the input guard (vistawise input-guard)")?;
        Ok(InputGuard(child))
    }
}

impl Drop for InputGuard {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}
