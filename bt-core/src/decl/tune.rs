//! Tunables: named, typed values declared beside a tree ([`tunables!`]),
//! read by its closures through the tick's context, and changed while the
//! game runs, without a rebuild.
//!
//! [`tunables!`]: crate::tunables

use alloc::boxed::Box;
use core::fmt;
use core::marker::PhantomData;
use core::sync::atomic::AtomicBool;
// 64-bit atomics where the target has them, else portable-atomic's, as
// for the crowd's other counters.
#[cfg(target_has_atomic = "64")]
use core::sync::atomic::AtomicU64;
#[cfg(not(target_has_atomic = "64"))]
use portable_atomic::AtomicU64;

use super::msg::Msg;
use crate::raw::{TunedDefaults, TunedHead, TunedSlots};

pub(crate) mod value;

pub(crate) use value::checked_bits;
pub use value::{TuneError, TuneValue};

/// What a tunable holds, and the values it may take.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum TunableKind {
    /// A number, read as `f64`, from `min` to `max`.
    Float {
        /// The least value.
        min: f64,
        /// The greatest value.
        max: f64,
    },
    /// A whole number, read as `i64`, from `min` to `max`.
    Int {
        /// The least value.
        min: i64,
        /// The greatest value.
        max: i64,
    },
    /// Yes or no, read as `bool`.
    Bool,
    /// One of a list of names, read as the `enum` that
    /// [`tunables!`](crate::tunables) declares for it, held as its place
    /// in `names`.
    Choice {
        /// The names, in the order declared (the enum's variants).
        names: &'static [&'static str],
    },
}

impl TunableKind {
    /// The kind's name, as errors give it: `float`, `int`, `bool` or
    /// `choice`.
    pub const fn name(self) -> &'static str {
        match self {
            TunableKind::Float { .. } => "float",
            TunableKind::Int { .. } => "int",
            TunableKind::Bool => "bool",
            TunableKind::Choice { .. } => "choice",
        }
    }

    /// Whether the value of bits `bits` is one this kind may take.
    pub const fn allows(self, bits: u64) -> bool {
        match self {
            TunableKind::Float { min, max } => {
                let v = f64::from_bits(bits);
                v >= min && v <= max
            }
            TunableKind::Int { min, max } => {
                let v = bits as i64;
                v >= min && v <= max
            }
            TunableKind::Bool => bits <= 1,
            TunableKind::Choice { names } => bits < names.len() as u64,
        }
    }
}

/// One tunable as [`tunables!`](crate::tunables) declares it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct TunableDecl {
    /// Its name, as the declaration spells it (`GRENADE_COOLDOWN`).
    pub name: &'static str,
    /// Its doc comment, trimmed of the `///`.
    pub doc: &'static str,
    /// What it holds and its range.
    pub kind: TunableKind,
    /// Its default value, as bits ([`TunableValue::to_bits`]).
    pub default: u64,
}

impl TunableDecl {
    /// A float tunable.
    pub const fn float(
        name: &'static str,
        doc: &'static str,
        default: f64,
        min: f64,
        max: f64,
    ) -> Self {
        TunableDecl {
            name,
            doc,
            kind: TunableKind::Float { min, max },
            default: default.to_bits(),
        }
    }

    /// An int tunable.
    pub const fn int(
        name: &'static str,
        doc: &'static str,
        default: i64,
        min: i64,
        max: i64,
    ) -> Self {
        TunableDecl {
            name,
            doc,
            kind: TunableKind::Int { min, max },
            default: default as u64,
        }
    }

    /// A bool tunable.
    pub const fn bool(name: &'static str, doc: &'static str, default: bool) -> Self {
        TunableDecl {
            name,
            doc,
            kind: TunableKind::Bool,
            default: default as u64,
        }
    }

    /// A choice tunable: one of `names`, `default` at first.
    ///
    /// # Panics
    /// (At compile time, in a `static`.) On an empty list, a name given
    /// twice, or a default that is not one of the names, naming the
    /// tunable.
    pub const fn choice(
        name: &'static str,
        doc: &'static str,
        default: &'static str,
        names: &'static [&'static str],
    ) -> Self {
        if names.is_empty() {
            tunable_choice_empty(name);
        }
        let mut at = names.len();
        let mut i = 0;
        while i < names.len() {
            if same(names[i], default) {
                at = i;
            }
            let mut j = 0;
            while j < i {
                if same(names[j], names[i]) {
                    tunable_choice_twice(name, names[i]);
                }
                j += 1;
            }
            i += 1;
        }
        if at == names.len() {
            tunable_choice_default_unknown(name, default, names);
        }
        TunableDecl {
            name,
            doc,
            kind: TunableKind::Choice { names },
            default: at as u64,
        }
    }
}

/// The tunables of a tree, as [`tunables!`](crate::tunables) declares them:
/// the static that `tree!`'s `tunables:` key names.
pub struct Tunables {
    name: &'static str,
    decls: &'static [TunableDecl],
    /// The module the table is declared in (`tunables!` sets it).
    module: &'static str,
    /// Where the table is declared, `file:line:column` (`tunables!` sets
    /// it): two tables of one name in one module (one in a function's
    /// body) are told apart by it.
    place: &'static str,
    /// The block of the defaults a context typed by the table reads
    /// outside a crowd's tick (`tunables!` sets it).
    defaults: Option<&'static TunedDefaults>,
}

impl fmt::Debug for Tunables {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tunables")
            .field("name", &self.name)
            .field("module", &self.module)
            .field("place", &self.place)
            .field("decls", &self.decls)
            .finish_non_exhaustive()
    }
}

impl Tunables {
    /// The table `name` of `decls`, checked at compile time: names given
    /// once, ranges that hold something, defaults within them. A table
    /// made here has no block of defaults, which [`tunables!`] declares
    /// beside its table: a context typed by it reads its tunables as an
    /// untyped context does, with a check.
    ///
    /// [`tunables!`]: crate::tunables
    ///
    /// # Panics
    /// (At compile time, in a `static`.) On a name given twice, a range
    /// whose least value is above its greatest or not a number, or a
    /// default outside its range, naming the tunable.
    pub const fn new(name: &'static str, decls: &'static [TunableDecl]) -> Self {
        let mut i = 0;
        while i < decls.len() {
            let d = &decls[i];
            let range_holds = match d.kind {
                TunableKind::Float { min, max } => min <= max,
                TunableKind::Int { min, max } => min <= max,
                TunableKind::Bool => true,
                TunableKind::Choice { names } => !names.is_empty(),
            };
            if !range_holds {
                tunable_range_empty(name, d.name);
            }
            if !d.kind.allows(d.default) {
                tunable_default_outside(name, d.name);
            }
            let mut j = 0;
            while j < i {
                if same(decls[j].name, d.name) {
                    tunable_twice(name, d.name);
                }
                j += 1;
            }
            i += 1;
        }
        assert!(
            decls.len() <= u16::MAX as usize,
            "tunables: more than 65 535 of them"
        );
        Tunables {
            name,
            decls,
            module: "",
            place: "",
            defaults: None,
        }
    }

    /// The table, whose defaults are in the block `defaults`
    /// (`tunables!` declares it with [`TunedDefaults::of`] of the same
    /// declarations).
    #[doc(hidden)]
    pub const fn __defaults(mut self, defaults: &'static TunedDefaults) -> Self {
        self.defaults = Some(defaults);
        self
    }

    /// The values a context typed by this table reads outside a crowd's
    /// tick: its defaults.
    #[inline(always)]
    pub(crate) const fn default_head(&'static self) -> TunedHead<'static> {
        match self.defaults {
            Some(defaults) => TunedHead::defaults(defaults),
            None => TunedHead::NONE,
        }
    }

    /// The table, declared in module `module` (`tunables!` gives its
    /// `module_path!()`): what tells two tables of one name apart at
    /// compile time.
    #[doc(hidden)]
    pub const fn __in(mut self, module: &'static str) -> Self {
        self.module = module;
        self
    }

    /// The table, declared at `place` (`tunables!` gives its `file:line:
    /// column`).
    #[doc(hidden)]
    pub const fn __at(mut self, place: &'static str) -> Self {
        self.place = place;
        self
    }

    /// Whether `other` is this table, as far as a `const fn` can tell:
    /// the same name, declared in the same module at the same place, with
    /// as many tunables.
    pub(crate) const fn is(&self, other: &Tunables) -> bool {
        same(self.name, other.name)
            && same(self.module, other.module)
            && same(self.place, other.place)
            && self.decls.len() == other.decls.len()
    }

    /// Where the table is declared (`file:line:column`; empty for a table
    /// made by hand).
    pub(crate) const fn place(&self) -> &'static str {
        self.place
    }

    /// Whether the table has its block of defaults (`tunables!` declares
    /// one; a table made by hand with [`Tunables::new`] has none).
    #[inline(always)]
    pub(crate) const fn has_defaults(&self) -> bool {
        self.defaults.is_some()
    }

    /// The table's name (the static's).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Every tunable, in the order declared.
    pub const fn decls(&self) -> &'static [TunableDecl] {
        self.decls
    }

    /// How many tunables the table has.
    pub const fn len(&self) -> usize {
        self.decls.len()
    }

    /// Whether the table has none.
    pub const fn is_empty(&self) -> bool {
        self.decls.is_empty()
    }

    /// The place of the tunable named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.decls.iter().position(|d| d.name == name)
    }
}

/// `msg` followed by where tables `of` and `table` are declared when they
/// have one name (two tables of one name in one module, one in a
/// function's body): the end of an error that tells them apart.
pub(crate) const fn with_places(msg: Msg, of: &Tunables, table: &Tunables) -> Msg {
    if same(of.name, table.name) {
        msg.s(" (declared at ")
            .s(of.place)
            .s(" and ")
            .s(table.place)
            .s(")")
    } else {
        msg
    }
}

/// Whether two strings are equal, in a `const fn`.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The seal of [`TunableValue`]: implemented for `f64`, `i64`, `bool`, and
/// by [`tunables!`](crate::tunables) for the enum of each choice it
/// declares (the macro's own path to it is hidden), so that no other type
/// is read as a tunable.
pub mod sealed {
    /// Implemented by the types a tunable is read as. Not for use outside
    /// the crate's macros.
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for i64 {}
    impl Sealed for bool {}
}

/// A type a tunable is read as: `f64`, `i64`, `bool`, or the `enum` that
/// [`tunables!`](crate::tunables) declares for a choice.
pub trait TunableValue: Copy + fmt::Debug + sealed::Sealed + 'static {
    /// The value of bits `bits`.
    fn from_bits(bits: u64) -> Self;
    /// The value's bits.
    fn to_bits(self) -> u64;
    /// The value, as given by name.
    fn tune_value(self) -> TuneValue;
}

impl TunableValue for f64 {
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn tune_value(self) -> TuneValue {
        TuneValue::Float(self)
    }
}

impl TunableValue for i64 {
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits as i64
    }
    fn to_bits(self) -> u64 {
        self as u64
    }
    fn tune_value(self) -> TuneValue {
        TuneValue::Int(self)
    }
}

impl TunableValue for bool {
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits != 0
    }
    fn to_bits(self) -> u64 {
        u64::from(self)
    }
    fn tune_value(self) -> TuneValue {
        TuneValue::Bool(self)
    }
}

/// For [`tunables!`](crate::tunables)' choice enums: the place among
/// `len` names of bits `bits`, which a checked value always is (the last
/// otherwise, so that reading never panics).
#[inline(always)]
pub const fn choice_at(bits: u64, len: usize) -> usize {
    if bits < len as u64 {
        bits as usize
    } else {
        len.saturating_sub(1)
    }
}

/// For [`tunables!`](crate::tunables)' choice enums: the choice `name`,
/// as given by name.
pub const fn choice_value(name: &'static str) -> TuneValue {
    TuneValue::Name(alloc::borrow::Cow::Borrowed(name))
}

/// One tunable of a table, typed: what closures read
/// (`cx.tuned(GRENADE_COOLDOWN)`) and code changes. Made by
/// [`tunables!`](crate::tunables), one `const` per tunable.
pub struct Tunable<T: TunableValue> {
    table: &'static Tunables,
    index: u16,
    _value: PhantomData<fn() -> T>,
}

impl<T: TunableValue> Clone for Tunable<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: TunableValue> Copy for Tunable<T> {}

impl<T: TunableValue> fmt::Debug for Tunable<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{}", self.table.name, self.name())
    }
}

impl<T: TunableValue> Tunable<T> {
    #[doc(hidden)]
    pub const fn __new(table: &'static Tunables, index: u16) -> Self {
        Tunable {
            table,
            index,
            _value: PhantomData,
        }
    }

    /// Its table.
    pub const fn table(self) -> &'static Tunables {
        self.table
    }

    /// Its place in its table.
    pub const fn index(self) -> usize {
        self.index as usize
    }

    /// Its declaration.
    pub const fn decl(self) -> &'static TunableDecl {
        &self.table.decls[self.index as usize]
    }

    /// Its name.
    pub const fn name(self) -> &'static str {
        self.decl().name
    }

    /// Its default value.
    pub fn default_value(self) -> T {
        T::from_bits(self.decl().default)
    }
}

const fn tunable_range_empty(table: &str, name: &str) -> ! {
    let msg = Msg::new()
        .s("tunables `")
        .s(table)
        .s("`: tunable `")
        .s(name)
        .s("` has a range with nothing in it (its least value is above its greatest, or not a number)");
    panic!("{}", msg.text())
}

const fn tunable_default_outside(table: &str, name: &str) -> ! {
    let msg = Msg::new()
        .s("tunables `")
        .s(table)
        .s("`: the default of tunable `")
        .s(name)
        .s("` is outside its range");
    panic!("{}", msg.text())
}

const fn tunable_choice_empty(name: &str) -> ! {
    let msg = Msg::new()
        .s("tunable `")
        .s(name)
        .s("` is a choice with no names");
    panic!("{}", msg.text())
}

const fn tunable_choice_twice(name: &str, choice: &str) -> ! {
    let msg = Msg::new()
        .s("tunable `")
        .s(name)
        .s("` names the choice `")
        .s(choice)
        .s("` twice");
    panic!("{}", msg.text())
}

const fn tunable_choice_default_unknown(name: &str, default: &str, names: &[&str]) -> ! {
    let mut msg = Msg::new()
        .s("tunable `")
        .s(name)
        .s("`: its default `")
        .s(default)
        .s("` is not one of its names: ");
    let mut i = 0;
    while i < names.len() {
        if i > 0 {
            msg = msg.s(", ");
        }
        msg = msg.s("`").s(names[i]).s("`");
        i += 1;
    }
    panic!("{}", msg.text())
}

const fn tunable_twice(table: &str, name: &str) -> ! {
    let msg = Msg::new()
        .s("tunables `")
        .s(table)
        .s("`: tunable `")
        .s(name)
        .s("` is declared twice");
    panic!("{}", msg.text())
}

/// The values of a table of tunables.
pub(crate) struct TunedValues {
    pub(crate) table: Option<&'static Tunables>,
    /// The values in effect, as bits, after a slot that names the table.
    pub(crate) current: TunedSlots,
    /// The values staged, as bits, where `pending` is set.
    pub(crate) staged: Box<[AtomicU64]>,
    pub(crate) pending: Box<[AtomicBool]>,
    /// Some value is staged.
    pub(crate) dirty: AtomicBool,
    /// Held while staged values are put in effect, and while a set of
    /// values staged together is staged, so that a tick puts the whole
    /// set in effect or none of it.
    pub(crate) lock: AtomicBool,
    /// Values changed so far (staged changes applied).
    pub(crate) changes: AtomicU64,
}

impl TunedValues {
    /// The defaults of `table` in effect, nothing staged.
    pub(crate) fn new(table: Option<&'static Tunables>) -> Self {
        let decls = table.map_or(&[][..], Tunables::decls);
        TunedValues {
            table,
            current: TunedSlots::new(table, |i| decls[i].default),
            staged: decls.iter().map(|d| AtomicU64::new(d.default)).collect(),
            pending: decls.iter().map(|_| AtomicBool::new(false)).collect(),
            dirty: AtomicBool::new(false),
            lock: AtomicBool::new(false),
            changes: AtomicU64::new(0),
        }
    }

    /// The values in effect, as bits, in the table's order.
    #[inline(always)]
    pub(crate) fn current(&self) -> &[AtomicU64] {
        self.current.values()
    }

    /// The table, if the tree has one.
    #[inline(always)]
    pub(crate) fn table(&self) -> Option<&'static Tunables> {
        self.table
    }
}
