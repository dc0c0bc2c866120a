//! The viewer page: one HTML file with its script and style inside.

use std::path::{Path, PathBuf};

/// The viewer, as it is: opened on its own it asks for a recording file
/// (or, served by the live server `LiveServer`, feature `live`, follows
/// the live stream).
pub const PAGE: &str = include_str!("viewer.html");

/// The marker in [`PAGE`] where [`page_with`] puts the recording.
const SLOT: &str = "<!--RECORDING-->";

/// The page with `recording` (the JSON text of a
/// [`Recording`](crate::Recording)) inside it, so that it opens with no
/// other file.
pub fn page_with(recording: &str) -> String {
    let json = script_safe(recording);
    let script = format!(r#"<script id="recording" type="application/json">{json}</script>"#);
    PAGE.replacen(SLOT, &script, 1)
}

/// `json` with `<`, `>` and `&` written as JSON escapes (`\u003c`, …),
/// which JSON reads as the same characters: inside a script element, the
/// text can then neither end it (`</script>`) nor open a comment (`<!--`)
/// that would hide its end. Outside strings, JSON has none of the three.
fn script_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
    out
}

/// Writes the recording as `recording.json` and the page with it inside
/// as `viewer.html` into `dir` (made if missing), and returns the page's
/// path.
///
/// # Errors
/// Whatever creating the directory or writing the files returns.
pub fn write_page(dir: &Path, recording: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("recording.json"), recording)?;
    let page = dir.join("viewer.html");
    std::fs::write(&page, page_with(recording))?;
    Ok(page)
}
