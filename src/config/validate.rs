//! The one rule every settings section's `validate` is written with; below the sections so that
//! they need nothing else from the config module.

/// `Ok` when `ok`, else the key and why.
pub(crate) fn check(ok: bool, key: &str, reason: &str) -> Result<(), (String, String)> {
    if ok {
        Ok(())
    } else {
        Err((key.to_string(), reason.to_string()))
    }
}
