//! The live view: the page and a stream of new ticks, served on loopback.
//!
//! The game's thread sends the words of the new ticks to the server's
//! thread at each publish ([`feed`]); that thread ([`serve`]) keeps them
//! and makes the messages and the whole recordings from them, for the
//! clients that ask ([`stream`]).

mod control;
mod feed;
mod reply;
mod rope;
mod serve;
mod stream;
mod tune;
mod view;

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

#[cfg(doc)]
use crate::AgentData;
use crate::FlightRecorder;
use control::Game;
use feed::{Feed, Publisher};

/// The marker in the page where the server puts the token that control
/// requests show.
pub(crate) const TOKEN_SLOT: &str = "<!--LIVE-TOKEN-->";

/// Control requests the game's thread may have waiting; more are refused.
const COMMANDS: usize = 64;

/// What a [`LiveServer`] allows its clients (see
/// [`LiveServer::start_with`]). The defaults suit a developer's machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once; one more is answered
    /// `503 Service Unavailable` and closed. Default 64.
    pub connections: usize,
    /// The most bytes of a request's head (request line and headers) the
    /// server reads; a longer one is answered
    /// `431 Request Header Fields Too Large` and closed. No body is read
    /// but a control request's (`POST /control`), of 4 096 bytes at most:
    /// a longer one is answered `413 Payload Too Large`. At least 8 192;
    /// default 16 384.
    pub header_bytes: usize,
    /// How long a connection may take to send its request head; then it
    /// is closed. Default 10 s.
    pub idle: Duration,
    /// How long a write to a client may make no progress (the client reads
    /// nothing); then its connection is closed. Default 10 s.
    pub write_stall: Duration,
    /// Bytes of `ticks` events a stream client may have waiting; one that
    /// falls further behind is dropped (its connection closed). The whole
    /// recording and the `lanes` event that answers the page's own
    /// `POST /view` do not count, whatever their size. Default 16 MiB.
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
///   recording (as [`FlightRecorder::export_compact`] makes it, or
///   [`FlightRecorder::export`] after [`set_runs(false)`](Self::set_runs))
///   at the first [`publish`](Self::publish) after the client connects,
///   then a `ticks` event for each publish that added ticks, and an `end`
///   event when the server is dropped. A client that comes less than a
///   second after a whole recording was made gets that one, followed by
///   the `ticks` events published since. A `ticks` event holds the new
///   ticks and the values the agents recorded at them ([`AgentData`]),
///   as the recording writes them:
///   `{"agents": [{"agent", "ticks": [...]}], "clock", "values": [...]}`
///   (`values` when some were recorded). A tick that repeats the agent's
///   tick before it but for time is sent as a run, `[n, [since, ...]]`:
///   the `n` ticks after that one, each a serial later at the `clock`
///   time of its serial (`{"first", "now": [...]}`, there when a run is),
///   its path levels active since the times given. A page of a large,
///   mostly quiet crowd thus gets a fraction of the bytes.
/// - `GET /events?first=N&agents=a,b,…`: a stream of some lanes only (the
///   first `N` watch slots' and those of the agents named, 512 at most),
///   as the page asks for, so that a crowd of any size costs it what the
///   lanes it shows cost. A `first` or an agent's id that is not a number,
///   or more than 512 agents, gets `400 Bad Request` saying which. The `recording` event holds those lanes only;
///   a `crowd` event follows it: `{"stream", "keep", "agents", "first",
///   "leaves", "subset", "errors", "rejections"}`, the stream's number,
///   every agent recorded (in slot order), the frames the recorder keeps,
///   and for each kept frame from `first` on the number of agents whose
///   tick ran each leaf (`leaves`, by item index, `idle` for none), had a
///   Subset Rule report, an error (or the redecide limit) or a rejection.
///   Each `ticks` event then holds those lanes' new ticks, and the same
///   counts of its frames with the agents first recorded since the last
///   (`"crowd": {"first", "leaves", "subset", "errors", "rejections",
///   "new"}`), made once per publish on the server's thread. The crowd's
///   counts are made for each publish whether or not a page asks.
/// - `POST /view` with `{"stream": N, "agents": [...]}` (and the page's
///   token, as a control request shows it): stream `N` follows the lanes
///   of those agents from now on. It gets a `lanes` event (whatever its
///   size: it does not count in [`Limits::backlog_bytes`]) with their kept
///   ticks, each whole, and their values, as the recording holds them
///   (`{"agents": [{"agent", "first_tick", "ticks"}], "values"}`), for the
///   lanes it did not follow before, then their new ticks in each
///   `ticks` event; the lanes it no longer names get nothing more. The
///   answer is `200 OK` once the stream follows them. A request without
///   the token gets `403 Forbidden`; a body that is not such an object,
///   or names more than 512 agents, `400 Bad Request` saying what is at
///   fault; one whose body takes longer than [`Limits::idle`],
///   `408 Request Timeout`; and `404 Not Found` when no stream of that
///   number follows some lanes (it ended, or it follows every lane).
///   Agents the recording does not hold are left out.
/// - `GET /query?kind=K&item=I&reason=R&from=A&to=B`: the agents whose
///   kept ticks from `A` to `B` answer a question, worked out on a
///   thread of the server from the words it keeps: `kind` is `entered`
///   (decider `I`, by item index, was activated), `rejected` (`I` was
///   rejected, for the legend's rejection `R`, or any when `R` is
///   negative or absent), `ran` (`I` was on the active path) or
///   `trouble` (a Subset Rule report or an error);
///   `{"matches": [[agent, tick], …]}` gives each agent's first such
///   tick, in order of that tick (then of agent). `kind` is required;
///   `from` and `to` default to the oldest and newest kept tick. A bad
///   question (an unknown kind, a number that is not a whole one, a
///   parameter given twice, a decider the tree does not have) gets
///   `400 Bad Request` saying what is at fault; a tick past the newest
///   (up to `u64::MAX`) means the newest.
///   The answer covers every agent recorded, followed or not, over the
///   ticks the server keeps (those the recorder keeps).
///
/// The page asks for the lanes it shows (64 until it knows which, then
/// those drawn and the selected agent's, and the 160 it followed last at
/// most), draws the overview from the crowd's counts, and asks `/query`
/// for its queries: its work per message is in proportion to the new
/// ticks of those lanes, whatever the crowd's size, and it draws at most
/// once per frame of the browser, however many messages came. Every agent
/// recorded has a lane (agents recorded after the page came get theirs
/// as they come); a lane out of view is drawn empty until it is scrolled
/// into view, when the page names it (at the next frame, or within a
/// quarter of a second) and gets its kept ticks. A page of 10 000 agents
/// ticked at 60 Hz, following 64 lanes, gets about 11 kB a tick (640 kB
/// a second) and stays within a second of the game (at the median a few
/// ticks behind; on a busy 2-core machine, a few seconds at worst, when
/// the browser got no time). While it follows, its
/// timeline shows the last 600 ticks (`?window=N` in its address for
/// another number, at least 10: a smaller one shows 10, and the page
/// says so). When its stream breaks (the server dropped it for
/// falling behind, say) it opens it again, a quarter of a second later
/// and twice as late each time after (4 s at most), and says so; it says
/// the program stopped on an `end` event, or when nothing answered for
/// 20 s (and still tries).
/// - `GET /recording.json`: the whole recording as of the last publish, or
///   of one less than a second before it, as the `recording` event holds
///   it. (A game that calls
///   [`frame`](Self::frame) with no page following publishes nothing: the
///   request then waits a second at most for its next frame.)
/// - `POST /control`: the page's controls (see [below](#stopping-the-game-from-the-page)),
///   and its changes of tunables (see [below](#tuning-from-the-page)).
///
/// While the game is paused, each stream gets a `beat` event four times a
/// second, whose data is its number; the page answers it (see
/// [below](#stopping-the-game-from-the-page)).
///
/// A `control` event tells the streams where the game stands, after the
/// recording and each time that changes:
/// `{"framing", "paused", "tick", "why", "hit", "fired", "breakpoints",
/// "unrecorded"}` (`framing` says the game calls [`frame`](Self::frame);
/// when paused, `tick` is the frame at whose end it waits, `why` is
/// `"pause"`, `"step"` or `"breakpoint"`, `hit` is
/// `{"breakpoint", "agent", "tick"}`: the place in this event's
/// `breakpoints` of the breakpoint that fired, found by its id (so it
/// stays right while the list is edited, and is `null` once that
/// breakpoint is removed), the agent and the tick, and `fired` is that
/// breakpoint as it was set; `breakpoints` are those set, each with its
/// `id`, and `unrecorded` the ids of those whose agent the recorder does
/// not record now).
///
/// # Stopping the game from the page
///
/// A game that calls [`frame`](Self::frame) once per frame, after ticking
/// its recorder, instead of [`publish`](Self::publish), can be paused,
/// stepped one frame at a time and resumed from the page, and stopped by
/// breakpoints set in the page:
///
/// ```no_run
/// # use bt_viewer::{FlightRecorder, LiveServer};
/// # fn tick_the_crowd(_: &mut FlightRecorder) {}
/// # fn game(mut recorder: FlightRecorder) -> std::io::Result<()> {
/// let mut live = LiveServer::start(8800)?;
/// loop {
///     tick_the_crowd(&mut recorder);
///     // Publishes, and waits here while a page keeps the game paused.
///     live.frame(&recorder);
/// }
/// # }
/// ```
///
/// The page sends `POST /control` requests with a JSON body:
/// `{"op": "pause"}` (stop at the end of the next frame), `{"op": "step"}`
/// (let one frame through, then stop again), `{"op": "resume"}`, and
/// `{"op": "breakpoints", "set": [...]}`, which replaces the breakpoints,
/// and `{"op": "beat", "n": N}`, which says the page read beat `N` of a
/// paused game (`409 Conflict` when `N` is not one of the last beats sent).
/// A breakpoint is `{"id", "on", "decider", "reason", "agent"}`: `id` is
/// the identity the server gave it (every new breakpoint gets one never
/// given before; a page keeps a breakpoint by sending it back with its
/// `id`, and leaves `id` out for a new one; an `id` that is not one of the
/// breakpoints set, or twice in a list, is refused); `on` is
/// `"enter"` (the decider named was activated), `"reject"` (it was
/// rejected, for the `reason` named as the recording's legend names it,
/// or any), `"subset-rule"` (a group, the one named or any, reported a
/// Subset Rule violation), `"error"` (a tick returned an error) or
/// `"launch"` (a decider, the one named or any, launched a deferred
/// action); `agent` is an agent's id, or absent for any. A breakpoint
/// on an agent the recorder does not record never fires: when the
/// recorder was made by [`FlightRecorder::new`], which records the agents
/// it watches and never another, such a breakpoint is refused, the
/// message naming the breakpoint and the agent; when it was made by
/// [`FlightRecorder::with_lanes`], which gives lanes to agents as they
/// come, it is taken and listed in `unrecorded` until the agent is
/// recorded, and fires from then on. The game's
/// thread evaluates them on the ticks it just published; when one fires,
/// [`frame`](Self::frame) blocks at the end of that tick and the pages
/// show it. The breakpoints stay set (and shown to the pages that come)
/// until a page changes them, but no frame looks at them while no page
/// follows. A request with a bad body gets `400 Bad Request` saying what
/// is at fault.
///
/// A control request must come from the page: besides the loopback
/// `Host` (and `Origin`, when there is one), it shows a token the server
/// writes into the page it serves, in an `X-Bt-Token` header (a page of
/// another site can neither read the token nor send that header without a
/// preflight the server never grants); any other gets `403 Forbidden`.
///
/// Nobody watching never holds the game for long: a pause or step needs a
/// page following the stream, and a paused game whose last page's stream
/// closed waits 3 seconds for a page to come (the page reloaded, say),
/// then goes on (the server counts a stream out when its connection ends,
/// and writes to the streams of a paused game four times a second to find
/// out those that died). A page that comes in those 3 seconds finds the
/// game still paused, and shows the tick it stopped at (and the agent, if
/// a breakpoint stopped it). A page that is open but no
/// longer reads (a hung tab, whose connection stays open) does not hold it
/// either: a paused game stays paused while some page answers its beats,
/// and when none has answered a beat sent in the last 1.5 s (counted from
/// the pause, or from the newest stream, if later), the server closes
/// every stream, as if their pages had closed, and the game goes on,
/// within two seconds of the last answer (with no wait for a reload). A page busy for longer than that
/// is let go too; it can follow again by reloading. A program that only
/// calls [`publish`](Self::publish) is never stopped (its control requests
/// get `409 Conflict`).
///
/// # Tuning from the page
///
/// For a tree with tunables (bt-core's `tunables!`), the page of a game
/// that calls [`frame`](Self::frame) has a panel of them: each one's name,
/// doc line, kind, range and value in effect, with a number field (and its
/// `set` button, or Enter), or a checkbox for a bool. The server learns the crowd's
/// shared state through the recorder, which takes it from the memories it
/// ticks: nothing more is needed than the `frame` call.
///
/// A change is a control request (the page's token in `X-Bt-Token`, as
/// above) `{"op": "tune", "name": "FLEE_BELOW", "value": 0.3}`, the value
/// a number, true or false, or a choice's name as a string (`"Prone"`).
/// The server checks it at once, as
/// `TreeShared::tune_named` does: a name the tree does not have, a value
/// of another type (an int tunable takes a whole number, a float one any
/// number) or outside the range, or a value that is neither, is answered
/// `400 Bad Request` naming the tunable and why
/// (`tunable FLEE_BELOW: 1.5 is outside 0..=1`), and changes nothing; a
/// tree without tunables gets `400` too. A change it takes (`200 OK`) is
/// made on the game's thread at its next [`frame`](Self::frame) (or at
/// once while the game is paused there), and is in effect from the
/// crowd's next tick, for every agent of that tick alike: pause, tune and
/// step, and the stepped frame is the first to read it. As for the other
/// controls, a game with no page following its stream, or that only
/// publishes, gets `409 Conflict`.
///
/// The pages are shown the values as the recording holds them
/// ([`Recording::tuning`](crate::Recording::tuning)) in a `tuning` event,
/// `{"first", "start", "changes"}`, sent after the recording a page starts
/// from and whenever a publish brings a change; the page marks each change
/// on its timeline at the tick it took effect, with its name and its old
/// and new value, and the panel says when a change it sent is in effect.
///
/// # What it costs the game
///
/// [`publish`](Self::publish) copies the words of the ticks recorded since
/// the last publish and of the values recorded at them (and looks at each
/// watched agent's slot in the last frame) and leaves them for the server's
/// thread in a queue that only the two threads lock, each for a moment. It
/// never touches a client's socket, takes no lock a client could hold and
/// never waits for a client. When the server's thread falls behind (a
/// game that publishes without pause, a crowd larger than it encodes in a
/// frame), the publishes wait in that queue and it takes them in together;
/// the ticks of those the recorder no longer keeps are let go of there, so
/// what waits stays within what the recorder keeps, and a page that
/// connects meanwhile still gets its recording. Everything else — the
/// JSON of the events, the whole recordings — is made on the server's
/// threads, and a whole recording only when a client asks for one: one
/// made less than a second ago is shared. The server keeps the copies
/// while the recorder keeps their ticks (as much memory again as the
/// recorded ticks use). A whole recording is written from those words as
/// [`FlightRecorder::write_json_compact`] writes one, never built as a
/// [`Recording`](crate::Recording) of values: making it takes its text
/// (held once, in pieces of 1 MiB, for every client it is sent to) and a
/// few MiB besides, however large the recording.
///
/// [`frame`](Self::frame) with no page following the stream loads one
/// atomic counter and returns: it copies nothing and sends nothing. With a
/// page, it costs what [`publish`](Self::publish) costs, plus a look at a
/// channel and, when breakpoints are set, a scan of the new ticks' event
/// words.
///
/// # What it promises its clients
///
/// - It listens on 127.0.0.1 only, and answers only requests whose `Host`
///   is a loopback name: `127.0.0.1`, `localhost` or `[::1]`, with or
///   without a port. Any other (a page that rebinds its DNS name to
///   127.0.0.1, say) gets `403 Forbidden`. A request with more than one
///   `Host` header, or more than one `Origin`, gets `400 Bad Request`,
///   whatever they name (the same loopback name twice included): it is
///   not read one way here and another way elsewhere.
/// - One thread serves every connection, and one more makes whole
///   recordings; a connection costs no thread. A page that joins a large
///   recording costs the server the recording's text once (shared with the
///   pages that join within the second), not tens of times its size. The [`Limits`] bound the
///   connections, the request head and the time to send it, and the time
///   a write may stall.
/// - A stream client that reads slowly is sent what was published, in
///   order, until more than [`Limits::backlog_bytes`] of `ticks` events
///   wait for it (events are made once and shared by all clients); then
///   it is dropped. So is a client that reads as fast as it can when the
///   game publishes more than its connection carries (thousands of agents
///   published in a tight loop, every tick whole): the viewer's page then
///   opens the stream again and starts from a whole recording. A client
///   that reads nothing for [`Limits::write_stall`] is dropped too. Others
///   are not delayed.
/// - Dropping it tells the streams (an `end` event), gives them 0.3 s to
///   take it, and closes every connection: it returns within a second
///   whatever the clients do.
pub struct LiveServer {
    addr: SocketAddr,
    feed: Arc<Feed>,
    publisher: Publisher,
    game: Game,
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
        let (commands, to_game) = std::sync::mpsc::sync_channel(COMMANDS);
        let hub = Arc::new(stream::Hub::new(
            Arc::clone(&feed),
            limits,
            token(),
            commands,
        ));
        let (stop, stopped) = oneshot::channel();
        let (to_server, published) = mpsc::unbounded_channel();
        let thread = serve::spawn(listener, hub, published, stopped)?;
        Ok(LiveServer {
            addr,
            feed,
            publisher: Publisher::new(to_server),
            game: Game::new(to_game),
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
    /// (of any tree, a clone included, or the same one after it started
    /// again) starts every client again from a whole recording.
    pub fn publish(&mut self, recorder: &FlightRecorder) {
        self.publisher.publish(&self.feed, recorder);
    }

    /// The one call a game makes per frame, after ticking `recorder`: it
    /// lets the pages follow the game and stop it (see [the
    /// controls](Self#stopping-the-game-from-the-page)).
    ///
    /// With no page following the stream it does nothing but load one
    /// atomic counter: no copy, no lock, no wait (the ticks stay in the
    /// recorder, and a page that comes gets the ones still kept). With a
    /// page, it [publishes](Self::publish) the new ticks, evaluates the
    /// breakpoints on them, and blocks while a page keeps the game paused.
    #[inline]
    pub fn frame(&mut self, recorder: &FlightRecorder) {
        if self.feed.wanted.load(Ordering::Acquire) == 0 {
            self.game.skip(&self.feed);
            return;
        }
        self.frame_followed(recorder);
    }

    #[inline(never)]
    fn frame_followed(&mut self, recorder: &FlightRecorder) {
        self.game.tell(&self.feed);
        let delta = self.publisher.publish(&self.feed, recorder);
        self.game
            .after_publish(&self.feed, &self.publisher, delta.as_deref(), recorder);
    }

    /// Whether the stream sends runs of repeated ticks as runs (the
    /// default) or every tick whole, from the next message and recording
    /// made on (see [`GET /events`](Self)). A page reads both the same.
    pub fn set_runs(&self, runs: bool) {
        self.feed.plain.store(!runs, Ordering::Relaxed);
    }

    /// Publishes made so far (by [`publish`](Self::publish) and
    /// [`frame`](Self::frame)), for tests.
    #[doc(hidden)]
    pub fn publishes(&self) -> u64 {
        self.feed.published.load(Ordering::Relaxed)
    }

    /// Whole recordings made so far (for `/events` and `/recording.json`
    /// clients), for tests.
    #[doc(hidden)]
    pub fn exports_made(&self) -> u64 {
        self.feed.exports.load(Ordering::Relaxed)
    }
}

/// A token no other site can guess, for the page to show in its control
/// requests: 128 bits from the standard library's randomly keyed hasher.
fn token() -> String {
    use std::hash::{BuildHasher, Hasher};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    (0..2u8)
        .map(|i| {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u8(i);
            h.write_u128(now);
            h.write_u32(std::process::id());
            format!("{:016x}", h.finish())
        })
        .collect()
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
