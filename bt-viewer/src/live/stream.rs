//! The event streams: who follows, what each one has waiting, and the
//! whole recording each new one starts from.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hyper::body::Bytes;
use tokio::sync::{Notify, mpsc, watch};

use super::Limits;
use super::control::{Command, Controls, Spec};
use super::feed::{
    Feed, Kept, RECORDING_END, RECORDING_HEAD, Snapshot, ToServer, View, Wanted, sse,
};
use super::rope::Rope;
use crate::export::TreeInfo;

/// How long a whole recording serves the clients that come after it (with
/// the ticks published since).
const FRESH: Duration = Duration::from_secs(1);

/// How often a paused game's streams are sent a `beat` event.
pub(super) const BEAT: Duration = Duration::from_millis(250);

/// How long a paused game waits for a page to answer a beat; then every
/// stream is closed and the game goes on.
const HOLD: Duration = Duration::from_millis(1500);

/// The beats sent lately, whose answers count.
const RECENT: usize = 16;

/// A whole recording being made, or made: its JSON in pieces, which every
/// client that starts from it shares.
#[derive(Clone)]
pub(super) struct Build(watch::Receiver<Option<Arc<[Bytes]>>>);

impl Build {
    /// The recording's pieces, or `None` when the server stopped first.
    async fn made(mut self) -> Option<Arc<[Bytes]>> {
        let made = self.0.wait_for(Option::is_some).await.ok()?;
        made.clone()
    }

    /// The `recording` event, or `None` when the server stopped first.
    pub(super) async fn event(self) -> Option<Rope> {
        let json = self.made().await?;
        let mut event = Rope::from(Bytes::from_static(RECORDING_HEAD.as_bytes()));
        json.iter().for_each(|piece| event.push(piece.clone()));
        event.push(Bytes::from_static(RECORDING_END.as_bytes()));
        Some(event)
    }

    /// The recording's JSON, or `None` when the server stopped first.
    pub(super) async fn json(self) -> Option<Rope> {
        Some(Rope::of(self.made().await?.iter()))
    }
}

/// What a stream writes next.
pub(super) enum Item {
    /// An event counted in the client's backlog.
    Message(Bytes),
    /// An event that answers the page's own request (a `lanes` event),
    /// not counted in its backlog, as a whole recording is not.
    Reply(Bytes),
    Recording(Build),
}

/// One stream client, as the server holds it.
pub(super) struct Client {
    /// Its number, which its page names to change its view.
    pub(super) id: u64,
    /// The lanes it follows (every one when `None`), once it started.
    pub(super) view: View,
    /// The lanes it asked to follow when it came: the first `n`, and the
    /// agents named. `None`: every one.
    pub(super) asked: Option<(usize, Vec<u32>)>,
    tx: mpsc::UnboundedSender<Item>,
    /// Bytes of messages queued and not yet handed to the connection.
    pending: Arc<AtomicUsize>,
    /// Ends the client's connection at once.
    kick: Arc<Notify>,
    /// The publishes made before it came: it starts at a later one.
    after: u64,
}

impl Client {
    /// Queues `message`; `false` when the client is gone or has fallen
    /// more than `budget` bytes behind (then its connection is ended).
    pub(super) fn send(&self, message: &Bytes, budget: usize) -> bool {
        let len = message.len();
        if self.pending.fetch_add(len, Ordering::Relaxed) + len > budget {
            self.kick.notify_one();
            return false;
        }
        self.tx.send(Item::Message(message.clone())).is_ok()
    }

    /// Queues `message`, an answer to the page's own request, whatever its
    /// size; `false` when the client is gone or was already more than
    /// `budget` bytes behind (then its connection is ended).
    pub(super) fn reply(&self, message: Bytes, budget: usize) -> bool {
        if self.pending.load(Ordering::Relaxed) > budget {
            self.kick.notify_one();
            return false;
        }
        self.tx.send(Item::Reply(message)).is_ok()
    }
}

/// The newest whole recording.
struct Cached {
    seq: u64,
    at: Instant,
    build: Build,
}

#[derive(Default)]
pub(super) struct Streams {
    /// The last publish the clients were sent.
    pub(super) seen: u64,
    /// Clients that have a recording and follow the ticks.
    pub(super) joined: Vec<Client>,
    /// The number of the last client that came.
    ids: u64,
    /// Clients waiting for the next publish to start.
    waiting: Vec<Client>,
    cache: Option<Cached>,
    closed: bool,
}

/// Whether the pages of a paused game still read their streams: each
/// `beat` event sent has a number, which the page answers.
struct Held {
    /// When a page was last heard of: a stream came, the game stopped, or
    /// a page answered a beat sent then.
    heard: Instant,
    /// The last beat's number.
    beat: u64,
    /// The recent beats: number and when sent.
    sent: VecDeque<(u64, Instant)>,
}

/// The server's side of the streams. Only the server's thread takes its
/// lock.
pub(super) struct Hub {
    pub(super) feed: Arc<Feed>,
    pub(super) limits: Limits,
    streams: Mutex<Streams>,
    /// The publishes the recorder still keeps.
    kept: Mutex<Kept>,
    /// The page, with the token control requests must show.
    pub(super) page: Bytes,
    pub(super) token: String,
    /// To the game's thread (bounded: a game that does not take them
    /// refuses more).
    pub(super) commands: std::sync::mpsc::SyncSender<Command>,
    controls: Mutex<Controls>,
    held: Mutex<Held>,
    /// The last publish taken in.
    published: watch::Sender<u64>,
}

impl Hub {
    pub(super) fn new(
        feed: Arc<Feed>,
        limits: Limits,
        token: String,
        commands: std::sync::mpsc::SyncSender<Command>,
    ) -> Self {
        let page = crate::PAGE.replacen(
            super::TOKEN_SLOT,
            &format!(r#"<meta name="bt-live-token" content="{token}">"#),
            1,
        );
        Hub {
            feed,
            limits,
            streams: Mutex::default(),
            kept: Mutex::default(),
            page: Bytes::from(page),
            token,
            commands,
            controls: Mutex::default(),
            held: Mutex::new(Held {
                heard: Instant::now(),
                beat: 0,
                sent: VecDeque::with_capacity(RECENT),
            }),
            published: watch::Sender::new(0),
        }
    }

    /// Whether the `ticks` messages made now send runs of repeats.
    fn runs(&self) -> bool {
        !self.feed.plain.load(Ordering::Relaxed)
    }

    fn controls(&self) -> MutexGuard<'_, Controls> {
        self.controls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The `control` event as things stand, when the game calls `frame`
    /// (one that only publishes has none to send).
    fn control_event(&self) -> Option<Bytes> {
        let framing = self.feed.framing.load(Ordering::Relaxed);
        framing.then(|| self.controls().event(framing))
    }

    /// Sends the `control` event to every stream that has its recording.
    fn send_controls(&self) {
        let Some(event) = self.control_event() else {
            return;
        };
        let budget = self.limits.backlog_bytes;
        let mut streams = self.lock();
        streams.joined.retain(|c| c.send(&event, budget));
        self.count(&streams);
    }

    /// Sets the breakpoints (see [`Controls::set`]) and shows them to the
    /// pages: the command for the game, or what is at fault.
    pub(super) fn set_breakpoints(
        &self,
        set: Vec<Spec>,
        tree: &TreeInfo,
    ) -> Result<Command, String> {
        let newcomers = self.feed.newcomers.load(Ordering::Relaxed);
        let command = self.controls().set(set, tree, newcomers)?;
        self.send_controls();
        Ok(command)
    }

    /// Whether the game said it is paused.
    pub(super) fn paused(&self) -> bool {
        self.controls().status.paused
    }

    fn held(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A page answered beat `n`: it read the stream after the beat was
    /// sent. `false` when `n` is not one of the recent beats.
    pub(super) fn answered(&self, n: u64) -> bool {
        let mut held = self.held();
        let Some(&(_, sent)) = held.sent.iter().find(|b| b.0 == n) else {
            return false;
        };
        held.heard = held.heard.max(sent);
        true
    }

    /// Waits (a second at most) until a publish after `seen` is taken in.
    pub(super) async fn next_publish(&self, seen: u64) {
        let mut rx = self.published.subscribe();
        let _ = tokio::time::timeout(Duration::from_secs(1), rx.wait_for(|&s| s > seen)).await;
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Streams> {
        self.streams.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new stream client, that follows the lanes `asked` (see
    /// [`Client::asked`]): it starts at the next publish (or at once while
    /// the game is paused). `None` once the server stops.
    pub(super) fn follow(
        self: &Arc<Self>,
        kick: Arc<Notify>,
        asked: Option<(usize, Vec<u32>)>,
    ) -> Option<Stream> {
        let (tx, rx) = mpsc::unbounded_channel();
        let pending = Arc::new(AtomicUsize::new(0));
        // A page that comes has its time to answer.
        self.held().heard = Instant::now();
        let mut streams = self.lock();
        if streams.closed {
            return None;
        }
        streams.ids += 1;
        let id = streams.ids;
        streams.waiting.push(Client {
            id,
            view: None,
            asked,
            tx,
            pending: Arc::clone(&pending),
            kick,
            after: self.feed.published.load(Ordering::Relaxed),
        });
        self.count(&streams);
        Some(Stream {
            rx,
            pending,
            recording: None,
            hub: Arc::clone(self),
        })
    }

    pub(super) fn count(&self, streams: &Streams) {
        let n = streams.joined.len() + streams.waiting.len();
        self.feed.clients.store(n, Ordering::Relaxed);
        self.count_wanted();
    }

    /// Counts who wants the game's next publish.
    pub(super) fn count_wanted(&self) {
        let n =
            self.feed.clients.load(Ordering::Relaxed) + self.feed.waiters.load(Ordering::Relaxed);
        self.feed.wanted.store(n, Ordering::Release);
    }

    /// A stream ended: it is counted out at once (a paused game that
    /// nobody follows any more goes on).
    fn left(&self) {
        let mut streams = self.lock();
        streams.joined.retain(|c| !c.tx.is_closed());
        streams.waiting.retain(|c| !c.tx.is_closed());
        self.count(&streams);
        if streams.joined.is_empty() && streams.waiting.is_empty() {
            let _ = self.commands.try_send(Command::Left);
        }
    }

    /// While the game is paused (and publishes nothing), every [`BEAT`]:
    /// a `beat` event to every stream, so that a connection that died is
    /// found out and a page that reads answers, and the whole recording to
    /// the streams waiting for one. When no page answered for [`HOLD`], it
    /// lets go of them all.
    pub(super) fn while_paused(&self) {
        if !self.paused() {
            return;
        }
        let beat = {
            let mut held = self.held();
            if held.heard.elapsed() > HOLD {
                drop(held);
                self.let_go();
                return;
            }
            held.beat += 1;
            if held.sent.len() == RECENT {
                held.sent.pop_front();
            }
            let n = held.beat;
            held.sent.push_back((n, Instant::now()));
            sse("beat", &n.to_string())
        };
        let snapshot = self.snapshot();
        let control = self.control_event().into_iter();
        let control = control.chain(snapshot.tuning_event()).collect();
        let budget = self.limits.backlog_bytes;
        let mut streams = self.lock();
        let streams = &mut *streams;
        if streams.closed {
            return;
        }
        streams.joined.retain(|c| c.send(&beat, budget));
        if snapshot.published() && snapshot.seq == streams.seen && !streams.waiting.is_empty() {
            let waiting = std::mem::take(&mut streams.waiting);
            self.start_clients(streams, waiting, &snapshot, control);
        }
        self.count(streams);
    }

    /// No page of the paused game answered: every stream is closed, as
    /// if its page had closed, and the game goes on.
    fn let_go(&self) {
        let mut streams = self.lock();
        let streams = &mut *streams;
        let mut any = false;
        for client in streams.joined.drain(..).chain(streams.waiting.drain(..)) {
            client.kick.notify_one();
            any = true;
        }
        self.count(streams);
        // With no page at all, the game waits for a reload by itself.
        if any {
            let _ = self.commands.try_send(Command::LetGo);
        }
    }

    /// The kept publishes, as of the last one taken in.
    pub(super) fn snapshot(&self) -> Snapshot {
        self.kept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .snapshot()
    }

    /// Takes in the publishes (and the game's status) until the server
    /// stops: what the game's thread left in the outbox when woken, all of
    /// it at once, then the clients' part of it.
    pub(super) async fn pump(self: Arc<Self>, mut woken: mpsc::UnboundedReceiver<()>) {
        while woken.recv().await.is_some() {
            // The connections write what the last round gave them first:
            // a game that publishes without a pause does not keep the
            // server's one thread from them.
            tokio::task::yield_now().await;
            let messages =
                std::mem::take(&mut *self.feed.outbox.lock().unwrap_or_else(|e| e.into_inner()));
            if messages.is_empty() {
                continue;
            }
            let (mut status, mut tuned) = (None, false);
            let (seq, agents) = {
                let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
                for message in messages {
                    match message {
                        ToServer::Published(p) => tuned |= kept.take(p),
                        ToServer::Status(s) => status = Some(s),
                    }
                }
                (kept.seq(), Arc::clone(kept.agents()))
            };
            self.published.send_replace(seq);
            // With no client there is nothing to send.
            let snapshot = self.snapshot();
            // To the streams that have their recording (those it starts
            // get it with theirs).
            if let Some(event) = snapshot.tuning_event().filter(|_| tuned) {
                self.send_tuning(&event);
            }
            if self.feed.clients.load(Ordering::Relaxed) > 0 && !self.on_publish(&snapshot) {
                return;
            }
            // After the ticks it is about.
            let moved = self.controls().saw_agents(&agents);
            let told = status.is_some();
            if let Some(status) = status {
                if status.paused {
                    // The pages have their time to answer.
                    self.held().heard = Instant::now();
                }
                self.controls().status = status;
            }
            if moved || told {
                self.send_controls();
            }
        }
    }

    /// Sends the clients what the publishes up to `snapshot` added, and
    /// starts the waiting ones; `false` once the server stops.
    fn on_publish(&self, snapshot: &Snapshot) -> bool {
        let budget = self.limits.backlog_bytes;
        let mut streams = self.lock();
        let streams = &mut *streams;
        if streams.closed {
            return false;
        }
        streams.joined.retain(|c| !c.tx.is_closed());
        streams.waiting.retain(|c| !c.tx.is_closed());
        if snapshot.seq > streams.seen {
            if !streams.joined.is_empty() {
                let wanted = Wanted::of(streams.joined.iter().map(|c| &c.view));
                match snapshot.ticks_after(streams.seen, self.runs(), &wanted) {
                    Ok(deltas) => {
                        let names = snapshot.names();
                        for d in &deltas {
                            streams
                                .joined
                                .retain(|c| c.send(&d.message_for(names, &c.view), budget));
                        }
                    }
                    // They start again from a whole recording.
                    Err(_) => streams.waiting.append(&mut streams.joined),
                }
            }
            streams.seen = snapshot.seq;
            let (ready, later) = std::mem::take(&mut streams.waiting)
                .into_iter()
                .partition::<Vec<_>, _>(|c| c.after < snapshot.seq);
            streams.waiting = later;
            if !ready.is_empty() {
                let control = self.control_event().into_iter();
                let control = control.chain(snapshot.tuning_event()).collect();
                self.start_clients(streams, ready, snapshot, control);
            }
        }
        if streams
            .cache
            .as_ref()
            .is_some_and(|c| c.at.elapsed() >= FRESH)
        {
            streams.cache = None;
        }
        self.count(streams);
        true
    }

    /// Starts `clients` at `snapshot`: each gets the whole recording, the
    /// messages after it and the controls, and joins; one that cannot take
    /// them is dropped.
    fn start_clients(
        &self,
        streams: &mut Streams,
        clients: Vec<Client>,
        snapshot: &Snapshot,
        control: Vec<Bytes>,
    ) {
        let budget = self.limits.backlog_bytes;
        let (every, some): (Vec<_>, Vec<_>) = clients.into_iter().partition(|c| c.asked.is_none());
        if !every.is_empty() {
            let (build, since) = self.start(&mut streams.cache, snapshot);
            for client in every {
                let started = client.tx.send(Item::Recording(build.clone())).is_ok()
                    && since.iter().chain(&control).all(|m| client.send(m, budget));
                if started {
                    streams.joined.push(client);
                }
            }
        }
        // A stream of some lanes gets their recording (made for it), and
        // the crowd's summary.
        for mut client in some {
            let (first, agents) = client.asked.clone().unwrap_or_default();
            let view = snapshot.slots_of(first, &agents);
            let build = self.make(snapshot, Some(Arc::clone(&view)));
            client.view = Some(view);
            let crowd = snapshot.crowd_event(client.id);
            let started = client.tx.send(Item::Recording(build)).is_ok()
                && std::iter::once(&crowd)
                    .chain(&control)
                    .all(|m| client.send(m, budget));
            if started {
                streams.joined.push(client);
            }
        }
    }

    /// Where a client that starts at `snapshot` starts: a fresh recording
    /// (made now if there is none) and the `ticks` messages since it.
    fn start(&self, cache: &mut Option<Cached>, snapshot: &Snapshot) -> (Build, Vec<Bytes>) {
        if let Some(c) = cache.as_ref()
            && c.seq <= snapshot.seq
            && (c.seq == snapshot.seq || c.at.elapsed() < FRESH)
            && let Ok(since) = snapshot.ticks_after(c.seq, self.runs(), &Wanted::All)
        {
            let since = since
                .iter()
                .map(|d| d.message_for(snapshot.names(), &None))
                .collect();
            return (c.build.clone(), since);
        }
        let build = self.make(snapshot, None);
        *cache = Some(Cached {
            seq: snapshot.seq,
            at: Instant::now(),
            build: build.clone(),
        });
        (build, Vec::new())
    }

    /// The whole recording at `snapshot` (a fresh one, or one made now),
    /// for `/recording.json`; `None` before the first publish.
    pub(super) fn recording(&self, snapshot: &Snapshot) -> Option<Build> {
        if !snapshot.published() {
            return None;
        }
        let mut streams = self.lock();
        if let Some(c) = streams.cache.as_ref()
            && c.seq <= snapshot.seq
            && (c.seq == snapshot.seq || c.at.elapsed() < FRESH)
        {
            return Some(c.build.clone());
        }
        let build = self.make(snapshot, None);
        streams.cache = Some(Cached {
            seq: snapshot.seq,
            at: Instant::now(),
            build: build.clone(),
        });
        Some(build)
    }

    /// Makes the whole recording (of the lanes `slots` only, when
    /// given) off the server's event loop.
    fn make(&self, snapshot: &Snapshot, slots: View) -> Build {
        let (tx, rx) = watch::channel(None);
        self.feed.exports.fetch_add(1, Ordering::Relaxed);
        let (snapshot, feed) = (snapshot.clone(), Arc::clone(&self.feed));
        tokio::task::spawn_blocking(move || {
            let runs = !feed.plain.load(Ordering::Relaxed);
            if let Some(event) = snapshot.recording(&feed.stopping, runs, slots.as_deref()) {
                let _ = tx.send(Some(event));
            }
        });
        Build(rx)
    }

    /// Stops: every stream gets an `end` event and then ends.
    pub(super) fn close(&self) {
        let end = sse("end", "{}");
        let mut streams = self.lock();
        streams.closed = true;
        for client in streams.joined.drain(..) {
            let _ = client.tx.send(Item::Message(end.clone()));
        }
        streams.waiting.clear();
        streams.cache = None;
        self.count(&streams);
    }
}

/// A stream client's response body: its messages, one server-sent event
/// per frame (so one chunk per event on the wire).
pub(super) struct Stream {
    pub(super) rx: mpsc::UnboundedReceiver<Item>,
    pub(super) pending: Arc<AtomicUsize>,
    pub(super) recording: Option<Pin<Box<dyn Future<Output = Option<Rope>> + Send>>>,
    hub: Arc<Hub>,
}

impl Drop for Stream {
    fn drop(&mut self) {
        // Its client is gone (or was dropped): counted out now.
        self.rx.close();
        self.hub.left();
    }
}
