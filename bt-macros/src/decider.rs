//! `decider!`, `group!` and `leaf!`: the key muncher they share, and the
//! `Decider` literal it ends in. The key arms between the `GENERATED`
//! markers are written by `scripts/gen_decider_keys.py`.

/// Emits a `static NAME: Decider<A>`: a behavior decider (`NAME: A =>
/// BEHAVIOR`) or a group decider (`NAME: A, policy [children]`), plain or
/// `full` (with explicit `name:` and `id:`).
///
/// Slots, in order: `[decide] [needs_all] [needs_any] [needs_none]
/// [needs_not_all] [stimuli_all] [stimuli_any] [stimuli_none]
/// [stimuli_not_all] [every] [flags] [behavior_flags] [behavior] [name]
/// [id] [gate] [cooldown] [together] [select]`.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_decider_impl {
    // Entry: a behavior decider, `NAME: Agent => BEHAVIOR`.
    ($k:tt; $mode:tt; $(#[$($m:tt)*])* $vis:vis $name:ident : $A:ty => $b:path $(, $($keys:tt)*)?) => {
        $crate::__bt_decider_impl! {
            @keys $k $mode leaf { {$(#[$($m)*])*} $vis $name [$A] [$b] }
            [[] [] [] [] [] [] [] [] [] [] [] [] [] [] [] [] [] [] []] $($($keys)*)?
        }
    };
    // Entry: a group decider, `NAME: Agent, policy [children]`.
    ($k:tt; $mode:tt; $(#[$($m:tt)*])* $vis:vis $name:ident : $A:ty, $policy:ident [$($c:path),* $(,)?] $(, $($keys:tt)*)?) => {
        $crate::__bt_decider_impl! {
            @keys $k $mode group { {$(#[$($m)*])*} $vis $name [$A] [$policy] [$($c),*] }
            [[] [] [] [] [] [] [] [] [] [] [] [] [] [] [] [] [] [] []] $($($keys)*)?
        }
    };
    // Entry: a reference decider, `NAME: Agent => [ROOT, …, TARGET]`
    // (from `reference!` only).
    ($k:tt; reference; $(#[$($m:tt)*])* $vis:vis $name:ident : $A:ty => [$($t:path),+ $(,)?] $(, $($keys:tt)*)?) => {
        $crate::__bt_decider_impl! {
            @keys $k plain reference { {$(#[$($m)*])*} $vis $name [$A] [$($t),+] }
            [[] [] [] [] [] [] [] [] [] [] [] [] [] [] [] [] [] [] []] $($($keys)*)?
        }
    };
    // Catch-all: a `reference!` head that is not `NAME: Agent => [path]`.
    ($k:tt; reference; $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "malformed reference declaration `", ::core::stringify!($($rest)*),
            "`; expected `[pub] NAME: Agent => [ROOT, …, TARGET], …`, the target's path of deciders from the tree's root"
        ));
    };
    // Middle, a reference: `flags:` and `behavior_flags:` are refused
    // whatever their value (before the key arms, which would take a
    // well-formed one).
    (@keys $k:tt $mode:tt reference { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt flags : $($rest:tt)*) => {
        $crate::__bt_reference_key! { $name; flags }
    };
    (@keys $k:tt $mode:tt reference { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt behavior_flags : $($rest:tt)*) => {
        $crate::__bt_reference_key! { $name; behavior_flags }
    };
    // BEGIN GENERATED KEY ARMS (scripts/gen_decider_keys.py)
    // Middle: `decide:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [[] $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] decide: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [[$v] $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `needs_all:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt [] $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] needs_all: $($f:path)|+ $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 [0u64 $(| ($f).bits() as u64)+] $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `needs_any:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt [] $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] needs_any: $($f:path)|+ $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 [0u64 $(| ($f).bits() as u64)+] $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `needs_none:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt [] $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] needs_none: $($f:path)|+ $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 [0u64 $(| ($f).bits() as u64)+] $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `needs_not_all:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt [] $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] needs_not_all: $($f:path)|+ $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 [0u64 $(| ($f).bits() as u64)+] $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `stimuli_all:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt [] $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] stimuli_all: $($f:path)|+ $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 [0u64 $(| ($f).bits() as u64)+] $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `stimuli_any:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt [] $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] stimuli_any: $($f:path)|+ $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 [0u64 $(| ($f).bits() as u64)+] $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `stimuli_none:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt [] $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] stimuli_none: $($f:path)|+ $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 [0u64 $(| ($f).bits() as u64)+] $s8 $s9 $s10 $s11 $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `stimuli_not_all:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt [] $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] stimuli_not_all: $($f:path)|+ $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 [0u64 $(| ($f).bits() as u64)+] $s9 $s10 $s11 $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `every: tunable(…)`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt [] $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] every: tunable($t:path) $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 [@tuned $t] $s10 $s11 $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `every:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt [] $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] every: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 [($v) as f64] $s10 $s11 $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `flags:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt [] $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] flags: $($f:ident)|+ $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 [0u8 $(| $k::DeciderFlags::$f.bits())+] $s11 $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `behavior_flags:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt [] $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] behavior_flags: $($f:path)|+ $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 [0u64 $(| ($f).bits() as u64)+] $s12 $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `behavior:`.
    (@keys $k:tt $mode:tt group $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt [] $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] behavior: $b:path $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode group $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 [$b] $s13 $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `name:`.
    (@keys $k:tt full $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt [] $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt] name: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k full $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 [$v] $s14 $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `id:`.
    (@keys $k:tt full $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt [] $s15:tt $s16:tt $s17:tt $s18:tt] id: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k full $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 [$v] $s15 $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `gate: tunable(…)`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt [] $s16:tt $s17:tt $s18:tt] gate: tunable($t:path) $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 [@tuned $t] $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `gate:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt [] $s16:tt $s17:tt $s18:tt] gate: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 [($v) as u16] $s16 $s17 $s18] $($($rest)*)? }
    };
    // Middle: `cooldown: tunable(…)`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt [] $s17:tt $s18:tt] cooldown: tunable($t:path) $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 $s15 [@tuned $t] $s17 $s18] $($($rest)*)? }
    };
    // Middle: `cooldown:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt [] $s17:tt $s18:tt] cooldown: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 $s15 [($v) as f64] $s17 $s18] $($($rest)*)? }
    };
    // Middle: `together:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt [] $s18:tt] together: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 $s15 $s16 [($v) as u8] $s18] $($($rest)*)? }
    };
    // Middle: `select:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt $s15:tt $s16:tt $s17:tt []] select: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 $s15 $s16 $s17 [$v]] $($($rest)*)? }
    };
    // END GENERATED KEY ARMS
    // Middle: `when:`, a yes/no `decide` (`true` accepts with 1.0); it
    // fills the `decide` slot, so the two exclude each other.
    (@keys $k:tt $mode:tt $kind:tt { $attrs:tt $vis:vis $name:ident [$A:ty] $($h:tt)* } [[] $($s:tt)*] when: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind { $attrs $vis $name [$A] $($h)* } [[$k::__private::when::<$A, _>($v)] $($s)*] $($($rest)*)? }
    };
    // Middle, compact leaf form (`(inline [behavior keys])`, see
    // `__bt_leaf_impl`): the behavior's own keys are set aside, in order,
    // for the behavior the exit arm declares.
    (@keys $k:tt $mode:tt (inline [$($b:tt)*]) $head:tt $slots:tt memory: $t:ty $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode (inline [$($b)* memory: $t,]) $head $slots $($($rest)*)? }
    };
    (@keys $k:tt $mode:tt (inline [$($b:tt)*]) $head:tt $slots:tt dblock: $t:ty $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode (inline [$($b)* dblock: $t,]) $head $slots $($($rest)*)? }
    };
    (@keys $k:tt $mode:tt (inline [$($b:tt)*]) $head:tt $slots:tt activate: $f:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode (inline [$($b)* activate: $f,]) $head $slots $($($rest)*)? }
    };
    (@keys $k:tt $mode:tt (inline [$($b:tt)*]) $head:tt $slots:tt tick: $f:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode (inline [$($b)* tick: $f,]) $head $slots $($($rest)*)? }
    };
    (@keys $k:tt $mode:tt (inline [$($b:tt)*]) $head:tt $slots:tt deactivate: $f:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode (inline [$($b)* deactivate: $f,]) $head $slots $($($rest)*)? }
    };
    (@keys $k:tt $mode:tt (inline [$($b:tt)*]) $head:tt $slots:tt launch: $f:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode (inline [$($b)* launch: $f,]) $head $slots $($($rest)*)? }
    };
    (@keys $k:tt $mode:tt (inline [$($b:tt)*]) $head:tt $slots:tt tunables: $t:path $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode (inline [$($b)* tunables: $t,]) $head $slots $($($rest)*)? }
    };
    // Exit, full form without `name:` or `id:`.
    (@keys $k:tt full $kind:tt { $attrs:tt $vis:vis $name:ident $($h:tt)* }
        [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt [] $s14:tt $s15:tt $s16:tt $s17:tt $s18:tt]) => {
        ::core::compile_error!(::core::concat!(
            "decider `", ::core::stringify!($name), "`: the full form sets every field; `name:` is missing"
        ));
    };
    (@keys $k:tt full $kind:tt { $attrs:tt $vis:vis $name:ident $($h:tt)* }
        [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt [] $s15:tt $s16:tt $s17:tt $s18:tt]) => {
        ::core::compile_error!(::core::concat!(
            "decider `", ::core::stringify!($name), "`: the full form sets every field; `id:` is missing"
        ));
    };
    // Exit: a behavior decider.
    (@keys $k:tt $mode:tt leaf { {$($attrs:tt)*} $vis:vis $name:ident [$A:ty] [$b:path] }
        [[$($decide:expr)?] $na:tt $nany:tt $nn:tt $nna:tt $sa:tt $sany:tt $sn:tt $sna:tt
         $every:tt $flags:tt $bflags:tt [] $nm:tt $id:tt $gate:tt $cool:tt $tog:tt [$($select:expr)?]]) => {
        $($attrs)*
        $vis static $name: $k::Decider<$A> = {
            $(
                #[allow(unused_qualifications, clippy::all, clippy::pedantic)]
                fn __bt_decide(agent: &$A, raw: $k::__private::DecideRaw<'_>) -> f32 {
                    $k::__private::decide_for(&$b, agent, raw, $decide)
                }
            )?
            $(
                #[allow(unused_qualifications, clippy::all, clippy::pedantic)]
                fn __bt_select(agent: &$A) -> ::core::option::Option<usize> {
                    $k::__private::call_select(agent, $select)
                }
            )?
            $crate::__bt_decider_literal! {
                $k; $A; $name;
                kind: $k::DeciderKind::Behavior($k::Behavior::__erased(&$b)),
                decide: $crate::__bt_or!([$({ let _ = ::core::stringify!($decide); ::core::option::Option::Some(__bt_decide as $k::__private::DecideFn<$A>) })?] ::core::option::Option::None),
                select: $crate::__bt_or!([$({ let _ = ::core::stringify!($select); ::core::option::Option::Some(__bt_select as $k::SelectFn<$A>) })?] ::core::option::Option::None),
                slots: [$na $nany $nn $nna $sa $sany $sn $sna $every $flags $bflags $nm $id $gate $cool $tog]
            }
        };
    };
    // Exit: a compact leaf: the behavior decider, with its behavior declared
    // inside its initializer under the same name (which shadows the
    // decider's there, so `$b` names the behavior).
    (@keys $k:tt $mode:tt (inline [$($bkeys:tt)*]) { {$($attrs:tt)*} $vis:vis $name:ident [$A:ty] [$b:path] }
        [[$($decide:expr)?] $na:tt $nany:tt $nn:tt $nna:tt $sa:tt $sany:tt $sn:tt $sna:tt
         $every:tt $flags:tt $bflags:tt [] $nm:tt $id:tt $gate:tt $cool:tt $tog:tt [$($select:expr)?]]) => {
        $($attrs)*
        $vis static $name: $k::Decider<$A> = {
            $crate::__bt_behavior_impl! { $k; $name: $A, $($bkeys)* }
            $(
                #[allow(unused_qualifications, clippy::all, clippy::pedantic)]
                fn __bt_decide(agent: &$A, raw: $k::__private::DecideRaw<'_>) -> f32 {
                    $k::__private::decide_for(&$b, agent, raw, $decide)
                }
            )?
            $(
                #[allow(unused_qualifications, clippy::all, clippy::pedantic)]
                fn __bt_select(agent: &$A) -> ::core::option::Option<usize> {
                    $k::__private::call_select(agent, $select)
                }
            )?
            $crate::__bt_decider_literal! {
                $k; $A; $name;
                kind: $k::DeciderKind::Behavior($k::Behavior::__erased(&$b)),
                decide: $crate::__bt_or!([$({ let _ = ::core::stringify!($decide); ::core::option::Option::Some(__bt_decide as $k::__private::DecideFn<$A>) })?] ::core::option::Option::None),
                select: $crate::__bt_or!([$({ let _ = ::core::stringify!($select); ::core::option::Option::Some(__bt_select as $k::SelectFn<$A>) })?] ::core::option::Option::None),
                slots: [$na $nany $nn $nna $sa $sany $sn $sna $every $flags $bflags $nm $id $gate $cool $tog]
            }
        };
    };
    // Exit: a group decider.
    (@keys $k:tt $mode:tt group { {$($attrs:tt)*} $vis:vis $name:ident [$A:ty] [$policy:tt] [$($c:path),*] }
        [[$($decide:expr)?] $na:tt $nany:tt $nn:tt $nna:tt $sa:tt $sany:tt $sn:tt $sna:tt
         $every:tt $flags:tt $bflags:tt $gb:tt $nm:tt $id:tt $gate:tt $cool:tt $tog:tt [$($select:expr)?]]) => {
        $($attrs)*
        $vis static $name: $k::Decider<$A> = {
            #[allow(dead_code, clippy::all, clippy::pedantic)]
            fn __bt_children_are_deciders() {
                $( $k::__private::is_decider::<$A, _>(&$c); )*
            }
            $(
                #[allow(unused_qualifications, clippy::all, clippy::pedantic)]
                fn __bt_decide(agent: &$A, raw: $k::__private::DecideRaw<'_>) -> f32 {
                    $crate::__bt_group_decide!($k; agent; raw; $gb; $decide)
                }
            )?
            $(
                #[allow(unused_qualifications, clippy::all, clippy::pedantic)]
                fn __bt_select(agent: &$A) -> ::core::option::Option<usize> {
                    $k::__private::call_select(agent, $select)
                }
            )?
            $crate::__bt_decider_literal! {
                $k; $A; $name;
                kind: $k::DeciderKind::Group {
                    policy: $crate::__bt_policy!($k; $name; $policy),
                    children: &[$(&$c),*],
                    behavior: $crate::__bt_group_behavior!($k; $gb),
                },
                decide: $crate::__bt_or!([$({ let _ = ::core::stringify!($decide); ::core::option::Option::Some(__bt_decide as $k::__private::DecideFn<$A>) })?] ::core::option::Option::None),
                select: $crate::__bt_or!([$({ let _ = ::core::stringify!($select); ::core::option::Option::Some(__bt_select as $k::SelectFn<$A>) })?] ::core::option::Option::None),
                slots: [$na $nany $nn $nna $sa $sany $sn $sna $every $flags $bflags $nm $id $gate $cool $tog]
            }
        };
        const _: () = $k::__private::check_unique_children::<$A>($name.name(), $name.children());
    };
    // Exit: a reference decider.
    (@keys $k:tt $mode:tt reference { {$($attrs:tt)*} $vis:vis $name:ident [$A:ty] [$($t:path),+] }
        [[$($decide:expr)?] $na:tt $nany:tt $nn:tt $nna:tt $sa:tt $sany:tt $sn:tt $sna:tt
         $every:tt $flags:tt $bflags:tt [] $nm:tt $id:tt $gate:tt $cool:tt $tog:tt []]) => {
        $($attrs)*
        $vis static $name: $k::Decider<$A> = {
            #[allow(dead_code, clippy::all, clippy::pedantic)]
            fn __bt_target_is_deciders() {
                $( $k::__private::is_decider::<$A, _>(&$t); )+
            }
            $(
                #[allow(unused_qualifications, clippy::all, clippy::pedantic)]
                fn __bt_decide(agent: &$A, raw: $k::__private::DecideRaw<'_>) -> f32 {
                    $k::__private::decide_plain(agent, raw, $decide)
                }
            )?
            $crate::__bt_decider_literal! {
                $k; $A; $name;
                kind: $k::DeciderKind::Reference { target: &[$(&$t),+] },
                decide: $crate::__bt_or!([$({ let _ = ::core::stringify!($decide); ::core::option::Option::Some(__bt_decide as $k::__private::DecideFn<$A>) })?] ::core::option::Option::None),
                select: ::core::option::Option::None,
                slots: [$na $nany $nn $nna $sa $sany $sn $sna $every $flags $bflags $nm $id $gate $cool $tog]
            }
        };
    };
    // Catch-all: a key a reference does not take, unknown or given twice.
    (@keys $k:tt $mode:tt reference { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt $key:ident : $($rest:tt)*) => {
        $crate::__bt_reference_key! { $name; $key }
    };
    (@keys $k:tt $mode:tt reference { $attrs:tt $vis:vis $name:ident $($h:tt)* } [$($s:tt)*]) => {
        ::core::compile_error!(::core::concat!(
            "reference `", ::core::stringify!($name),
            "`: a reference takes no `select:` (it picks no child; it jumps to its target)"
        ));
    };
    // Catch-all: `behavior:` on a behavior decider.
    (@keys $k:tt $mode:tt leaf { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt behavior : $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "decider `", ::core::stringify!($name),
            "`: `behavior:` is for group deciders; a behavior decider names its behavior after `=>`"
        ));
    };
    // Catch-all: `behavior:` in a compact leaf.
    (@keys $k:tt $mode:tt (inline $b:tt) { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt behavior : $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "leaf `", ::core::stringify!($name),
            "`: `behavior:` is for group deciders; a leaf gives its behavior's keys (`tick:`, `activate:`, …) itself"
        ));
    };
    // Catch-all: a key that is unknown or given twice, in a compact leaf.
    (@keys $k:tt plain (inline $b:tt) { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt $key:ident : $($rest:tt)*) => {
        $crate::__bt_bad_key! {
            decider $name; $key;
            memory dblock activate tick deactivate launch tunables decide when needs_all
            needs_any needs_none needs_not_all stimuli_all stimuli_any stimuli_none
            stimuli_not_all every behavior_flags gate cooldown together
        }
    };
    // Catch-all: `name:` or `id:` outside the full form.
    (@keys $k:tt plain $kind:tt { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt name : $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "decider `", ::core::stringify!($name), "`: `name:` is set only in the `full` form"
        ));
    };
    (@keys $k:tt plain $kind:tt { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt id : $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "decider `", ::core::stringify!($name), "`: `id:` is set only in the `full` form"
        ));
    };
    // Catch-all: a key that is unknown or given twice.
    (@keys $k:tt $mode:tt $kind:tt { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt $key:ident : $($rest:tt)*) => {
        $crate::__bt_bad_key! {
            decider $name; $key;
            decide when needs_all needs_any needs_none needs_not_all stimuli_all stimuli_any
            stimuli_none stimuli_not_all every flags behavior_flags behavior name id
            gate cooldown together select
        }
    };
    // Catch-all: anything else in the key list.
    (@keys $k:tt $mode:tt $kind:tt { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt $($rest:tt)+) => {
        ::core::compile_error!(::core::concat!(
            "decider `", ::core::stringify!($name), "`: malformed declaration near `",
            ::core::stringify!($($rest)+), "`; expected `key: value` pairs separated by commas"
        ));
    };
    // Catch-all: a head that is neither form.
    ($k:tt; $mode:tt; $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "malformed decider declaration `", ::core::stringify!($($rest)*),
            "`; expected `[pub] NAME: Agent => BEHAVIOR, …` or `[pub] NAME: Agent, policy [CHILD, …], …`"
        ));
    };
}

/// Emits a compact leaf: a behavior decider and the behavior it runs,
/// both named `NAME`, from one key list. It hands the keys to
/// `__bt_decider_impl` with the kind `(inline [])`, whose extra middle arms
/// set the behavior's keys aside and whose exit arm declares the behavior
/// inside the decider's initializer.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_leaf_impl {
    // Entry: `NAME: Agent` then the keys of both.
    ($k:tt; $(#[$($m:tt)*])* $vis:vis $name:ident : $A:ty $(, $($keys:tt)*)?) => {
        $crate::__bt_decider_impl! {
            @keys $k plain (inline []) { {$(#[$($m)*])*} $vis $name [$A] [$name] }
            [[] [] [] [] [] [] [] [] [] [] [] [] [] [] [] [] [] [] []] $($($keys)*)?
        }
    };
    // Catch-all: a head that is not `NAME: Agent`.
    ($k:tt; $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "malformed leaf declaration `", ::core::stringify!($($rest)*),
            "`; expected `[pub] NAME: AgentType, key: value, …`"
        ));
    };
}

/// Emits the `Decider` struct literal from the filled slots.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_decider_literal {
    ($k:tt; $A:ty; $name:ident; kind: $kind:expr, decide: $decide:expr, select: $select:expr,
     slots: [$na:tt $nany:tt $nn:tt $nna:tt $sa:tt $sany:tt $sn:tt $sna:tt $every:tt $flags:tt $bflags:tt $nm:tt $id:tt $gate:tt $cool:tt $tog:tt]) => {
        $k::Decider {
            name: $crate::__bt_or!($nm ::core::stringify!($name)),
            id: $crate::__bt_or!($id $k::__private::fnv1a(::core::module_path!(), ::core::stringify!($name))),
            kind: $kind,
            decide: $decide,
            pre: $k::Preconditions {
                decision: $k::FlagTest {
                    all: $crate::__bt_or!($na 0),
                    any: $crate::__bt_or!($nany 0),
                    none: $crate::__bt_or!($nn 0),
                    not_all: $crate::__bt_or!($nna 0),
                },
                stimuli: $k::FlagTest {
                    all: $crate::__bt_or!($sa 0),
                    any: $crate::__bt_or!($sany 0),
                    none: $crate::__bt_or!($sn 0),
                    not_all: $crate::__bt_or!($sna 0),
                },
                every: $crate::__bt_tuned!(value $k; ($crate::__bt_or!($nm ::core::stringify!($name))); every; $every; 0.0),
                sync: $k::SyncChecks {
                    gate: $crate::__bt_tuned!(value $k; ($crate::__bt_or!($nm ::core::stringify!($name))); gate; $gate; 0),
                    cooldown: $crate::__bt_tuned!(value $k; ($crate::__bt_or!($nm ::core::stringify!($name))); cooldown; $cool; 0.0),
                    together: $crate::__bt_or!($tog 0),
                },
            },
            flags: $k::DeciderFlags::from_bits_retain($crate::__bt_or!($flags 0)),
            behavior_flags: $crate::__bt_or!($bflags 0),
            select: $select,
            tuned: $k::TunedFields {
                every: $crate::__bt_tuned!(field $k; ($crate::__bt_or!($nm ::core::stringify!($name))); every; $every),
                gate: $crate::__bt_tuned!(field $k; ($crate::__bt_or!($nm ::core::stringify!($name))); gate; $gate),
                cooldown: $crate::__bt_tuned!(field $k; ($crate::__bt_or!($nm ::core::stringify!($name))); cooldown; $cool),
            },
        }
    };
}

/// Emits one part of a declarative field (`every`, `gate`, `cooldown`)
/// from its slot: `value`, the number the preconditions hold (for a slot
/// `[@tuned X]`, written by `key: tunable(X)`, the tunable's default);
/// `field`, the tunable the slot names, or none. Naming a tunable checks
/// its kind and range at compile time, in the decider's `static`.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_tuned {
    (value $k:tt; $d:expr; every; [@tuned $t:path]; $none:expr) => {
        $k::TunedFields::__seconds($k::TunedFields::__every($d, $t))
    };
    (value $k:tt; $d:expr; cooldown; [@tuned $t:path]; $none:expr) => {
        $k::TunedFields::__seconds($k::TunedFields::__cooldown($d, $t))
    };
    (value $k:tt; $d:expr; gate; [@tuned $t:path]; $none:expr) => {
        $k::TunedFields::__count($k::TunedFields::__gate($d, $t))
    };
    (value $k:tt; $d:expr; $key:ident; $slot:tt; $none:expr) => {
        $crate::__bt_or!($slot $none)
    };
    (field $k:tt; $d:expr; every; [@tuned $t:path]) => {
        ::core::option::Option::Some($k::TunedFields::__every($d, $t))
    };
    (field $k:tt; $d:expr; cooldown; [@tuned $t:path]) => {
        ::core::option::Option::Some($k::TunedFields::__cooldown($d, $t))
    };
    (field $k:tt; $d:expr; gate; [@tuned $t:path]) => {
        ::core::option::Option::Some($k::TunedFields::__gate($d, $t))
    };
    (field $k:tt; $d:expr; $key:ident; $slot:tt) => {
        ::core::option::Option::None
    };
}
