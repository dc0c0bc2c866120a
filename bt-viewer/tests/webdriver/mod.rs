//! Headless Chromium through chromedriver, for the browser tests of
//! bt-viewer and bt-bevy, and the page helpers they share.

use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

/// One browser at a time: the machine is small, and the timing test must
/// run alone.
static BROWSER: Mutex<()> = Mutex::new(());

/// The port of the running chromedriver, for [`browser_log`].
static DRIVER_PORT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);

fn on_path(name: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// chromedriver and the browser binary, or `None` (with a notice) when
/// they are missing outside CI.
///
/// # Panics
/// Under CI when one is missing.
fn tools() -> Option<(PathBuf, PathBuf)> {
    let driver = on_path("chromedriver");
    let browser = ["/usr/lib/chromium/chromium"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .or_else(|| on_path("chromium"))
        .or_else(|| on_path("chromium-browser"));
    match (driver, browser) {
        (Some(d), Some(b)) => Some((d, b)),
        _ => {
            let msg = "the browser tests need Chromium and chromedriver: \
                       run `apt-get update && apt-get install -y chromium chromium-driver`";
            if std::env::var_os("CI").is_some() {
                panic!("{msg}");
            }
            // Straight to stderr: the test harness does not capture it, so
            // the notice shows even though the test passes.
            let bar = "!".repeat(72);
            let notice = format!("\n{bar}\n!!! browser test SKIPPED: {msg}\n{bar}\n\n");
            let _ = std::io::Write::write_all(&mut std::io::stderr(), notice.as_bytes());
            None
        }
    }
}

/// A chromedriver process in a process group of its own, with the browser
/// it starts: the group is killed when dropped, so that a test that
/// panics (and never closes its session) leaves no browser running.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `test` with a headless browser whose window is `width` × `height`,
/// or skips it (see [`tools`]). One browser at a time in a test binary.
pub fn with_browser<F>((width, height): (u32, u32), test: impl FnOnce(Client) -> F)
where
    F: std::future::Future<Output = ()>,
{
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let Some((driver, browser)) = tools() else {
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let _driver = Driver(
        Command::new(&driver)
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting chromedriver"),
    );
    DRIVER_PORT.store(port, std::sync::atomic::Ordering::Relaxed);
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": browser,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", format!("--window-size={width},{height}"),
                         "--hide-scrollbars", "--font-render-hinting=none"],
            }),
        );
        // The console's messages, for `browser_log`.
        caps.insert("goog:loggingPrefs".into(), json!({ "browser": "ALL" }));
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a browser session");
        let closer = client.clone();
        test(client).await;
        let _ = closer.close().await;
    });
}

/// Runs `script` in the page (30 s at most).
#[allow(dead_code)]
pub async fn js(client: &Client, script: &str) -> Value {
    match tokio::time::timeout(Duration::from_secs(30), client.execute(script, vec![])).await {
        Ok(Ok(value)) => value,
        Ok(Err(e)) => panic!("{script}: {e}"),
        Err(_) => panic!("{script}: no answer"),
    }
}

/// Waits (`within` at most) until `script` returns true.
#[allow(dead_code)]
pub async fn until_within(client: &Client, script: &str, what: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while js(client, script).await != json!(true) {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

/// Waits (10 s at most) until `script` returns true.
#[allow(dead_code)]
pub async fn until(client: &Client, script: &str, what: &str) {
    until_within(client, script, what, Duration::from_secs(10)).await;
}

/// Clicks the element `css` names (30 s at most).
#[allow(dead_code)]
pub async fn click(client: &Client, css: &str) {
    let clicked = async {
        let element = client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"));
        // In the middle of its scrolling box, as a user would bring it: a
        // row scrolled to the edge lies under its table's sticky header.
        client
            .execute(
                "arguments[0].scrollIntoView({block: 'center', inline: 'nearest'});",
                vec![serde_json::to_value(&element).unwrap()],
            )
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"));
        element
            .click()
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"));
    };
    tokio::time::timeout(Duration::from_secs(30), clicked)
        .await
        .unwrap_or_else(|_| panic!("{css}: the click took no effect"));
}

/// The browser's console messages since the last call (chromedriver's
/// `browser` log): each `{level, message, source, timestamp}`. Errors
/// and warnings the page's script cannot see (a failed load, a canvas
/// warning) are among them.
#[allow(dead_code)]
pub async fn browser_log(client: &Client) -> Vec<Value> {
    use std::io::{Read, Write};
    let session = client
        .session_id()
        .await
        .expect("the session")
        .expect("a session id");
    let port = DRIVER_PORT.load(std::sync::atomic::Ordering::Relaxed);
    let body = r#"{"type":"browser"}"#;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("chromedriver");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "POST /session/{session}/se/log HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // Read up to the end of the body its length gives: chromedriver may
    // keep the connection open.
    let mut answer = Vec::new();
    let mut chunk = [0u8; 8192];
    let body_at = loop {
        let n = stream.read(&mut chunk).expect("chromedriver's answer");
        assert!(n > 0, "chromedriver closed the connection");
        answer.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&answer);
        let Some(head) = text.find("\r\n\r\n") else {
            continue;
        };
        let length = text[..head]
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            })
            .expect("a Content-Length");
        if answer.len() >= head + 4 + length {
            break head + 4;
        }
    };
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let json = &answer[body_at..];
    let value: Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("chromedriver's log: {e}: {answer}"));
    value["value"]
        .as_array()
        .unwrap_or_else(|| panic!("chromedriver's log: {answer}"))
        .clone()
}

/// Where a test writes its pages: `target/viewer-tests/{name}`.
#[allow(dead_code)]
pub fn out_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/viewer-tests")
        .join(name)
}

/// The `file://` address of the page at `path`.
#[allow(dead_code)]
pub fn file_url(path: &Path) -> String {
    format!(
        "file://{}",
        path.canonicalize().expect("the page").display()
    )
}

/// Waits (`within` at most) until the page has opened its recording.
#[allow(dead_code)]
pub async fn wait_ready_within(client: &Client, within: Duration) {
    client
        .wait()
        .at_most(within)
        .for_element(Locator::Css("body[data-ready='1']"))
        .await
        .expect("the page opened its recording");
}
