//! The desktop skill library: skills as data (`skills/<game>/*.toml`), GUI slot geometry, and
//! safe mouse/keyboard control (every target inside the window, everything held released).

pub mod emergency;
pub mod execute;
pub mod expand;
pub mod gui;
pub mod gui_scale;
pub mod input;
pub mod keys;
pub mod library;

pub use execute::{ActResult, ExecError, Executed, StopFlag, StopReason, execute};
pub use expand::{
    CallArg, CallError, Camera, ExpandContext, InputEvent, SkillCall, SlotGeometry, plan,
};
pub use input::{
    DryRun, EnigoBackend, InputBackend, InputError, Released, WindowRect, release_held_input,
};
pub use keys::{Button, Key, KeyMap};
pub use library::{LibraryError, Skill, SkillLibrary, SlotNames};
