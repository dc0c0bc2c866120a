//! Looking inside an agent: the state dump of Spore's `DebugPrintState`, a
//! Graphviz picture of a tree, and a helper that records the decision trace
//! of a scripted run for snapshot tests.
//!
//! [`debug_print_state`] and [`to_dot`] write straight into any
//! [`fmt::Write`] and allocate nothing; [`record_trace`] is for tests and
//! returns a `String`.

pub(crate) mod trace;

use alloc::string::String;
use core::fmt::{self, Write};

use crate::decl::TickInput;
use crate::decl::{DeciderFlags, FlagTest};
use crate::interp::{TickReport, tick_traced};
use crate::memory::{ActiveLevel, AgentMemory};
use crate::tree::{Node, Tree};
use trace::TraceRecorder;

/// What [`debug_print_state`] shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DumpView {
    /// One line per level of the active path, root first.
    #[default]
    ActivePath,
    /// Every item of the tree in preorder, the active ones marked with `*`.
    WholeTree,
}

/// Writes an indented view of an agent's state, in the spirit of Spore's
/// `DebugPrintState`: for a tooltip over the agent, a debugger, a log line.
///
/// One line per decider, indented two spaces per depth:
///
/// ```text
/// *0:ROOT/0x7797f48d (group prioritized 0x0) time: 3.50 [ROOT_B] (0x0000000000000000 0) idx: 1
///   *1:MID/0xd6e7f5bd (group prioritized 0x0) time: 2.50 [MID_B] (0x0000000000000000 0) idx: 1
///     *1:DEEP/0x3912a457 (group prioritized 0x0) time: 2.50 [DEEP_B] (0x0000000000000001 1) idx: 1
///       *1:D2/0x16fa851b (behavior) time: 0.50 [D2_B]
/// ```
///
/// - `*` marks an active decider (in [`DumpView::WholeTree`], inactive ones
///   have a space there and nothing after their behavior);
/// - the number before the colon is the decider's index among its parent's
///   children, then its name and its stable [id](crate::Decider::id);
/// - in parentheses, `group` with the policy and the [`DeciderFlags`] bits,
///   or `behavior`;
/// - `time:` — seconds since it was activated (`now` less its activation
///   time);
/// - in brackets, its behavior (the leaf's, or the group behavior), with the
///   behavior flags word when it is not zero; a group without a behavior
///   has `[(no group behavior)]` there, as in Spore, so that every group
///   line has the same fields for tools that read the dump;
/// - for an active group, the last tick's redecide mask (a bit per child
///   masked out by a failure) and count, and `idx:` the active child's
///   index.
///
/// An idle agent's active path is the line `(idle)`. A memory made by
/// another tree gets a line saying so, and nothing else.
///
/// Nothing is allocated: the text goes straight to `out`.
///
/// ```
/// use bt_core::{DumpView, TickInput, behavior, debug_print_state, decider, group, tick, tree};
///
/// struct Critter;
/// behavior! { WANDER: Critter }
/// decider! { JUST_WANDER: Critter => WANDER }
/// group! { ROOT: Critter, prioritized [JUST_WANDER] }
/// tree! { CRITTER: Critter = ROOT }
///
/// let mut memory = CRITTER.new_memory(0);
/// tick(&CRITTER, &mut Critter, &mut memory, &TickInput::new(1.0, 0.5)).unwrap();
/// let mut text = String::new();
/// debug_print_state(&mut text, &CRITTER, &memory, 3.5, DumpView::ActivePath).unwrap();
/// let lines: Vec<&str> = text.lines().collect();
/// assert!(lines[0].starts_with("*0:ROOT/0x"));
/// assert!(lines[0].ends_with("(group prioritized 0x0) time: 2.50 [(no group behavior)] (0x0000000000000000 0) idx: 0"));
/// assert!(lines[1].starts_with("  *0:JUST_WANDER/0x"));
/// assert!(lines[1].ends_with("(behavior) time: 2.50 [WANDER]"));
/// // The same, as a `Display` value:
/// assert_eq!(memory.dump(3.5, DumpView::ActivePath).to_string(), text);
/// ```
///
/// # Errors
/// Whatever `out` returns.
pub fn debug_print_state<A: 'static, const L: usize, const S: usize, const N: usize>(
    out: &mut impl Write,
    tree: &Tree<A, L, S, N>,
    memory: &AgentMemory<A, L, S, N>,
    now: f64,
    view: DumpView,
) -> fmt::Result {
    if !core::ptr::eq(memory.tree(), tree) {
        return writeln!(
            out,
            "(memory of tree `{}`, not of `{}`)",
            memory.tree().name(),
            tree.name()
        );
    }
    match view {
        DumpView::ActivePath => {
            if memory.is_idle() {
                return out.write_str("(idle)\n");
            }
            for level in memory.active_path() {
                dump_line(out, tree, memory, tree.node(level.item), Some(level), now)?;
            }
        }
        DumpView::WholeTree => {
            for node in tree.nodes() {
                let level = level_at(memory, node);
                dump_line(out, tree, memory, node, level, now)?;
            }
        }
    }
    Ok(())
}

/// The active level of `node`, if it is active.
fn level_at<A: 'static, const L: usize, const S: usize, const N: usize>(
    memory: &AgentMemory<A, L, S, N>,
    node: Node<'_, A>,
) -> Option<ActiveLevel> {
    let depth = node.depth();
    (memory.active(depth) == Some(node.index()))
        .then(|| memory.active_path().nth(depth))
        .flatten()
}

/// One line of the dump.
fn dump_line<A: 'static, const L: usize, const S: usize, const N: usize>(
    out: &mut impl Write,
    tree: &Tree<A, L, S, N>,
    memory: &AgentMemory<A, L, S, N>,
    node: Node<'_, A>,
    level: Option<ActiveLevel>,
    now: f64,
) -> fmt::Result {
    for _ in 0..node.depth() {
        out.write_str("  ")?;
    }
    let mark = if level.is_some() { '*' } else { ' ' };
    write!(
        out,
        "{mark}{}:{}/0x{:08x} ",
        node.child_index(),
        node.name(),
        node.id()
    )?;
    if let Some(target) = node.target() {
        // Never active: no time, no block; where it jumps instead.
        out.write_str("(reference) [jumps to ")?;
        write_path(out, target)?;
        return out.write_str("]\n");
    }
    match node.policy() {
        Some(policy) => write!(out, "(group {policy} {:#x})", node.decider().flags().bits())?,
        None => out.write_str("(behavior)")?,
    }
    if let Some(level) = level {
        write!(out, " time: {:.2}", now - level.since)?;
    }
    match node.behavior() {
        Some(behavior) => match node.behavior_flags() {
            0 => write!(out, " [{}]", behavior.name())?,
            flags => write!(out, " [{} flags={flags:#x}]", behavior.name())?,
        },
        // Spore's placeholder keeps the columns of every group line alike.
        None => out.write_str(" [(no group behavior)]")?,
    }
    if let (Some(level), true) = (level, node.is_group()) {
        write!(out, " ({:#018x} {})", level.mask, level.redecides)?;
        match memory.active(node.depth() + 1) {
            Some(child) => write!(out, " idx: {}", tree.node(child).child_index())?,
            None => out.write_str(" idx: -")?,
        }
    }
    out.write_char('\n')
}

/// `node`'s path of names from the root, `/`-separated, as
/// [`Tree::find_path`] reads it.
fn write_path<A: 'static>(out: &mut impl Write, node: Node<'_, A>) -> fmt::Result {
    if let Some(parent) = node.parent() {
        write_path(out, parent)?;
        out.write_char('/')?;
    }
    out.write_str(node.name())
}

/// An agent's state dump as a [`Display`](fmt::Display) value: what
/// [`AgentMemory::dump`] returns. `format!("{}", memory.dump(now, view))`
/// writes what [`debug_print_state`] writes.
pub struct Dump<'m, A: 'static, const L: usize, const S: usize, const N: usize> {
    memory: &'m AgentMemory<A, L, S, N>,
    now: f64,
    view: DumpView,
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> fmt::Display
    for Dump<'_, A, L, S, N>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_print_state(f, self.memory.tree(), self.memory, self.now, self.view)
    }
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> fmt::Debug
    for Dump<'_, A, L, S, N>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> AgentMemory<A, L, S, N> {
    /// The agent's state at time `now`, as [`debug_print_state`] writes it,
    /// to print with `{}`. Nothing is formatted until it is printed.
    pub fn dump(&self, now: f64, view: DumpView) -> Dump<'_, A, L, S, N> {
        Dump {
            memory: self,
            now,
            view,
        }
    }
}

/// Writes the tree as a Graphviz DOT graph, with the active path of
/// `memory` (if given) highlighted: render it with
/// `dot -Tsvg tree.dot -o tree.svg`.
///
/// One node per item (a decider used in two places is drawn twice), named
/// `n` and the item index, labelled with the decider's name, for a group its
/// policy and flags, its behavior in brackets, and a summary of its
/// preconditions: `needs 0x3` (decision flags that must all be set; `needs
/// any`, `needs none`, `needs not all` for the other tests), `stimuli …`
/// for the same tests of the stimuli flags, `every 2s` for a timer, `gate 3`,
/// `cooldown 5s` and `together 2` for the shared checks. Edges go
/// from each group to its children, in priority (declaration) order, and,
/// dashed, from each reference to its target (a reference's own box is
/// dashed too). Active
/// deciders are filled and drawn bold, and so are the edges between them.
///
/// The text depends only on the tree and the active path, so it is stable
/// enough to snapshot. Nothing is allocated. A memory made by another tree
/// is ignored (a comment in the output says so).
///
/// ```
/// use bt_core::{behavior, decider, group, tick, to_dot, tree, TickInput};
///
/// struct Critter;
/// behavior! { WANDER: Critter }
/// decider! { JUST_WANDER: Critter => WANDER, every: 2.0 }
/// group! { ROOT: Critter, prioritized [JUST_WANDER] }
/// tree! { CRITTER: Critter = ROOT }
///
/// let mut memory = CRITTER.new_memory(0);
/// tick(&CRITTER, &mut Critter, &mut memory, &TickInput::new(0.0, 0.5)).unwrap();
/// let mut dot = String::new();
/// to_dot(&mut dot, &CRITTER, Some(&memory)).unwrap();
/// assert!(dot.starts_with("digraph \"CRITTER\" {"));
/// assert!(dot.contains(r#"n1 [label="JUST_WANDER\n[WANDER]\nevery 2s", style="rounded,filled,bold""#));
/// assert!(dot.contains("n0 -> n1 [penwidth=2, color=\"#000000\"];"));
/// ```
///
/// # Errors
/// Whatever `out` returns.
pub fn to_dot<A: 'static, const L: usize, const S: usize, const N: usize>(
    out: &mut impl Write,
    tree: &Tree<A, L, S, N>,
    memory: Option<&AgentMemory<A, L, S, N>>,
) -> fmt::Result {
    out.write_str("digraph \"")?;
    escaped(out, tree.name())?;
    out.write_str("\" {\n")?;
    out.write_str("  graph [rankdir=TB, ordering=out, nodesep=0.3, ranksep=0.4, label=\"")?;
    escaped(out, tree.name())?;
    out.write_str("\", labelloc=t, fontname=\"Helvetica\", fontsize=12];\n")?;
    out.write_str(
        "  node [shape=box, fontname=\"Helvetica\", fontsize=10, margin=\"0.12,0.05\"];\n",
    )?;
    out.write_str("  edge [arrowsize=0.6, color=\"#888888\"];\n")?;
    let memory = match memory {
        Some(m) if !core::ptr::eq(m.tree(), tree) => {
            out.write_str("  // the memory given belongs to tree \"")?;
            escaped(out, m.tree().name())?;
            out.write_str("\": no active path shown\n")?;
            None
        }
        m => m,
    };
    let active = |node: Node<'_, A>| memory.is_some_and(|m| m.is_active(node.index()));
    for node in tree.nodes() {
        write!(out, "  n{} [label=\"", node.index())?;
        escaped(out, node.name())?;
        if let Some(policy) = node.policy() {
            write!(out, "\\n{policy}")?;
            let flags = node.decider().flags();
            if flags.contains(DeciderFlags::CALL_DECIDE_ON_REDECIDE) {
                out.write_str(", recheck")?;
            }
            if flags.contains(DeciderFlags::DELEGATE_DECIDE) {
                out.write_str(", delegate")?;
            }
        }
        if let Some(behavior) = node.behavior() {
            out.write_str("\\n[")?;
            escaped(out, behavior.name())?;
            match node.behavior_flags() {
                0 => out.write_str("]")?,
                flags => write!(out, " flags={flags:#x}]")?,
            }
        }
        preconditions(out, node)?;
        out.write_char('"')?;
        if node.is_reference() {
            // Never active; drawn apart from the deciders that run.
            out.write_str(", style=\"rounded,dashed\"];\n")?;
            continue;
        }
        match (node.is_group(), active(node)) {
            (false, false) => out.write_str(", style=rounded")?,
            (false, true) => out.write_str(", style=\"rounded,filled,bold\"")?,
            (true, false) => {}
            (true, true) => out.write_str(", style=\"filled,bold\"")?,
        }
        if active(node) {
            out.write_str(", fillcolor=\"#ffd966\", penwidth=2")?;
        }
        out.write_str("];\n")?;
    }
    for node in tree.nodes() {
        let Some(parent) = node.parent() else {
            continue;
        };
        write!(out, "  n{} -> n{}", parent.index(), node.index())?;
        if active(node) {
            out.write_str(" [penwidth=2, color=\"#000000\"]")?;
        }
        out.write_str(";\n")?;
    }
    for node in tree.nodes() {
        if let Some(target) = node.target() {
            // The jump: dashed, and left out of the ranking so that the
            // tree keeps its shape.
            writeln!(
                out,
                "  n{} -> n{} [style=dashed, constraint=false, color=\"#3c78d8\"];",
                node.index(),
                target.index()
            )?;
        }
    }
    out.write_str("}\n")
}

/// The preconditions of a node, as `\n`-prefixed label text (nothing when
/// it has none).
fn preconditions<A: 'static>(out: &mut impl Write, node: Node<'_, A>) -> fmt::Result {
    let pre = node.decider().preconditions();
    // Before the first item a new label line, then commas.
    let mut sep = "\\n";
    for (word, test) in [("needs", &pre.decision), ("stimuli", &pre.stimuli)] {
        let FlagTest {
            all,
            any,
            none,
            not_all,
        } = *test;
        for (what, mask) in [
            ("", all),
            (" any", any),
            (" none", none),
            (" not all", not_all),
        ] {
            if mask != 0 {
                write!(out, "{sep}{word}{what} {mask:#x}")?;
                sep = ", ";
            }
        }
    }
    // A field that names a tunable shows its name.
    let tuned = node.decider().tuned_fields();
    if let Some(t) = tuned.every {
        write!(out, "{sep}every {}", t.name())?;
        sep = ", ";
    } else if pre.every > 0.0 {
        write!(out, "{sep}every {}s", pre.every)?;
        sep = ", ";
    }
    let sync = &pre.sync;
    if let Some(t) = tuned.gate {
        write!(out, "{sep}gate {}", t.name())?;
        sep = ", ";
    } else if sync.gate > 0 {
        write!(out, "{sep}gate {}", sync.gate)?;
        sep = ", ";
    }
    if let Some(t) = tuned.cooldown {
        write!(out, "{sep}cooldown {}", t.name())?;
        sep = ", ";
    } else if sync.cooldown > 0.0 {
        write!(out, "{sep}cooldown {}s", sync.cooldown)?;
        sep = ", ";
    }
    if sync.together > 0 {
        write!(out, "{sep}together {}", sync.together)?;
    }
    Ok(())
}

/// Writes `s` escaped for a double-quoted DOT string.
fn escaped(out: &mut impl Write, s: &str) -> fmt::Result {
    for c in s.chars() {
        match c {
            '"' => out.write_str("\\\"")?,
            '\\' => out.write_str("\\\\")?,
            '\n' => out.write_str("\\n")?,
            c => out.write_char(c)?,
        }
    }
    Ok(())
}

/// Runs a scripted scenario and returns its decision trace as text: the
/// [`TraceRecorder`] lines of every tick, a line `error: …` after a tick
/// that failed, and the scenario's own notes and dumps. A decision-trace
/// snapshot test is then a few lines.
///
/// The scenario gets a [`Scenario`] to tick the agent, change it between
/// ticks, and write notes. This allocates (it is for tests).
///
/// ```
/// use bt_core::{TickInput, behavior, decider, group, record_trace, tree};
///
/// #[derive(Default)]
/// struct Critter { hungry: bool }
/// behavior! { EAT: Critter }
/// behavior! { WANDER: Critter }
/// decider! { EAT_WHEN_HUNGRY: Critter => EAT, when: |c, _| c.hungry }
/// decider! { JUST_WANDER: Critter => WANDER }
/// group! { ROOT: Critter, prioritized [EAT_WHEN_HUNGRY, JUST_WANDER] }
/// tree! { CRITTER: Critter = ROOT }
///
/// let mut critter = Critter::default();
/// let mut memory = CRITTER.new_memory(0);
/// let trace = record_trace(&CRITTER, &mut critter, &mut memory, |run| {
///     run.tick(TickInput::new(0.0, 1.0));
///     run.note("hunger strikes");
///     run.agent().hungry = true;
///     run.tick(TickInput::new(1.0, 1.0));
/// });
/// // In a test: insta::assert_snapshot!(trace);
/// assert_eq!(trace, "\
/// tick agent=0 t=0.000 dt=1.000 decision=0x0 stimuli=0x0
///   activate 0:ROOT
///     decline 1:EAT_WHEN_HUNGRY = 0.000
///     reject 1:EAT_WHEN_HUNGRY (decide)
///     activate 2:JUST_WANDER [WANDER]
/// end leaf=2:JUST_WANDER visited=3
/// ## hunger strikes
/// tick agent=0 t=1.000 dt=1.000 decision=0x0 stimuli=0x0
///   visit 0:ROOT
///     accept 1:EAT_WHEN_HUNGRY = 1.000
///   preempt in 0:ROOT by 1:EAT_WHEN_HUNGRY
///     deactivate 2:JUST_WANDER (preempted)
///     activate 1:EAT_WHEN_HUNGRY [EAT]
/// end leaf=1:EAT_WHEN_HUNGRY visited=2
/// ");
/// ```
pub fn record_trace<A: 'static, const L: usize, const S: usize, const N: usize>(
    tree: &Tree<A, L, S, N>,
    agent: &mut A,
    memory: &mut AgentMemory<A, L, S, N>,
    scenario: impl FnOnce(&mut Scenario<'_, A, L, S, N>),
) -> String {
    let mut run = Scenario {
        tree,
        agent,
        memory,
        recorder: TraceRecorder::new(),
        text: String::new(),
        now: 0.0,
    };
    scenario(&mut run);
    run.text
}

/// A scripted run in progress, handed to the scenario of [`record_trace`].
pub struct Scenario<'r, A: 'static, const L: usize, const S: usize, const N: usize> {
    tree: &'r Tree<A, L, S, N>,
    agent: &'r mut A,
    memory: &'r mut AgentMemory<A, L, S, N>,
    recorder: TraceRecorder,
    text: String,
    now: f64,
}

impl<A: 'static, const L: usize, const S: usize, const N: usize> Scenario<'_, A, L, S, N> {
    /// Ticks the agent once, recording the trace. A tick that fails adds a
    /// line `error: …` and returns `None`.
    pub fn tick(&mut self, input: TickInput) -> Option<TickReport> {
        if input.now.is_finite() {
            self.now = input.now;
        }
        let result = tick_traced(
            self.tree,
            self.agent,
            self.memory,
            &input,
            &mut self.recorder,
        );
        self.text.push_str(self.recorder.text());
        self.recorder.take();
        match result {
            Ok(report) => Some(report),
            Err(error) => {
                // Writing to a String cannot fail.
                let _ = writeln!(self.text, "error: {error}");
                None
            }
        }
    }

    /// Ticks the agent once per input, in order.
    pub fn ticks(&mut self, inputs: impl IntoIterator<Item = TickInput>) {
        for input in inputs {
            self.tick(input);
        }
    }

    /// Adds a line of the scenario's own, as `# line`.
    pub fn note(&mut self, line: &str) {
        self.text.push_str("# ");
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// Adds the agent's state dump ([`debug_print_state`]) at the time of
    /// the last tick with a usable time, after a line `# state at t=…`.
    pub fn dump(&mut self, view: DumpView) {
        let _ = writeln!(self.text, "# state at t={:.3}", self.now);
        let _ = debug_print_state(&mut self.text, self.tree, self.memory, self.now, view);
    }

    /// The agent, to change it between ticks.
    pub fn agent(&mut self) -> &mut A {
        self.agent
    }

    /// The agent's memory.
    pub fn memory(&self) -> &AgentMemory<A, L, S, N> {
        self.memory
    }

    /// The trace recorded so far.
    pub fn text(&self) -> &str {
        &self.text
    }
}
