//! The live view: the page and a stream of new ticks, served on loopback.

use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::FlightRecorder;
use crate::export::tick_json;

/// Messages a slow client may fall behind by before it is dropped.
const BACKLOG: usize = 1024;

/// What the server thread and the program share.
#[derive(Default)]
struct Hub {
    /// The whole recording at a recent publish, for `/recording.json`.
    snapshot: String,
    /// When `snapshot` was made.
    snapshot_at: Option<Instant>,
    /// Clients that connected since the last publish: they get the whole
    /// recording first.
    waiting: Vec<SyncSender<Vec<u8>>>,
    /// Clients that have the recording and follow the ticks.
    clients: Vec<SyncSender<Vec<u8>>>,
}

/// A loopback HTTP endpoint for the viewer (feature `live`): `GET /` serves
/// the page, `GET /recording.json` what the recorder held at the last
/// [`publish`](Self::publish), and `GET /events` a stream of server-sent
/// events: a `recording` event with the whole recording at the first
/// publish after the client connects, then a `ticks` event after each
/// publish, with the ticks added since (`{"agents":[{"agent", "ticks":
/// [...]}]}`, ticks as in the recording). The whole recording is made
/// only for new clients, and for `/recording.json` at most once a second.
///
/// It binds to 127.0.0.1 only. Dropping it stops the server and ends the
/// streams with an `end` event.
pub struct LiveServer {
    server: Arc<tiny_http::Server>,
    hub: Arc<Mutex<Hub>>,
    thread: Option<JoinHandle<()>>,
    /// Per watched agent, the serial of the next tick to send.
    sent: Vec<u64>,
}

impl LiveServer {
    /// Starts serving on `127.0.0.1:port` (0 picks a free port).
    ///
    /// # Errors
    /// When the port cannot be bound.
    pub fn start(port: u16) -> io::Result<Self> {
        let server = tiny_http::Server::http(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
            .map_err(io::Error::other)?;
        let server = Arc::new(server);
        let hub = Arc::new(Mutex::new(Hub::default()));
        let thread = {
            let (server, hub) = (Arc::clone(&server), Arc::clone(&hub));
            std::thread::spawn(move || serve(&server, &hub))
        };
        Ok(LiveServer {
            server,
            hub,
            thread: Some(thread),
            sent: Vec::new(),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.server.server_addr().to_ip().expect("an IP listener")
    }

    /// The page's address.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr())
    }

    /// The number of clients connected to the stream.
    pub fn clients(&self) -> usize {
        let hub = lock(&self.hub);
        hub.clients.len() + hub.waiting.len()
    }

    /// Sends the ticks `recorder` kept since the last call to every client,
    /// and keeps its whole recording for the clients that come later.
    pub fn publish(&mut self, recorder: &FlightRecorder) {
        self.sent.resize(recorder.watched(), 0);
        let mut agents = Vec::new();
        for (slot, sent) in self.sent.iter_mut().enumerate() {
            let ticks: Vec<Value> = recorder
                .ticks_since(slot, *sent)
                .map(|t| tick_json(&t.decode()))
                .collect();
            *sent = recorder.frames();
            if !ticks.is_empty() {
                let (agent, _, _) = recorder.ticks_of(slot);
                agents.push(json!({ "agent": agent, "ticks": ticks }));
            }
        }
        let mut hub = lock(&self.hub);
        let stale = hub
            .snapshot_at
            .is_none_or(|at| at.elapsed() >= Duration::from_secs(1));
        if stale || !hub.waiting.is_empty() {
            hub.snapshot = recorder.export().to_json();
            hub.snapshot_at = Some(Instant::now());
        }
        // A client that is gone or too far behind is dropped.
        let send = |c: &SyncSender<Vec<u8>>, message: &[u8]| match c.try_send(message.to_vec()) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
        };
        if !agents.is_empty() {
            let message = sse("ticks", &json!({ "agents": agents }).to_string());
            hub.clients.retain(|c| send(c, &message));
        }
        if !hub.waiting.is_empty() {
            let first = sse("recording", &hub.snapshot);
            let waiting = std::mem::take(&mut hub.waiting);
            let joined: Vec<_> = waiting.into_iter().filter(|c| send(c, &first)).collect();
            hub.clients.extend(joined);
        }
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        let mut hub = lock(&self.hub);
        // Tell the pages the program has stopped, then end the streams.
        let end = sse("end", "{}");
        for client in &hub.clients {
            let _ = client.try_send(end.clone());
        }
        hub.clients.clear();
        hub.waiting.clear();
        drop(hub);
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock(hub: &Mutex<Hub>) -> std::sync::MutexGuard<'_, Hub> {
    hub.lock().unwrap_or_else(|e| e.into_inner())
}

fn sse(event: &str, data: &str) -> Vec<u8> {
    format!("event: {event}\ndata: {data}\n\n").into_bytes()
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid header")
}

/// The server loop: until [`LiveServer`] is dropped.
fn serve(server: &tiny_http::Server, hub: &Arc<Mutex<Hub>>) {
    for request in server.incoming_requests() {
        let path = request.url().split('?').next().unwrap_or("").to_owned();
        let result = match path.as_str() {
            "/" | "/viewer.html" => request.respond(
                tiny_http::Response::from_string(crate::PAGE)
                    .with_header(header("Content-Type", "text/html; charset=utf-8")),
            ),
            "/recording.json" => {
                let body = lock(hub).snapshot.clone();
                request.respond(
                    tiny_http::Response::from_string(body)
                        .with_header(header("Content-Type", "application/json")),
                )
            }
            "/events" => {
                let (tx, rx) = sync_channel(BACKLOG);
                lock(hub).waiting.push(tx);
                // The stream holds its connection for as long as it runs:
                // it is written by hand, flushed after every message, on
                // its own thread so that other requests go on.
                let writer = request.into_writer();
                std::thread::spawn(move || stream(writer, &rx));
                Ok(())
            }
            _ => {
                request.respond(tiny_http::Response::from_string("not found").with_status_code(404))
            }
        };
        // A client that went away is not the server's problem.
        let _ = result;
    }
}

/// Writes a client's event stream until the hub drops its sender or the
/// client goes away.
fn stream(mut out: Box<dyn Write + Send>, rx: &Receiver<Vec<u8>>) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                Cache-Control: no-cache\r\nConnection: close\r\n\r\n";
    let mut send = |bytes: &[u8]| out.write_all(bytes).and_then(|()| out.flush());
    if send(head.as_bytes()).is_err() {
        return;
    }
    while let Ok(message) = rx.recv() {
        if send(&message).is_err() {
            return;
        }
    }
}
