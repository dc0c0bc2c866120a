//! Pausing the game from the page: the control requests the server takes
//! (`POST /control`), the breakpoints they set, and the game's side of it,
//! which [`LiveServer::frame`](super::LiveServer::frame) runs.
//!
//! The server checks and resolves each request and hands it to the game's
//! thread as a [`Command`] through a bounded channel; the game's thread
//! looks at that channel only while a page follows the stream, evaluates
//! the breakpoints on the ticks it just published, and tells the server
//! where it stands with a [`Status`], which the server passes to the pages
//! as a `control` event ([`Controls`]).

use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::body::Bytes;
use serde::{Deserialize, Serialize};

use super::feed::{Delta, Feed, Publisher, sse};
use crate::FlightRecorder;
use crate::export::TreeInfo;
use crate::recorder::{ERROR_BITS, ERROR_SHIFT, HEADER, Kind, REJECTIONS};

/// The most breakpoints a page may set.
pub(super) const MAX_BREAKPOINTS: usize = 64;

/// The most bytes of a control request's body.
pub(super) const MAX_BODY: usize = 4096;

/// How often a paused game looks whether a page still follows it.
const POLL: Duration = Duration::from_millis(50);

/// How long a paused game whose last page closed waits for a page to
/// come (a reload) before it goes on.
pub(super) const RELOAD: Duration = Duration::from_secs(3);

/// What a breakpoint stops at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum On {
    /// A decider was entered (activated).
    Enter,
    /// A decider was rejected (for a given reason, or any).
    Reject,
    /// A group reported a Subset Rule violation.
    SubsetRule,
    /// A tick returned an error.
    Error,
    /// A deferred action was launched.
    Launch,
}

/// A breakpoint as the page gives it (and as the pages are shown it).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Spec {
    /// Its identity: the server gives each new breakpoint one (never used
    /// again); a page keeps a breakpoint by sending it back with its id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    on: On,
    /// The decider's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    decider: Option<String>,
    /// The rejection's reason, as the recording's legend names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// The agent's id; any agent when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent: Option<u32>,
}

/// A control request's body.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub(super) enum Request {
    /// Stop at the end of the next frame.
    Pause,
    /// Go on.
    Resume,
    /// Let one frame through, and stop again at its end.
    Step,
    /// Replace the breakpoints.
    Breakpoints {
        /// The new ones (none clears them).
        set: Vec<Spec>,
    },
    /// The page read beat `n` of a paused game: it still follows.
    Beat {
        /// The beat's number, as the `beat` event gave it.
        n: u64,
    },
    /// Change the tunable `name` to `value` from the crowd's next tick on.
    Tune {
        name: String,
        value: serde_json::Value,
    },
}

/// A breakpoint resolved against the tree: what the game's thread tests.
#[derive(Clone, Debug)]
pub(super) struct Breakpoint {
    on: On,
    /// The items of the named decider (empty: any).
    items: Vec<u16>,
    /// The rejection's code, or any.
    reason: Option<u8>,
    agent: Option<u32>,
    /// As the page gave it, with its id: the status names it.
    spec: Arc<Spec>,
}

impl Spec {
    /// Resolves the breakpoint against `tree`: an error names what is at
    /// fault.
    fn resolve(&self, tree: &TreeInfo) -> Result<Breakpoint, String> {
        let name = |on: On| match on {
            On::Enter => "enter",
            On::Reject => "reject",
            On::SubsetRule => "subset-rule",
            On::Error => "error",
            On::Launch => "launch",
        };
        let items = match (&self.decider, self.on) {
            (None, On::Enter | On::Reject) => {
                return Err(format!("`{}` needs a decider", name(self.on)));
            }
            (Some(_), On::Error) => return Err("`error` takes no decider".into()),
            (None, _) => Vec::new(),
            (Some(decider), _) => {
                let items: Vec<u16> = tree
                    .items
                    .iter()
                    .filter(|it| it.name == decider)
                    .map(|it| it.index as u16)
                    .collect();
                if items.is_empty() {
                    return Err(format!(
                        "the tree `{}` has no decider named `{decider}`",
                        tree.name
                    ));
                }
                items
            }
        };
        let reason = match (&self.reason, self.on) {
            (None, _) => None,
            (Some(reason), On::Reject) => {
                let code = REJECTIONS.iter().position(|r| r.as_str() == reason);
                let Some(code) = code else {
                    let known: Vec<_> = REJECTIONS.iter().map(|r| r.as_str()).collect();
                    return Err(format!(
                        "`{reason}` is not a rejection reason; expected one of: {}",
                        known.join(", ")
                    ));
                };
                Some(code as u8)
            }
            (Some(_), on) => return Err(format!("`{}` takes no reason", name(on))),
        };
        Ok(Breakpoint {
            on: self.on,
            items,
            reason,
            agent: self.agent,
            spec: Arc::new(self.clone()),
        })
    }
}

/// What the pages are shown of the game's controls, as the server keeps
/// it: the game's last status, the breakpoints set and which of them wait
/// for their agent to be recorded.
#[derive(Default)]
pub(super) struct Controls {
    /// As the game last told.
    pub(super) status: Status,
    /// The breakpoints set, as the pages gave them, each with its id.
    breakpoints: Vec<Spec>,
    /// The last id given.
    last_id: u64,
    /// The agents the recorder records, as of the last publish.
    agents: Arc<Vec<u32>>,
    /// The ids of the breakpoints whose agent is not recorded now.
    unrecorded: Vec<u64>,
}

impl Controls {
    /// The `control` event. `hit.breakpoint` is the place, in this
    /// event's list, of the breakpoint that fired (`fired`), found by its
    /// id: `null` once it was removed.
    pub(super) fn event(&self, framing: bool) -> Bytes {
        let fired = self.status.fired.as_deref();
        let hit = self.status.hit.map(|h| {
            let place = fired.and_then(|f| self.breakpoints.iter().position(|b| b.id == f.id));
            serde_json::json!({"breakpoint": place, "agent": h.agent, "tick": h.tick})
        });
        let json = serde_json::json!({
            "framing": framing,
            "paused": self.status.paused,
            "tick": self.status.tick,
            "why": self.status.why,
            "hit": hit,
            "fired": fired,
            "breakpoints": self.breakpoints,
            "unrecorded": self.unrecorded,
        });
        sse("control", &json.to_string())
    }

    /// Replaces the breakpoints with `set`, each checked against `tree`
    /// and the agents recorded (`newcomers`: the recorder gives lanes to
    /// agents as they come, so one not recorded now may be later). Returns
    /// the command that hands them to the game, or what is at fault,
    /// naming the breakpoint (from 1, as the page numbers them).
    pub(super) fn set(
        &mut self,
        mut set: Vec<Spec>,
        tree: &TreeInfo,
        newcomers: bool,
    ) -> Result<Command, String> {
        if set.len() > MAX_BREAKPOINTS {
            return Err(format!(
                "{} breakpoints, more than the {MAX_BREAKPOINTS} allowed",
                set.len()
            ));
        }
        for (i, spec) in set.iter().enumerate() {
            let n = i + 1;
            if let Some(id) = spec.id {
                if !self.breakpoints.iter().any(|b| b.id == Some(id)) {
                    return Err(format!(
                        "breakpoint {n}: no breakpoint has id {id} (it was removed, or never \
                         given); leave `id` out for a new breakpoint"
                    ));
                }
                if set[..i].iter().any(|b| b.id == Some(id)) {
                    return Err(format!(
                        "breakpoint {n}: id {id} is another breakpoint's of the list"
                    ));
                }
            }
            if let Some(agent) = spec.agent
                && !newcomers
                && !self.agents.contains(&agent)
            {
                return Err(format!(
                    "breakpoint {n}: agent #{agent} is not recorded: the recorder watches {} \
                     and records no other, so the breakpoint would never fire (watch the \
                     agent, with Watch::All or Watch::Agents naming it, to break on it)",
                    named(&self.agents)
                ));
            }
        }
        let mut next = self.last_id;
        for spec in set.iter_mut().filter(|s| s.id.is_none()) {
            next += 1;
            spec.id = Some(next);
        }
        let resolved = set
            .iter()
            .enumerate()
            .map(|(i, s)| {
                s.resolve(tree)
                    .map_err(|e| format!("breakpoint {}: {e}", i + 1))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.last_id = next;
        self.breakpoints = set;
        self.mark();
        Ok(Command::Breakpoints(resolved))
    }

    /// Takes in the agents recorded as of the last publish; whether a
    /// breakpoint's agent came or went (the pages are to be told).
    pub(super) fn saw_agents(&mut self, agents: &Arc<Vec<u32>>) -> bool {
        if Arc::ptr_eq(&self.agents, agents) {
            return false;
        }
        self.agents = Arc::clone(agents);
        self.mark()
    }

    /// Marks the breakpoints whose agent is not recorded now; whether
    /// that changed.
    fn mark(&mut self) -> bool {
        let agents = &self.agents;
        let now: Vec<u64> = self
            .breakpoints
            .iter()
            .filter(|b| b.agent.is_some_and(|a| !agents.contains(&a)))
            .filter_map(|b| b.id)
            .collect();
        let changed = now != self.unrecorded;
        self.unrecorded = now;
        changed
    }
}

/// The agents of `agents` for a message: "6 agents (#0 to #5)".
fn named(agents: &[u32]) -> String {
    match agents {
        [] => "no agent".into(),
        [a] => format!("1 agent (#{a})"),
        [first, .., last] if agents.windows(2).all(|w| w[1] == w[0] + 1) => {
            format!("{} agents (#{first} to #{last})", agents.len())
        }
        _ => {
            let mut list: Vec<String> = agents.iter().take(8).map(|a| format!("#{a}")).collect();
            if agents.len() > 8 {
                list.push("…".into());
            }
            format!("{} agents ({})", agents.len(), list.join(", "))
        }
    }
}

impl Breakpoint {
    /// Whether it fires on the tick of `agent` whose own words are `words`.
    fn fires(&self, agent: u32, words: &[u64]) -> bool {
        if self.agent.is_some_and(|a| a != agent) {
            return false;
        }
        let header = words[1];
        if self.on == On::Error {
            return (header >> 56) as u8 >> ERROR_SHIFT & ERROR_BITS != 0;
        }
        let kind = match self.on {
            On::Enter => Kind::Activated,
            On::Reject => Kind::Rejected,
            On::SubsetRule => Kind::SubsetViolation,
            On::Launch => Kind::Launched,
            On::Error => unreachable!(),
        } as u8;
        let events = usize::from((header >> 32) as u16);
        words[HEADER..HEADER + events].iter().any(|&w| {
            w as u8 == kind
                && (self.items.is_empty() || self.items.contains(&((w >> 16) as u16)))
                && self.reason.is_none_or(|r| (w >> 8) as u8 == r)
        })
    }
}

/// Where a breakpoint fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Hit {
    /// Its place among the game's breakpoints.
    pub(super) breakpoint: usize,
    pub(super) agent: u32,
    pub(super) tick: u64,
}

impl Delta {
    /// The first tick (from frame `from` on) where one of `breakpoints`
    /// fires.
    fn hit(&self, from: u64, breakpoints: &[Breakpoint]) -> Option<Hit> {
        let mut first: Option<Hit> = None;
        // A tick keeps none of its walk's rejections: they are read back
        // only when a breakpoint looks for rejections.
        let rejections = breakpoints.iter().any(|b| b.on == On::Reject);
        let mut read = Vec::new();
        for (agent, serial, words) in self.ticks() {
            if serial < from || first.is_some_and(|h| h.tick <= serial) {
                continue;
            }
            let words = if rejections {
                read.clear();
                self.read_into(serial, words, &mut read);
                &read[..]
            } else {
                words
            };
            if let Some(i) = breakpoints.iter().position(|b| b.fires(agent, words)) {
                first = Some(Hit {
                    breakpoint: i,
                    agent,
                    tick: serial,
                });
            }
        }
        first
    }
}

/// What the server hands the game's thread.
pub(super) enum Command {
    Pause,
    Resume,
    Step,
    Breakpoints(Vec<Breakpoint>),
    /// A change of a tunable, checked against the shared state it goes to.
    Tune(Arc<bt_core::TreeShared>, String, bt_core::TuneValue),
    /// A page left: the game looks whether any still follows.
    Left,
    /// The server let go of pages that no longer answered: the game goes
    /// on at once (no grace for a reload).
    LetGo,
}

/// Why the game stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Why {
    Pause,
    Step,
    Breakpoint,
}

/// Where the game stands, as it tells the server.
#[derive(Clone, Debug, Default)]
pub(super) struct Status {
    pub(super) paused: bool,
    /// The frame it stopped at the end of.
    pub(super) tick: Option<u64>,
    pub(super) why: Option<Why>,
    pub(super) hit: Option<Hit>,
    /// The breakpoint that fired, as it was set (it may be removed since).
    pub(super) fired: Option<Arc<Spec>>,
}

/// The game's side: whether it is paused and what stops it.
pub(super) struct Game {
    /// Only the game's thread reads it, through `&mut self` (`get_mut`,
    /// no locking): the mutex makes the server `Sync`, as an engine's
    /// resources must be.
    commands: Mutex<Receiver<Command>>,
    paused: Option<Why>,
    breakpoints: Vec<Breakpoint>,
    /// Frames recorded at the last frame a page saw.
    checked: u64,
    /// The last frame was skipped: no page followed.
    skipped: bool,
    /// The server was told the game calls `frame`.
    told: bool,
}

impl Game {
    pub(super) fn new(commands: Receiver<Command>) -> Self {
        Game {
            commands: Mutex::new(commands),
            paused: None,
            breakpoints: Vec::new(),
            checked: 0,
            skipped: true,
            told: false,
        }
    }

    /// A frame with nobody following: nothing to do, nothing to stop for.
    #[inline]
    pub(super) fn skip(&mut self, feed: &Feed) {
        self.skipped = true;
        self.paused = None;
        self.tell(feed);
    }

    /// Tells the server, once, that the game calls `frame` (before its
    /// first publish: the pages it starts are sent the controls).
    #[inline]
    pub(super) fn tell(&mut self, feed: &Feed) {
        if !self.told {
            self.told = true;
            feed.framing.store(true, Ordering::Release);
        }
    }

    /// After a publish that added `delta` (when a page follows): takes the
    /// commands, evaluates the breakpoints on the ticks of this frame and
    /// waits while paused.
    pub(super) fn after_publish(
        &mut self,
        feed: &Feed,
        publisher: &Publisher,
        delta: Option<&Delta>,
        recorder: &FlightRecorder,
    ) {
        let frames = recorder.frames();
        feed.newcomers
            .store(recorder.assigns_lanes(), Ordering::Relaxed);
        // The ticks recorded since the last frame a page saw (only this
        // frame's after frames nobody saw).
        let from = if self.skipped {
            frames.saturating_sub(1)
        } else {
            self.checked
        };
        self.skipped = false;
        self.checked = frames;
        if feed.clients.load(Ordering::Relaxed) == 0 {
            self.paused = None;
            return;
        }
        loop {
            match commands_of(&mut self.commands).try_recv() {
                Ok(command) => self.take(command),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            }
        }
        // Also while stepping: the page is told what fired.
        let mut hit = None;
        if !self.breakpoints.is_empty()
            && let Some(delta) = delta
        {
            hit = delta.hit(from, &self.breakpoints);
            if hit.is_some() {
                self.paused = Some(Why::Breakpoint);
            }
        }
        let Some(why) = self.paused else {
            return;
        };
        let fired = hit.map(|h| Arc::clone(&self.breakpoints[h.breakpoint].spec));
        publisher.report(
            feed,
            Status {
                paused: true,
                tick: frames.checked_sub(1),
                why: Some(why),
                hit,
                fired,
            },
        );
        self.wait(feed);
        publisher.report(feed, Status::default());
    }

    fn take(&mut self, command: Command) {
        match command {
            Command::Pause => self.paused = self.paused.or(Some(Why::Pause)),
            Command::Step => self.paused = Some(Why::Step),
            Command::Resume => self.paused = None,
            Command::Breakpoints(set) => self.breakpoints = set,
            // The server checked it against this shared state, whose table
            // is fixed: it is taken.
            Command::Tune(shared, name, value) => {
                let taken = shared.tune_named(&name, value);
                debug_assert!(taken.is_ok(), "{taken:?}");
            }
            Command::Left | Command::LetGo => {}
        }
    }

    /// Blocks until a page resumes or steps the game, or none follows it
    /// any more: when the last page closes it waits [`RELOAD`] for one to
    /// come (a reload) first; pages the server let go of do not hold it.
    fn wait(&mut self, feed: &Feed) {
        let mut alone: Option<Instant> = None;
        loop {
            match commands_of(&mut self.commands).recv_timeout(POLL) {
                Ok(Command::LetGo) => {
                    self.paused = None;
                    return;
                }
                Ok(command) => {
                    let goes_on = matches!(command, Command::Resume | Command::Step);
                    self.take(command);
                    if goes_on {
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    self.paused = None;
                    return;
                }
            }
            if feed.stopping.load(Ordering::Relaxed) {
                self.paused = None;
                return;
            }
            if feed.clients.load(Ordering::Relaxed) > 0 {
                alone = None;
            } else if alone.get_or_insert_with(Instant::now).elapsed() >= RELOAD {
                self.paused = None;
                return;
            }
        }
    }
}

/// The game's end of the command channel. A panic elsewhere cannot have
/// left it half-used: receiving is one call.
fn commands_of(commands: &mut Mutex<Receiver<Command>>) -> &mut Receiver<Command> {
    commands
        .get_mut()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
