//! The closed-loop test game (Minetest 5.6 + minetest_game): the ground-truth probe client, the
//! game's camera model, and the auto-labeller that turns the running game into detector data.
//! The game itself is started by `tests/minetest/gameenv.sh`.

pub mod autolabel;
pub mod camera;
pub mod probe;
