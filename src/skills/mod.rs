//! The desktop skill library: skills as data (`skills/<game>/*.toml`), GUI slot geometry, and
//! safe mouse/keyboard control (every target inside the window, everything held released).

mod emergency;
mod execute;
pub mod expand;
mod gui;
pub mod gui_scale;
mod input;
mod keys;
mod library;

pub use emergency::Watcher;
pub use execute::{ActResult, ExecError, Executed, StopFlag, StopReason, execute};
pub use expand::{
    CallArg, CallError, Camera, ExpandContext, InputEvent, SkillCall, SlotGeometry, plan,
};
pub use gui::{GuiGeometry, GuiLayout, Slot};
pub use input::{
    DryRun, EnigoBackend, InputBackend, InputError, Released, WindowRect, release_held_input,
};
pub use keys::{Button, Key, KeyMap};
pub use library::{LibraryError, ParamType, Skill, SkillLibrary, SlotNames};
