//! Finding and loading the ONNX Runtime shared library (ort `load-dynamic`).
//!
//! The library comes from the PyPI `onnxruntime` wheel, unpacked into the project's `.ort/`
//! folder; nothing is downloaded from anywhere else. Search order: the explicit path (flag or
//! `onnxruntime.library`), `VISTAWISE_ORT_LIB`, `ORT_DYLIB_PATH`, the project's `.ort/` folder
//! (current directory and the executable's ancestors, which covers `target/*/vistawise`), then
//! next to the executable.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The ONNX Runtime release the `api-31` feature is built against.
pub const ORT_VERSION: &str = "1.31.1";
const ORT_MINOR: u32 = 31;
const LIB_NAME: &str = "libonnxruntime.so.1.31.1";
const WHEEL_SUBDIR: &str = "onnxruntime/capi";

pub fn install_hint() -> String {
    format!(
        "install it from PyPI into the project's .ort/ folder:\n    \
         python3 -m pip install --no-deps --target .ort onnxruntime=={ORT_VERSION}\n\
         (or run `scripts/setup.sh`), or point VISTAWISE_ORT_LIB (or --ort-lib) at {LIB_NAME}"
    )
}

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("ONNX Runtime {ORT_VERSION} ({LIB_NAME}) was not found. Looked in:\n{}\nTo fix it, {}", format_list(.searched), install_hint())]
    NotFound { searched: Vec<PathBuf> },
    #[error(
        "ONNX Runtime library {path} could not be loaded: {reason}\nTo fix it, {}",
        install_hint()
    )]
    Load { path: PathBuf, reason: String },
    #[error(
        "ONNX Runtime at {path} is version {found}; vistawise needs {ORT_VERSION}.\nTo fix it, {}",
        install_hint()
    )]
    WrongVersion { path: PathBuf, found: String },
    #[error("ONNX Runtime environment could not be created: {0}")]
    Environment(String),
}

fn format_list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| format!("  - {}", p.display()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The loaded runtime: where it came from and its version.
#[derive(Debug, Clone)]
pub struct RuntimeInfo {
    pub library: PathBuf,
    pub version: String,
}

struct Loaded {
    info: RuntimeInfo,
    environment: ort::environment::Environment,
}

static LOADED: OnceLock<Loaded> = OnceLock::new();

/// Candidate library paths in search order (existing or not), for `explicit` and the environment.
pub fn candidates(explicit: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = explicit.filter(|p| !p.as_os_str().is_empty()) {
        out.push(p.to_path_buf());
    }
    for var in ["VISTAWISE_ORT_LIB", "ORT_DYLIB_PATH"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            out.push(PathBuf::from(v));
        }
    }
    if let Ok(cwd) = std::env::current_dir() {
        out.push(cwd.join(".ort").join(WHEEL_SUBDIR).join(LIB_NAME));
    }
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        for dir in exe_dir.ancestors().skip(1).take(3) {
            out.push(dir.join(".ort").join(WHEEL_SUBDIR).join(LIB_NAME));
        }
        out.push(exe_dir.join(LIB_NAME));
        out.push(exe_dir.join("libonnxruntime.so"));
    }
    out.dedup();
    out
}

/// The first candidate that exists. An explicit path that does not exist is an error of its own
/// (the user asked for it), not a reason to silently use another library.
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, RuntimeError> {
    let list = candidates(explicit);
    if let Some(p) = explicit.filter(|p| !p.as_os_str().is_empty()) {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(RuntimeError::NotFound {
                searched: vec![p.to_path_buf()],
            })
        };
    }
    list.iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or(RuntimeError::NotFound { searched: list })
}

/// Loads the library once per process and creates the ONNX Runtime environment.
pub fn init(explicit: Option<&Path>) -> Result<RuntimeInfo, RuntimeError> {
    if let Some(loaded) = LOADED.get() {
        return Ok(loaded.info.clone());
    }
    let path = locate(explicit)?;
    // Check the version first so a wrong library gets our message, not a failed API lookup.
    let version = library_version(&path)?;
    let minor = version
        .split('.')
        .nth(1)
        .and_then(|m| m.parse::<u32>().ok());
    if minor != Some(ORT_MINOR) {
        return Err(RuntimeError::WrongVersion {
            path,
            found: version,
        });
    }
    let builder = ort::init_from(&path).map_err(|e| RuntimeError::Load {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let environment = builder
        .with_name("vistawise")
        .build()
        .map_err(|e| RuntimeError::Environment(e.to_string()))?;
    let info = RuntimeInfo {
        library: path,
        version,
    };
    let _ = LOADED.set(Loaded {
        info: info.clone(),
        environment,
    });
    Ok(info)
}

/// The process-wide environment, after [`init`].
pub fn environment() -> Option<&'static ort::environment::Environment> {
    LOADED.get().map(|l| &l.environment)
}

/// Asks a library file for its version (`OrtGetApiBase()->GetVersionString()`), the same call
/// ort makes, without registering the library with ort yet.
pub fn library_version(path: &Path) -> Result<String, RuntimeError> {
    let load_err = |reason: String| RuntimeError::Load {
        path: path.to_path_buf(),
        reason,
    };
    // SAFETY: loading a shared library runs its initialisers; this is the library the user
    // pointed us at (or the project's own install), which ort loads the same way right after.
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| load_err(e.to_string()))?;
    // SAFETY: `OrtGetApiBase` has this signature in every ONNX Runtime release (C ABI, stable).
    let get_base: libloading::Symbol<unsafe extern "C" fn() -> *const ort::sys::OrtApiBase> =
        unsafe { lib.get(b"OrtGetApiBase") }
            .map_err(|_| load_err("not an ONNX Runtime library (no OrtGetApiBase)".into()))?;
    // SAFETY: the base struct is static data of the loaded library; its version string is a
    // NUL-terminated static C string.
    let version = unsafe {
        let base = get_base();
        if base.is_null() {
            return Err(load_err("OrtGetApiBase returned null".into()));
        }
        let raw = ((*base).GetVersionString)();
        if raw.is_null() {
            return Err(load_err("GetVersionString returned null".into()));
        }
        std::ffi::CStr::from_ptr(raw).to_string_lossy().into_owned()
    };
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_onnx_runtime_is_rejected_with_its_path() {
        let dir = tempfile::tempdir().expect("temp");
        let fake = dir.path().join("libonnxruntime.so.1.31.1");
        std::fs::write(&fake, b"not a library").expect("write");
        let err = library_version(&fake).expect_err("not a library");
        assert!(
            err.to_string().contains("libonnxruntime.so.1.31.1"),
            "{err}"
        );
    }

    #[test]
    fn missing_explicit_library_says_how_to_install() {
        let err = locate(Some(Path::new("/nonexistent/libonnxruntime.so"))).expect_err("missing");
        let text = err.to_string();
        assert!(text.contains("/nonexistent/libonnxruntime.so"), "{text}");
        assert!(
            text.contains("pip install --no-deps --target .ort onnxruntime==1.31.1"),
            "{text}"
        );
    }

    #[test]
    fn search_order_puts_explicit_first_and_project_folder_before_exe_dir() {
        let list = candidates(Some(Path::new("/x/lib.so")));
        assert_eq!(list[0], PathBuf::from("/x/lib.so"));
        let project = list
            .iter()
            .position(|p| p.ends_with(".ort/onnxruntime/capi/libonnxruntime.so.1.31.1"))
            .expect("project folder searched");
        let exe_dir = list
            .iter()
            .position(|p| p.ends_with("libonnxruntime.so"))
            .expect("exe dir searched");
        assert!(project < exe_dir);
    }
}
