//! Declarative fields that name a tunable: a decider's `every:`,
//! `cooldown:` and `gate:` given as `tunable(NAME)` instead of a number.
//! Each is checked where the decider is declared (the tunable's kind and
//! range), again where the tree is compiled (the tree's table), and read
//! by every tick from the values of the memory's crowd.

use super::msg::Msg;
use super::tune::{Tunable, TunableKind, TunableValue, Tunables, with_places};
use super::tuned::Tuned;

/// Which of a decider's declarative fields name a tunable, and which one
/// each names: `cooldown: tunable(GRENADE_COOLDOWN)` in a
/// [`decider!`](crate::decider), [`group!`](crate::group) or
/// [`leaf!`](crate::leaf). Read it with
/// [`Decider::tuned_fields`](crate::Decider::tuned_fields).
///
/// A field that names a tunable is there for the whole run, whatever its
/// value: the tree keeps a timer slot, a cooldown stamp or a gate count
/// for it even while its value in effect is 0 (a timer or cooldown of 0 s
/// makes no agent wait). The decider's [`Preconditions`](crate::Preconditions)
/// hold the tunable's default in that field.
#[derive(Clone, Copy, Debug)]
pub struct TunedFields {
    /// The timer's period (`every:`): a float tunable, in seconds.
    pub every: Option<Tunable<f64>>,
    /// The gate's size (`gate:`): an int tunable whose range is within
    /// 1..=65535.
    pub gate: Option<Tunable<i64>>,
    /// The global cooldown (`cooldown:`): a float tunable, in seconds.
    pub cooldown: Option<Tunable<f64>>,
}

impl TunedFields {
    /// No field names a tunable.
    pub const NONE: TunedFields = TunedFields {
        every: None,
        gate: None,
        cooldown: None,
    };

    /// Whether any field names a tunable.
    pub const fn is_some(&self) -> bool {
        self.every.is_some() || self.gate.is_some() || self.cooldown.is_some()
    }

    /// The tunable `every: tunable(…)` of decider `decider` names, checked:
    /// a float tunable of seconds at or above 0.
    ///
    /// # Panics
    /// (At compile time, in the decider's `static`.) Naming the decider,
    /// the key and the tunable, for a tunable of another kind or whose
    /// range goes below 0 or has no finite end.
    #[doc(hidden)]
    pub const fn __every<T: TunableValue>(decider: &str, tunable: Tunable<T>) -> Tunable<f64> {
        seconds(decider, "every", tunable)
    }

    /// The tunable `cooldown: tunable(…)` names, checked as for `every:`.
    ///
    /// # Panics
    /// As [`__every`](Self::__every).
    #[doc(hidden)]
    pub const fn __cooldown<T: TunableValue>(decider: &str, tunable: Tunable<T>) -> Tunable<f64> {
        seconds(decider, "cooldown", tunable)
    }

    /// The tunable `gate: tunable(…)` names, checked: an int tunable whose
    /// range is within 1..=65535.
    ///
    /// # Panics
    /// (At compile time.) Naming the decider, the key and the tunable,
    /// for a tunable of another kind or a range that does not fit.
    #[doc(hidden)]
    pub const fn __gate<T: TunableValue>(decider: &str, tunable: Tunable<T>) -> Tunable<i64> {
        let decl = tunable.decl();
        match decl.kind {
            TunableKind::Int { min, max } => {
                if min < 1 || max > u16::MAX as i64 {
                    tunable_range_does_not_fit(
                        decider,
                        "gate",
                        decl.name,
                        "is not within 1..=65535: a gate admits 1 to 65535 agents",
                    );
                }
            }
            kind => {
                tunable_of_wrong_kind(decider, "gate", decl.name, kind.name(), "an `int` tunable")
            }
        }
        Tunable::__new(tunable.table(), tunable.index() as u16)
    }

    /// The default of a float tunable, checked by `__every` or
    /// `__cooldown`: what the decider's preconditions hold.
    #[doc(hidden)]
    pub const fn __seconds(tunable: Tunable<f64>) -> f64 {
        f64::from_bits(tunable.decl().default)
    }

    /// The default of a gate's tunable, checked by `__gate`.
    #[doc(hidden)]
    pub const fn __count(tunable: Tunable<i64>) -> u16 {
        tunable.decl().default as i64 as u16
    }

    /// The gate's size in effect for a tick reading `tuned`, or `literal`
    /// when the gate is a number.
    #[inline]
    pub(crate) fn gate_in(&self, tuned: Tuned<'_>, literal: u16) -> u16 {
        match self.gate {
            Some(t) => tuned.read(t).clamp(1, i64::from(u16::MAX)) as u16,
            None => literal,
        }
    }

    /// The global cooldown in effect for a tick reading `tuned`, or
    /// `literal` when it is a number.
    #[inline]
    pub(crate) fn cooldown_in(&self, tuned: Tuned<'_>, literal: f64) -> f64 {
        match self.cooldown {
            Some(t) => tuned.read(t),
            None => literal,
        }
    }

    /// The most the gate can admit: `literal` for a number, the greatest
    /// value of its tunable's range for a tunable. What a restore checks a
    /// saved count against: a gate lowered below the agents inside holds
    /// them all the same.
    #[cfg(feature = "serde")]
    pub(crate) fn gate_most(&self, literal: u16) -> u16 {
        match self.gate.map(|t| t.decl().kind) {
            Some(TunableKind::Int { max, .. }) => max.clamp(1, i64::from(u16::MAX)) as u16,
            _ => literal,
        }
    }
}

/// The tunable `tunable` named by `key` of decider `decider`, checked to
/// be a float tunable of seconds at or above 0, with a finite range.
const fn seconds<T: TunableValue>(decider: &str, key: &str, tunable: Tunable<T>) -> Tunable<f64> {
    let decl = tunable.decl();
    match decl.kind {
        TunableKind::Float { min, max } => {
            // NaN fails every comparison, so it is caught too.
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
            if !(min >= 0.0) || !(max < f64::INFINITY) {
                tunable_range_does_not_fit(
                    decider,
                    key,
                    decl.name,
                    "goes below 0 or has no finite end: it takes seconds at or above 0",
                );
            }
        }
        kind => tunable_of_wrong_kind(
            decider,
            key,
            decl.name,
            kind.name(),
            "a `float` tunable (seconds)",
        ),
    }
    Tunable::__new(tunable.table(), tunable.index() as u16)
}

/// Whether the timer of an item whose `every:` is `every` (a tunable or
/// none), stamped at `last`, still runs at `now` for a tick reading
/// `tuned`. Out of line: only an item with a tuned field gets here, after
/// its plain test found its timer run out.
#[inline(never)]
pub(crate) fn tuned_timer_runs(
    every: Option<Tunable<f64>>,
    tuned: Tuned<'_>,
    last: f64,
    now: f64,
) -> bool {
    match every {
        Some(t) => super::input::period_runs(last, now, tuned.read(t)),
        None => false,
    }
}

/// Checks the tunable `named` (its table and name), which `key` of
/// decider `decider` names, against the table `table` of tree `tree`
/// (`tree!`'s `tunables:` key).
///
/// # Panics
/// (At compile time.) Naming the decider, the key and the tunable, when a
/// decider names a tunable and the tree has no table, or a tunable of
/// another table than the tree's.
pub(crate) const fn check_field(
    tree: &str,
    table: Option<&'static Tunables>,
    decider: &str,
    key: &str,
    named: (&'static Tunables, &'static str),
) {
    let (of, name) = named;
    match table {
        None => tunable_in_tree_without_tunables(tree, decider, key, name),
        Some(table) => {
            if !table.is(of) {
                tunable_of_another_table(tree, decider, key, name, of, table);
            }
        }
    }
}

const fn tunable_of_wrong_kind(
    decider: &str,
    key: &str,
    name: &str,
    kind: &str,
    wanted: &str,
) -> ! {
    let msg = Msg::new()
        .s("decider `")
        .s(decider)
        .s("`: `")
        .s(key)
        .s(": tunable(")
        .s(name)
        .s(")`: tunable `")
        .s(name)
        .s("` is of kind `")
        .s(kind)
        .s("`; `")
        .s(key)
        .s(":` takes ")
        .s(wanted);
    panic!("{}", msg.text())
}

const fn tunable_range_does_not_fit(decider: &str, key: &str, name: &str, why: &str) -> ! {
    let msg = Msg::new()
        .s("decider `")
        .s(decider)
        .s("`: `")
        .s(key)
        .s(": tunable(")
        .s(name)
        .s(")`: the tunable's range ")
        .s(why);
    panic!("{}", msg.text())
}

const fn tunable_in_tree_without_tunables(tree: &str, decider: &str, key: &str, name: &str) -> ! {
    let msg = Msg::new()
        .s("tree `")
        .s(tree)
        .s("` has no `tunables:` key, but its decider `")
        .s(decider)
        .s("` names tunable `")
        .s(name)
        .s("` (`")
        .s(key)
        .s(": tunable(")
        .s(name)
        .s(")`): name the tunables' table in `tree!`");
    panic!("{}", msg.text())
}

const fn tunable_of_another_table(
    tree: &str,
    decider: &str,
    key: &str,
    name: &str,
    of: &Tunables,
    table: &Tunables,
) -> ! {
    let msg = Msg::new()
        .s("decider `")
        .s(decider)
        .s("`: `")
        .s(key)
        .s(": tunable(")
        .s(name)
        .s(")` names a tunable of table `")
        .s(of.name())
        .s("`, not of tree `")
        .s(tree)
        .s("`'s table `")
        .s(table.name())
        .s("`");
    panic!("{}", with_places(msg, of, table).text())
}
