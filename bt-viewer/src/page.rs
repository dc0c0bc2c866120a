//! The viewer page: one HTML file with its script and style inside.

use std::path::{Path, PathBuf};

use crate::{CompareError, Comparison, compare};

mod embed;

/// The viewer, as it is: opened on its own it asks for a recording file
/// (or, served by the live server `LiveServer`, feature `live`, follows
/// the live stream).
///
/// One file for the user, assembled here from the files under `page/`:
/// the markup, the styles, the live client's controls (with the panel of
/// the tree's tunables), and the main script split by concern (the
/// recording and its index, the recording as the page holds it, the text
/// of events and dumps, the tree, the timeline, the tunables' changes on
/// it, the cursor, the queries, the live stream, the comparison of two
/// runs, the wiring). The main script is one function whose body runs
/// through its files in this order.
pub const PAGE: &str = concat!(
    include_str!("page/head.html"),
    "<style>\n",
    include_str!("page/style.css"),
    include_str!("page/compare.css"),
    "</style>\n",
    include_str!("page/body.html"),
    include_str!("page/compare.html"),
    "<script>\n",
    include_str!("page/live.js"),
    include_str!("page/tune.js"),
    "</script>\n<!-- /live controls -->\n",
    "<!--RECORDING-->\n<script>\n",
    include_str!("page/recording.js"),
    include_str!("page/embed.js"),
    include_str!("page/text.js"),
    include_str!("page/tree.js"),
    include_str!("page/timeline.js"),
    include_str!("page/tuning.js"),
    include_str!("page/cursor.js"),
    include_str!("page/query.js"),
    include_str!("page/follow.js"),
    include_str!("page/compare.js"),
    include_str!("page/crowd.js"),
    include_str!("page/wire.js"),
    "</script>\n</body>\n</html>\n",
);

/// The marker in [`PAGE`] where [`page_with`] puts the recording.
const SLOT: &str = "<!--RECORDING-->";

/// The page with `recording` (the JSON text of a
/// [`Recording`](crate::Recording)) inside it, so that it opens with no
/// other file.
///
/// The page holds the text compressed (raw deflate, written in base64),
/// each agent's values apart, and unpacks them itself: a browser reads a
/// large page's text slowly, and about a quarter of the bytes opens in
/// about a third of the time. Keep the recording's own file
/// ([`write_page`] writes it beside the page) to read it with other tools.
pub fn page_with(recording: &str) -> String {
    PAGE.replacen(SLOT, &embed::scripts("recording", recording), 1)
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

/// The page comparing two recordings of one tree (each the JSON text of a
/// [`Recording`](crate::Recording)), with both inside it and what
/// [`compare`] found, and that comparison.
///
/// The page shows the first recording as the viewer does (tree, events,
/// dump, values, lanes) and, above its overview, the comparison: how many
/// agents had decided otherwise by each tick (plotted on the lanes' time
/// axis), a table of the agents that did with their first such tick and
/// what differed there (a click selects the agent at that tick), and the
/// selected agent in both runs side by side: its two lanes aligned on
/// ticks with the first divergence marked, and the events of the cursor's
/// tick in each run, the first differing step highlighted. `labels` name
/// the two runs (file names, "before" and "after"…).
///
/// When the recordings cannot be compared (see [`CompareError`]), the page
/// holds neither and says why.
pub fn compare_page_with(
    first: &str,
    second: &str,
    labels: [&str; 2],
) -> (String, Result<Comparison, CompareError>) {
    let result = compare(first, second);
    let mut doc = serde_json::json!({ "labels": labels });
    let mut scripts = String::new();
    match &result {
        Ok(c) => {
            doc["report"] = serde_json::to_value(c).expect("a comparison is JSON");
            for (id, text) in [("recording", first), ("recording-2", second)] {
                scripts.push_str(&embed::scripts(id, text));
            }
        }
        Err(e) => doc["error"] = e.to_string().into(),
    }
    let json = script_safe(&doc.to_string());
    scripts.push_str(&format!(
        r#"<script id="comparison" type="application/json">{json}</script>"#
    ));
    (PAGE.replacen(SLOT, &scripts, 1), result)
}

/// Writes the page comparing `first` with `second` ([`compare_page_with`])
/// as `compare.html` into `dir` (made if missing), and returns its path
/// and the comparison the page shows.
///
/// # Errors
/// Whatever creating the directory or writing the file returns. Two
/// recordings that cannot be compared are no error here: the page says
/// why, and the returned [`CompareError`] too.
pub fn write_compare_page(
    dir: &Path,
    first: &str,
    second: &str,
    labels: [&str; 2],
) -> std::io::Result<(PathBuf, Result<Comparison, CompareError>)> {
    std::fs::create_dir_all(dir)?;
    let (page, result) = compare_page_with(first, second, labels);
    let path = dir.join("compare.html");
    std::fs::write(&path, page)?;
    Ok((path, result))
}
