//! Small text helpers shared by the modules.

/// "a, b, c" or "nothing".
pub fn list_or_none<I, S>(items: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let v: Vec<String> = items.into_iter().map(|s| s.as_ref().to_string()).collect();
    if v.is_empty() {
        "nothing".into()
    } else {
        v.join(", ")
    }
}

/// A module's prompt section: a header line, the body, a blank line. Empty body, empty section.
pub fn section(header: &str, body: &str) -> String {
    if body.trim().is_empty() {
        String::new()
    } else {
        format!("{header}\n{}\n\n", body.trim_end())
    }
}

/// Whether a text carries screen coordinates or slot ids (which an abstract memory must not):
/// "(412, 300)", "x=412", "y: 30", "412px", "slot 3", "slot #3", "slot_id 12".
pub fn has_screen_specifics(text: &str) -> bool {
    let t = text.to_lowercase();
    let b = t.as_bytes();
    let digit_after = |mut i: usize, skip: &[u8]| {
        while i < b.len() && skip.contains(&b[i]) {
            i += 1;
        }
        i < b.len() && b[i].is_ascii_digit()
    };
    for (i, &c) in b.iter().enumerate() {
        // "(12, 34"
        if c == b'(' && digit_after(i + 1, b" -") {
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_digit() || b" .-".contains(&b[j])) {
                j += 1;
            }
            if j < b.len() && b[j] == b',' && digit_after(j + 1, b" -") {
                return true;
            }
        }
        // "x=12", "y: 3" as a word
        if (c == b'x' || c == b'y')
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && i + 1 < b.len()
            && digit_after(i + 1, b" =:")
            && b[i + 1..].iter().take_while(|&&d| d == b' ').count() < 2
            && b[i + 1..]
                .iter()
                .find(|&&d| d != b' ')
                .is_some_and(|&d| d == b'=' || d == b':')
        {
            return true;
        }
        // "12px"
        if c.is_ascii_digit() && t[i + 1..].starts_with("px") {
            return true;
        }
    }
    // "slot 3", "slot #3", "slot id 3", "slot_id=3", "slot index 3"
    let mut rest = t.as_str();
    while let Some(p) = rest.find("slot") {
        let after = &rest[p + 4..];
        let after = after.trim_start_matches(|c: char| {
            c == ' ' || c == '_' || c == '#' || c == '=' || c == ':' || c == '-'
        });
        let after = after
            .strip_prefix("id")
            .or_else(|| after.strip_prefix("index"))
            .or_else(|| after.strip_prefix("number"))
            .unwrap_or(after)
            .trim_start_matches([' ', '_', '#', '=', ':']);
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            return true;
        }
        rest = &rest[p + 4..];
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screen_specifics_are_found() {
        for s in [
            "click at (412, 300)",
            "move the mouse to x=412",
            "y: 30 then",
            "a 32px icon",
            "put it in slot 3",
            "slot #3",
            "slot_id=12",
            "slot index 4",
        ] {
            assert!(has_screen_specifics(s), "{s}");
        }
        for s in [
            "put 3 cobblestone in the top row and 2 sticks below",
            "open the crafting table (a placed block)",
            "needs a wooden pickaxe, mine 3 stone",
            "any free slot",
            "2x2 grid",
        ] {
            assert!(!has_screen_specifics(s), "{s}");
        }
    }

    #[test]
    fn empty_sections_render_as_nothing() {
        assert_eq!(section("H:", "  \n"), "");
        assert_eq!(section("H:", "a\n"), "H:\na\n\n");
    }
}
