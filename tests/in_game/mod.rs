//! Tests that start a real game: each holds [`crate::support::one_game`]'s lock for as long as
//! its game runs.

mod minecraft_web_autolabel;
mod minecraft_web_closed_loop;
mod minetest_autolabel;
mod minetest_camera;
mod minetest_closed_loop;
mod minetest_counts;
mod minetest_probe;
