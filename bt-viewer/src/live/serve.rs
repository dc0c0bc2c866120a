//! The server: one thread with an event loop for every connection, and a
//! thread that makes whole recordings when a client asks for one.

use std::convert::Infallible;
use std::future::poll_fn;
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hyper::body::{Body, Bytes, Incoming};
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HOST, HeaderValue, ORIGIN};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::time::Sleep;

use super::control::{Command, MAX_BODY, Request as Control};
use super::reply::Reply;
use super::stream::{BEAT, Hub};

/// The header a control request shows the page's token in.
pub(super) const TOKEN_HEADER: &str = "x-bt-token";

/// How long the streams have to write their `end` event when the server
/// stops.
const GRACE: Duration = Duration::from_millis(300);

/// How long a recording being made then has to give up (it stops at its
/// next publish's ticks; past this it is left to finish on its own).
const LET_GO: Duration = Duration::from_millis(100);

/// What a connection over the limit gets before it is closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
Content-Length: 24\r\nRetry-After: 1\r\nConnection: close\r\n\r\ntoo many connections now";

/// Starts the server's thread on `listener`; it runs until `stop` is sent
/// (or dropped).
pub(super) fn spawn(
    listener: std::net::TcpListener,
    hub: Arc<Hub>,
    published: mpsc::UnboundedReceiver<()>,
    stop: oneshot::Receiver<()>,
) -> io::Result<JoinHandle<()>> {
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(1)
        .thread_name("bt-viewer-export")
        .thread_keep_alive(Duration::from_secs(5))
        .build()?;
    std::thread::Builder::new()
        .name("bt-viewer-live".into())
        .spawn(move || {
            runtime.block_on(run(listener, hub, published, stop));
            // The connections left are cut.
            runtime.shutdown_timeout(LET_GO);
        })
}

async fn run(
    listener: std::net::TcpListener,
    hub: Arc<Hub>,
    published: mpsc::UnboundedReceiver<()>,
    stop: oneshot::Receiver<()>,
) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    let open = Arc::new(AtomicUsize::new(0));
    tokio::spawn(accept(listener, Arc::clone(&hub), Arc::clone(&open)));
    tokio::spawn(Arc::clone(&hub).pump(published));
    let beat = Arc::clone(&hub);
    tokio::spawn(async move {
        let mut every = tokio::time::interval(BEAT);
        loop {
            every.tick().await;
            beat.while_paused();
        }
    });
    let _ = stop.await;
    hub.feed.stopping.store(true, Ordering::Relaxed);
    hub.close();
    // The streams write their `end` and close.
    let deadline = Instant::now() + GRACE;
    while open.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// One count of the open connections, given back when dropped.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn accept(listener: TcpListener, hub: Arc<Hub>, open: Arc<AtomicUsize>) {
    loop {
        let tcp = match listener.accept().await {
            Ok((tcp, _)) => tcp,
            // Out of descriptors, say: try again a little later.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        if open.load(Ordering::Relaxed) >= hub.limits.connections {
            // A fresh socket takes this much at once; then it is closed.
            let _ = tcp.try_write(BUSY);
            continue;
        }
        open.fetch_add(1, Ordering::Relaxed);
        let open = Open(Arc::clone(&open));
        tokio::spawn(connection(tcp, Arc::clone(&hub), open));
    }
}

/// Serves one request on `tcp`, and then closes it.
async fn connection(tcp: TcpStream, hub: Arc<Hub>, _open: Open) {
    let _ = tcp.set_nodelay(true);
    let limits = hub.limits;
    let io = TokioIo::new(Stalls::new(tcp, limits.write_stall));
    let kick = Arc::new(Notify::new());
    let service = {
        let kick = Arc::clone(&kick);
        service_fn(move |request| {
            let (hub, kick) = (Arc::clone(&hub), Arc::clone(&kick));
            async move { Ok::<_, Infallible>(respond(&hub, request, kick).await) }
        })
    };
    let mut served = pin!(
        http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.idle)
            .max_buf_size(limits.header_bytes)
            .keep_alive(false)
            .serve_connection(io, service)
    );
    let mut kicked = pin!(kick.notified());
    // Until it is served, or the client is dropped for falling behind.
    poll_fn(|cx| {
        if kicked.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        served.as_mut().poll(cx).map(|_| ())
    })
    .await;
}

fn reply(status: StatusCode, kind: &'static str, body: Reply) -> Response<Reply> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    response
}

fn text(status: StatusCode, body: &'static str) -> Response<Reply> {
    reply(
        status,
        "text/plain; charset=utf-8",
        Reply::text(Bytes::from_static(body.as_bytes())),
    )
}

async fn respond(hub: &Arc<Hub>, request: Request<Incoming>, kick: Arc<Notify>) -> Response<Reply> {
    // Two of a header the checks below read could be read two ways (a
    // proxy or a browser may go by the other one): whatever the names.
    for (name, why) in [
        (
            HOST,
            "a request with more than one Host header is not answered",
        ),
        (
            ORIGIN,
            "a request with more than one Origin header is not answered",
        ),
    ] {
        if request.headers().get_all(name).iter().nth(1).is_some() {
            return text(StatusCode::BAD_REQUEST, why);
        }
    }
    let host = request.headers().get(HOST).and_then(|h| h.to_str().ok());
    let authority = request.uri().authority().map(|a| a.as_str());
    if !host.is_some_and(loopback) || !authority.is_none_or(loopback) {
        return text(
            StatusCode::FORBIDDEN,
            "only loopback hosts (127.0.0.1, localhost, [::1]) are answered",
        );
    }
    // A page of another site may send a request; its origin says so.
    let origin = request
        .headers()
        .get(ORIGIN)
        .map(|o| o.to_str().unwrap_or(""));
    if !origin.is_none_or(|o| o.strip_prefix("http://").is_some_and(loopback)) {
        return text(
            StatusCode::FORBIDDEN,
            "only pages of loopback hosts (127.0.0.1, localhost, [::1]) are answered",
        );
    }
    if request.uri().path() == "/control" {
        return control(hub, request).await;
    }
    if request.uri().path() == "/view" {
        return view(hub, request).await;
    }
    if request.method() != Method::GET {
        return text(StatusCode::METHOD_NOT_ALLOWED, "only GET is answered here");
    }
    match request.uri().path() {
        "/" | "/viewer.html" => reply(
            StatusCode::OK,
            "text/html; charset=utf-8",
            Reply::text(hub.page.clone()),
        ),
        "/recording.json" => {
            let feed = &hub.feed;
            if feed.framing.load(Ordering::Relaxed) && feed.clients.load(Ordering::Relaxed) == 0 {
                // A game that calls `frame` publishes only when asked.
                let seen = hub.snapshot().seq;
                feed.waiters.fetch_add(1, Ordering::Relaxed);
                hub.count_wanted();
                hub.next_publish(seen).await;
                feed.waiters.fetch_sub(1, Ordering::Relaxed);
                hub.count_wanted();
            }
            let mut snapshot = hub.snapshot();
            // A publish the game made may still wait for the server's
            // thread to take it in: the page gets what was published.
            if snapshot.seq < feed.published.load(Ordering::Relaxed) {
                hub.next_publish(snapshot.seq).await;
                snapshot = hub.snapshot();
            }
            let Some(build) = hub.recording(&snapshot) else {
                return text(StatusCode::SERVICE_UNAVAILABLE, "nothing was published yet");
            };
            match build.json().await {
                Some(json) => reply(StatusCode::OK, "application/json", Reply::Full(Some(json))),
                None => text(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping"),
            }
        }
        "/events" => match super::view::asked(request.uri().query()) {
            Err(why) => bad_request(why),
            Ok(asked) => match hub.follow(kick, asked) {
                Some(stream) => reply(StatusCode::OK, "text/event-stream", Reply::Stream(stream)),
                None => text(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping"),
            },
        },
        "/query" => query(hub, request.uri().query()).await,
        _ => text(StatusCode::NOT_FOUND, "not found"),
    }
}

/// `GET /query?kind=…&item=…&reason=…&from=…&to=…`: the agents whose kept
/// ticks answer the page's question, worked out off the event loop:
/// `{"matches": [[agent, first tick], …]}`, in order of that tick.
async fn query(hub: &Hub, query: Option<&str>) -> Response<Reply> {
    let q = match super::feed::Query::parse(query) {
        Ok(q) => q,
        Err(why) => return bad_request(why),
    };
    let snapshot = hub.snapshot();
    let found = tokio::task::spawn_blocking(move || snapshot.query(&q)).await;
    match found {
        Ok(Ok(matches)) => reply(
            StatusCode::OK,
            "application/json",
            Reply::text(serde_json::json!({ "matches": matches }).to_string()),
        ),
        Ok(Err(why)) => bad_request(why),
        Err(_) => text(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping"),
    }
}

/// `POST /view`: a page names the lanes its stream is to follow. Like a
/// control request, it must show the page's token.
async fn view(hub: &Hub, request: Request<Incoming>) -> Response<Reply> {
    if request.method() != Method::POST {
        return text(StatusCode::METHOD_NOT_ALLOWED, "only POST is answered here");
    }
    let token = request.headers().get(TOKEN_HEADER).map(|t| t.as_bytes());
    if token != Some(hub.token.as_bytes()) {
        return text(
            StatusCode::FORBIDDEN,
            "a view request shows the page's token in an X-Bt-Token header",
        );
    }
    let body = match read_body_within(hub.limits.idle, request.into_body()).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let request: super::view::ViewRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(e) => return bad_request(format!("this is not a view request: {e}")),
    };
    match hub.set_view(&request) {
        Ok(()) => text(StatusCode::OK, "ok"),
        Err(super::view::Refused::NoStream) => text(
            StatusCode::NOT_FOUND,
            "no stream of that number follows some lanes: it ended, or it follows every lane",
        ),
        Err(super::view::Refused::TooMany) => text(
            StatusCode::BAD_REQUEST,
            "a stream follows 512 lanes at most",
        ),
    }
}

/// `POST /control`: a page pauses, steps or resumes the game, or sets its
/// breakpoints. The request must show the page's token (a page of another
/// site cannot read it, nor send the header without the server's leave).
async fn control(hub: &Hub, request: Request<Incoming>) -> Response<Reply> {
    if request.method() != Method::POST {
        return text(StatusCode::METHOD_NOT_ALLOWED, "only POST is answered here");
    }
    let token = request.headers().get(TOKEN_HEADER).map(|t| t.as_bytes());
    if token != Some(hub.token.as_bytes()) {
        return text(
            StatusCode::FORBIDDEN,
            "a control request shows the page's token in an X-Bt-Token header",
        );
    }
    if !hub.feed.framing.load(Ordering::Relaxed) {
        return text(
            StatusCode::CONFLICT,
            "the program calls LiveServer::publish, not LiveServer::frame: it cannot be stopped",
        );
    }
    let body = match read_body_within(hub.limits.idle, request.into_body()).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let request: Control = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(e) => return bad_request(format!("this is not a control request: {e}")),
    };
    let command = match request {
        Control::Beat { n } => {
            return if hub.answered(n) {
                text(StatusCode::OK, "ok")
            } else {
                text(
                    StatusCode::CONFLICT,
                    "not a beat of the game's present pause: it went on, or the beat is older",
                )
            };
        }
        Control::Pause | Control::Step | Control::Resume | Control::Tune { .. }
            if hub.feed.clients.load(Ordering::Relaxed) == 0 =>
        {
            return text(
                StatusCode::CONFLICT,
                "no page follows the stream (GET /events): the program takes no control request",
            );
        }
        Control::Tune { name, value } => match super::tune::command(&hub.snapshot(), &name, &value)
        {
            Ok(command) => command,
            Err((true, why)) => return bad_request(why),
            Err((false, why)) => {
                return reply(
                    StatusCode::CONFLICT,
                    "text/plain; charset=utf-8",
                    Reply::text(why),
                );
            }
        },
        Control::Pause => Command::Pause,
        Control::Step => Command::Step,
        Control::Resume => Command::Resume,
        Control::Breakpoints { set } => {
            let snapshot = hub.snapshot();
            let Some(tree) = snapshot.tree() else {
                return text(StatusCode::CONFLICT, "nothing was published yet");
            };
            match hub.set_breakpoints(set, tree) {
                Ok(command) => command,
                Err(e) => return bad_request(e),
            }
        }
    };
    match hub.commands.try_send(command) {
        Ok(()) => text(StatusCode::OK, "ok"),
        Err(_) => text(
            StatusCode::SERVICE_UNAVAILABLE,
            "the program has not taken the last control requests yet",
        ),
    }
}

fn bad_request(why: String) -> Response<Reply> {
    reply(
        StatusCode::BAD_REQUEST,
        "text/plain; charset=utf-8",
        Reply::text(why),
    )
}

/// [`read_body`] within `idle`: a body that comes more slowly is answered
/// `408 Request Timeout`.
async fn read_body_within(
    idle: std::time::Duration,
    body: Incoming,
) -> Result<Vec<u8>, Response<Reply>> {
    match tokio::time::timeout(idle, read_body(body)).await {
        Ok(read) => read,
        Err(_) => Err(text(
            StatusCode::REQUEST_TIMEOUT,
            "the request's body came too slowly",
        )),
    }
}

/// The body of a control request, of [`MAX_BODY`] bytes at most.
async fn read_body(mut body: Incoming) -> Result<Vec<u8>, Response<Reply>> {
    let too_large = || {
        text(
            StatusCode::PAYLOAD_TOO_LARGE,
            "a control request's body is 4096 bytes at most",
        )
    };
    if body.size_hint().lower() > MAX_BODY as u64 {
        return Err(too_large());
    }
    let mut out = Vec::new();
    while let Some(frame) = poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let Ok(frame) = frame else {
            return Err(text(
                StatusCode::BAD_REQUEST,
                "the request's body broke off",
            ));
        };
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > MAX_BODY {
                return Err(too_large());
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// Whether `host` (a `Host` header or a request's authority) names this
/// machine's loopback: `127.0.0.1`, `localhost` or `[::1]`, with or
/// without a port. Any other name could be a DNS rebinding.
pub(super) fn loopback(host: &str) -> bool {
    let (name_ok, port) = match host.strip_prefix('[') {
        Some(inside) => match inside.split_once(']') {
            Some((name, port)) => (name == "::1", port),
            None => return false,
        },
        None => {
            let (name, port) = host.split_at(host.find(':').unwrap_or(host.len()));
            let name_ok = name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost");
            (name_ok, port)
        }
    };
    let port_ok = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()));
    name_ok && port_ok
}

/// A connection whose writes fail when they make no progress for
/// `limit`: a client that stops reading is let go.
struct Stalls {
    tcp: TcpStream,
    limit: Duration,
    stalled: Option<Pin<Box<Sleep>>>,
}

impl Stalls {
    fn new(tcp: TcpStream, limit: Duration) -> Self {
        Stalls {
            tcp,
            limit,
            stalled: None,
        }
    }

    /// After a write that returned `result`: a stall is timed, progress
    /// ends the timing.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        result: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if result.is_ready() {
            self.stalled = None;
            return result;
        }
        let limit = self.limit;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client stopped reading",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for Stalls {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Stalls {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.tcp).poll_write(cx, buf);
        this.watch(cx, result)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.tcp).poll_write_vectored(cx, bufs);
        this.watch(cx, result)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.tcp).poll_flush(cx);
        this.watch(cx, result)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::loopback;

    #[test]
    fn loopback_hosts_with_or_without_a_port() {
        for host in [
            "127.0.0.1",
            "127.0.0.1:8800",
            "localhost",
            "LocalHost:1",
            "[::1]",
            "[::1]:65535",
        ] {
            assert!(loopback(host), "{host}");
        }
        for host in [
            "",
            "evil.example",
            "evil.example:8800",
            "localhost.evil.example",
            "127.0.0.1.evil.example",
            "127.0.0.2",
            "localhost:",
            "localhost:80a",
            "localhost:123456",
            "[::1",
            "[::2]:80",
            "[::1]x",
            "0.0.0.0",
        ] {
            assert!(!loopback(host), "{host}");
        }
    }
}
