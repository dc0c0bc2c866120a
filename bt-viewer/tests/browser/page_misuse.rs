//! Attempts to break what the comparison page and the viewer page promise:
//! the page shows the library's report as it is; when the recordings
//! cannot be compared it shows the `CompareError`'s message; labels are
//! text; no console errors or warnings.

use serde_json::{Value, json};

use crate::misuse_common;
use crate::webdriver;
use misuse_common::{CRITTER, HERD, Run, after, before, record};
use webdriver::{browser_log, js, until, with_browser};

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("bt-misuse-page-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The console's warnings and errors.
async fn complaints(client: &fantoccini::Client) -> Vec<Value> {
    browser_log(client)
        .await
        .into_iter()
        .filter(|m| m["level"] != json!("INFO") && m["level"] != json!("DEBUG"))
        .collect()
}

async fn drew(client: &fantoccini::Client) {
    for _ in 0..100 {
        let t = js(client, "return document.body.innerText").await;
        if t.as_str().is_some_and(|t| t.contains("FEED #1")) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let t = js(client, "return document.body.innerText").await;
    let bad = complaints(client).await;
    panic!("the page did not draw: {t}\nconsole: {bad:#?}");
}

#[test]
fn page_compare_labels_are_text_and_console_is_clean() {
    let d = dir("labels");
    let a = record(&CRITTER, Run::default(), before);
    let b = record(&CRITTER, Run::default(), after);
    let evil =
        r#"<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script>"#;
    let (page, c) =
        bt_viewer::write_compare_page(&d, &a, &b, [evil, "after &amp; <b>bold</b>"]).unwrap();
    assert!(c.is_ok(), "{c:?}");
    let url = format!("file://{}", page.display());
    with_browser((1200, 900), |client| async move {
        client.goto(&url).await.unwrap();
        drew(&client).await;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let pwned = js(
            &client,
            "return window.__pwned === undefined ? null : window.__pwned",
        )
        .await;
        assert_eq!(pwned, Value::Null, "a label ran as markup");
        let text = js(&client, "return document.body.innerText").await;
        let text = text.as_str().unwrap();
        assert!(
            text.contains("after &amp; <b>bold</b>"),
            "the label as text: {text}"
        );
        let bad = complaints(&client).await;
        assert!(bad.is_empty(), "console: {bad:#?}");
    });
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn page_compare_error_is_shown() {
    let d = dir("error");
    let a = record(&CRITTER, Run::default(), before);
    let b = record(&HERD, Run::default(), before);
    let (page, c) = bt_viewer::write_compare_page(&d, &a, &b, ["one", "two"]).unwrap();
    let message = c.unwrap_err().to_string();
    let url = format!("file://{}", page.display());
    with_browser((1200, 900), |client| async move {
        client.goto(&url).await.unwrap();
        let script = format!(
            "return document.body.innerText.includes({})",
            serde_json::to_string(&message).unwrap()
        );
        until(&client, &script, &format!("the page says: {message}")).await;
        let bad = complaints(&client).await;
        assert!(bad.is_empty(), "console: {bad:#?}");
    });
    let _ = std::fs::remove_dir_all(&d);
}

/// A second recording the library compares although its agent 0 has
/// `"ticks": 7`: "the page shows the library's report as it is, so the
/// two cannot disagree" — the page must not call malformed what the
/// report accepted (nor accept what it refused).
#[test]
fn page_compare_agrees_with_library_on_odd_ticks() {
    let d = dir("odd");
    let a = record(&CRITTER, Run::default(), before);
    let mut v: Value = serde_json::from_str(&record(&CRITTER, Run::default(), after)).unwrap();
    v["agents"][0]["ticks"] = json!(7);
    let b = v.to_string();
    let (page, c) = bt_viewer::write_compare_page(&d, &a, &b, ["a", "b"]).unwrap();
    let library_refuses = c.is_err();
    let url = format!("file://{}", page.display());
    with_browser((1200, 900), |client| async move {
        client.goto(&url).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        let text = js(&client, "return document.body.innerText").await;
        let text = text.as_str().unwrap();
        let page_refuses = text.contains("malformed");
        let bad = complaints(&client).await;
        assert!(bad.is_empty(), "console: {bad:#?}");
        assert_eq!(
            page_refuses,
            library_refuses,
            "library refuses: {library_refuses}, page: {}",
            text.chars().take(300).collect::<String>()
        );
    });
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn page_viewer_console_is_clean() {
    let d = dir("viewer");
    let a = record(&CRITTER, Run::default(), after);
    let page = bt_viewer::write_page(&d, &a).unwrap();
    let url = format!("file://{}", page.display());
    with_browser((1200, 900), |client| async move {
        client.goto(&url).await.unwrap();
        drew(&client).await;
        tokio::time::sleep(std::time::Duration::from_millis(800)).await;
        let bad = complaints(&client).await;
        assert!(bad.is_empty(), "console: {bad:#?}");
    });
    let _ = std::fs::remove_dir_all(&d);
}
