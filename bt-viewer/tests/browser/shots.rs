//! The screenshots of the docs (`docs/*.png`), taken in headless Chromium
//! from the `viewer` example's pages. Ignored: `scripts/screenshots.sh`
//! runs the example (the page it writes, and its live page) and then this
//! test, with the pages' addresses in `BT_SHOTS_PAGE` and `BT_SHOTS_LIVE`.

use crate::webdriver;
use webdriver::{js, until_within};

use std::path::{Path, PathBuf};
use std::time::Duration;

use fantoccini::{Client, Locator};

/// A viewport of `w` × `h`, whatever the window's frame takes.
async fn viewport(client: &Client, (w, h): (u64, u64)) {
    let inner = js(client, "return [window.innerWidth, window.innerHeight];").await;
    let (iw, ih) = (inner[0].as_u64().unwrap(), inner[1].as_u64().unwrap());
    client
        .set_window_size((2 * w - iw) as u32, (2 * h - ih) as u32)
        .await
        .unwrap();
}

/// Writes the screenshot to `docs/<name>`, under 300 KB.
async fn shot(client: &Client, name: &str) {
    let png = client.screenshot().await.unwrap();
    assert!(png.len() < 300 << 10, "{name}: {} bytes", png.len());
    let docs: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(name);
    std::fs::write(&docs, &png).unwrap();
    println!("{}: {} KB", docs.display(), png.len() / 1024);
}

#[test]
#[ignore = "writes docs/*.png: run by scripts/screenshots.sh"]
fn screenshots_of_the_example_pages() {
    let page = std::env::var("BT_SHOTS_PAGE").expect("BT_SHOTS_PAGE: the example's page");
    let live = std::env::var("BT_SHOTS_LIVE").expect("BT_SHOTS_LIVE: the example's live page");
    webdriver::with_browser((1400, 900), |client| async move {
        client.goto(&format!("file://{page}")).await.unwrap();
        client
            .wait()
            .at_most(Duration::from_secs(30))
            .for_element(Locator::Css("body[data-ready='1']"))
            .await
            .unwrap();
        viewport(&client, (1400, 900)).await;
        // The page (and the why): a soldier's values beside the dump and
        // plotted under its lane, at a tick it throws a grenade.
        let throw = js(
            &client,
            "const h = btViewer.query('entered', [...document.querySelectorAll('#q-item option')]\
               .find(o => o.textContent.startsWith('THROW_GRENADE')).value, 0, '', '');\
             return h;",
        )
        .await;
        let agent = throw[0].as_u64().unwrap_or(0);
        js(&client, "btViewer.clearFilter();").await;
        js(
            &client,
            &format!("btViewer.selectAgent({agent}); btViewer.zoom(0, 300);"),
        )
        .await;
        let first = js(
            &client,
            &format!(
                "const l = btViewer.lane({agent}); const s = l.spans.find(s => s[0].startsWith('THROW_GRENADE'));\
                 return s ? s[1] : 120;"
            ),
        )
        .await;
        js(&client, &format!("btViewer.seek({first});")).await;
        shot(&client, "viewer.png").await;
        // The overview, and the soldiers a query found.
        js(
            &client,
            "btViewer.zoom(btViewer.state().first, btViewer.state().last);",
        )
        .await;
        js(
            &client,
            "const q = document.getElementById('q-kind'); q.value = 'entered'; q.dispatchEvent(new Event('change'));\
             const i = document.getElementById('q-item');\
             i.value = [...i.options].find(o => o.textContent.startsWith('FLANK')).value;\
             document.getElementById('q-run').click();",
        )
        .await;
        shot(&client, "viewer_query.png").await;

        // The live page, stopped by a breakpoint on a grenade throw.
        client.goto(&live).await.unwrap();
        until_within(
            &client,
            "return !!(window.btLive && window.btLive.state() && window.btLive.state().framing);",
            "the live page never showed its controls",
            Duration::from_secs(30),
        )
        .await;
        js(
            &client,
            "document.getElementById('bp-on').value = 'enter';\
             document.getElementById('bp-on').dispatchEvent(new Event('change'));\
             document.getElementById('bp-decider').value = 'THROW_GRENADE';\
             document.getElementById('bp-add').click();",
        )
        .await;
        until_within(
            &client,
            "return window.btLive.state().paused === true;",
            "the breakpoint never stopped the example",
            Duration::from_secs(30),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        shot(&client, "viewer_live.png").await;
    });
}
