//! The integration tests, one crate: the library and its dependencies are linked once, not once
//! a file. `support` holds the real components they share (Xvfb + jwm, test windows, the games).
//!
//! The tests under `in_game::` each start a real game (Minetest, or the Minecraft client in
//! Chromium). They take one lock, so two games never run at once, and `scripts/test.sh` runs them
//! in a pass of their own (`cargo test --test tests in_game:: -- --test-threads=1`), so that nothing
//! heavy runs beside a closed loop.

mod support;

mod agent;
mod annotate;
mod cli;
mod detector_reference;
mod doctor;
mod eval;
mod in_game;
mod kg;
mod llm;
mod llm_e2e;
mod memory;
mod minecraft_counts;
mod minetest_profile;
mod minilm;
mod planner;
mod policy_fuzz;
mod skills;
