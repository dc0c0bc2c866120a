//! The viewer page: one HTML file with its script and style inside.

use std::path::{Path, PathBuf};

/// The viewer, as it is: opened on its own it asks for a recording file
/// (or, served by the live server `LiveServer`, feature `live`, follows
/// the live stream).
///
/// One file for the user, assembled here from the files under `page/`:
/// the markup, the styles, the live client's controls, and the main
/// script split by concern (the recording and its index, the text of
/// events and dumps, the tree, the timeline, the cursor, the queries, the
/// live stream, the wiring). The main script is one function whose body
/// runs through its files in this order.
pub const PAGE: &str = concat!(
    include_str!("page/head.html"),
    "<style>\n",
    include_str!("page/style.css"),
    "</style>\n",
    include_str!("page/body.html"),
    "<script>\n",
    include_str!("page/live.js"),
    "</script>\n<!-- /live controls -->\n",
    "<!--RECORDING-->\n<script>\n",
    include_str!("page/recording.js"),
    include_str!("page/text.js"),
    include_str!("page/tree.js"),
    include_str!("page/timeline.js"),
    include_str!("page/cursor.js"),
    include_str!("page/query.js"),
    include_str!("page/follow.js"),
    include_str!("page/crowd.js"),
    include_str!("page/wire.js"),
    "</script>\n</body>\n</html>\n",
);

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
