//! The live view: the page and a stream of new ticks, served on loopback.
//!
//! The game's thread sends the words of the new ticks to the server's
//! thread at each publish ([`feed`]); that thread ([`serve`]) keeps them
//! and makes the messages and the whole recordings from them, for the
//! clients that ask ([`stream`]).

mod feed;
mod serve;
mod stream;

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::FlightRecorder;
use feed::{Feed, Publisher};

/// What a [`LiveServer`] allows its clients (see
/// [`LiveServer::start_with`]). The defaults suit a developer's machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once; one more is answered
    /// `503 Service Unavailable` and closed. Default 64.
    pub connections: usize,
    /// The most bytes of a request's head (request line and headers) the
    /// server reads; a longer one is answered
    /// `431 Request Header Fields Too Large` and closed. Request bodies
    /// are never read. At least 8 192; default 16 384.
    pub header_bytes: usize,
    /// How long a connection may take to send its request head; then it
    /// is closed. Default 10 s.
    pub idle: Duration,
    /// How long a write to a client may make no progress (the client reads
    /// nothing); then its connection is closed. Default 10 s.
    pub write_stall: Duration,
    /// Bytes of `ticks` events a stream client may have waiting; one that
    /// falls further behind is dropped (its connection closed). Default
    /// 16 MiB.
    pub backlog_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: 64,
            header_bytes: 16 * 1024,
            idle: Duration::from_secs(10),
            write_stall: Duration::from_secs(10),
            backlog_bytes: 16 << 20,
        }
    }
}

impl Limits {
    /// The smallest [`header_bytes`](Self::header_bytes) allowed.
    pub const MIN_HEADER_BYTES: usize = 8192;

    fn check(&self) -> io::Result<()> {
        let bad = |what: String| Err(io::Error::new(io::ErrorKind::InvalidInput, what));
        if self.connections == 0 {
            return bad("Limits::connections is 0: no client could connect".into());
        }
        if self.header_bytes < Self::MIN_HEADER_BYTES {
            return bad(format!(
                "Limits::header_bytes is {}, less than the {} allowed",
                self.header_bytes,
                Self::MIN_HEADER_BYTES
            ));
        }
        if self.idle.is_zero() || self.write_stall.is_zero() {
            return bad("Limits::idle and Limits::write_stall must not be zero".into());
        }
        if self.backlog_bytes == 0 {
            return bad("Limits::backlog_bytes is 0: no event could be sent".into());
        }
        Ok(())
    }
}

/// A loopback HTTP endpoint for the viewer (feature `live`). It serves:
///
/// - `GET /`: the viewer page, which follows the stream;
/// - `GET /events`: server-sent events. A `recording` event with the whole
///   recording (as [`FlightRecorder::export`] makes it) at the first
///   [`publish`](Self::publish) after the client connects, then a `ticks`
///   event for each publish that added ticks, with those ticks
///   (`{"agents":[{"agent", "ticks": [...]}]}`, ticks as in the
///   recording), and an `end` event when the server is dropped. A client
///   that comes less than a second after a whole recording was made gets
///   that one, followed by the `ticks` events published since.
/// - `GET /recording.json`: the whole recording as of the last publish, or
///   of one less than a second before it.
///
/// # What it costs the game
///
/// [`publish`](Self::publish) copies the words of the ticks recorded since
/// the last publish (and looks at each watched agent's slot in the last
/// frame) and sends them to the server's thread through a channel that
/// takes no lock. It never touches a client's socket, takes no lock a
/// client could hold and never waits for a client. Everything else — the
/// JSON of the events, the whole recordings — is made on the server's
/// threads, and a whole recording only when a client asks for one: one
/// made less than a second ago is shared. The server keeps the copies
/// while the recorder keeps their ticks (as much memory again as the
/// recorded ticks use).
///
/// # What it promises its clients
///
/// - It listens on 127.0.0.1 only, and answers only requests whose `Host`
///   is a loopback name: `127.0.0.1`, `localhost` or `[::1]`, with or
///   without a port. Any other (a page that rebinds its DNS name to
///   127.0.0.1, say) gets `403 Forbidden`.
/// - One thread serves every connection, and one more makes whole
///   recordings; a connection costs no thread. The [`Limits`] bound the
///   connections, the request head and the time to send it, and the time
///   a write may stall.
/// - A stream client that reads slowly is sent what was published, in
///   order, until more than [`Limits::backlog_bytes`] of `ticks` events
///   wait for it (events are made once and shared by all clients); then
///   it is dropped. A client that reads nothing for
///   [`Limits::write_stall`] is dropped too. Others are not delayed.
/// - Dropping it tells the streams (an `end` event), gives them 0.3 s to
///   take it, and closes every connection: it returns within a second
///   whatever the clients do.
pub struct LiveServer {
    addr: SocketAddr,
    feed: Arc<Feed>,
    publisher: Publisher,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl LiveServer {
    /// Starts serving on `127.0.0.1:port` (0 picks a free port), with the
    /// default [`Limits`].
    ///
    /// # Errors
    /// When the port cannot be bound or the server's thread cannot start.
    pub fn start(port: u16) -> io::Result<Self> {
        Self::start_with(port, Limits::default())
    }

    /// Starts serving on `127.0.0.1:port` (0 picks a free port), with
    /// `limits`.
    ///
    /// # Errors
    /// When a limit is out of range (an [`InvalidInput`] error naming it),
    /// when the port cannot be bound or the server's thread cannot start.
    ///
    /// [`InvalidInput`]: io::ErrorKind::InvalidInput
    pub fn start_with(port: u16, limits: Limits) -> io::Result<Self> {
        limits.check()?;
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
        let addr = listener.local_addr()?;
        let feed = Arc::new(Feed::default());
        let hub = Arc::new(stream::Hub::new(Arc::clone(&feed), limits));
        let (stop, stopped) = oneshot::channel();
        let (to_server, published) = mpsc::unbounded_channel();
        let thread = serve::spawn(listener, hub, published, stopped)?;
        Ok(LiveServer {
            addr,
            feed,
            publisher: Publisher::new(to_server),
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// The number of clients connected to the stream (as the server last
    /// counted them).
    pub fn clients(&self) -> usize {
        self.feed.clients.load(Ordering::Relaxed)
    }

    /// Hands the ticks `recorder` kept since the last call to the server,
    /// which sends them to every client (see [what it
    /// costs](Self#what-it-costs-the-game)). Publishing another recorder
    /// (or the same one after it started again) starts every client again
    /// from a whole recording.
    pub fn publish(&mut self, recorder: &FlightRecorder) {
        self.publisher.publish(&self.feed, recorder);
    }

    /// Whole recordings made so far (for `/events` and `/recording.json`
    /// clients), for tests.
    #[doc(hidden)]
    pub fn exports_made(&self) -> u64 {
        self.feed.exports.load(Ordering::Relaxed)
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        self.feed.stopping.store(true, Ordering::Relaxed);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
