//! The `macro_rules!` implementation of bt-core's declaration DSL.
//!
//! Use the macros through `bt-core` (`bt_core::behavior!`, `decider!`,
//! `group!`, `tree!`): each of them forwards its own `$crate` as the first
//! token (`$k`) to an implementation macro here, which writes every path as
//! `$k::…`. That way the expansions name bt-core correctly even though this
//! crate cannot depend on it, and even when a user renames the dependency.
//!
//! The implementation macros are token munchers: an entry arm splits the
//! head (`NAME: Agent …`) from the `key: value` list and starts with every
//! slot empty (`[]`), one middle arm per key fills its slot, and the exit
//! arm emits the `static`. A key whose slot is already full, an unknown key
//! or a malformed list falls through to catch-all arms that say what is
//! wrong.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// Emits `$($v)+` if the bracket holds tokens, else the default after it.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_or {
    ([] $($default:tt)*) => { $($default)* };
    ([$($v:tt)+] $($default:tt)*) => { $($v)+ };
}

/// Emits the type in the bracket, or `()` for an empty bracket.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_type_or_unit {
    ([]) => {
        ()
    };
    ([$t:ty]) => {
        $t
    };
}

/// `true` if the bracket holds tokens.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_is_set {
    ([]) => {
        false
    };
    ([$($t:tt)+]) => {
        true
    };
}

/// Emits the type in the bracket as a string, or `"()"`.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_type_name {
    ([]) => {
        "()"
    };
    ([$t:ty]) => {
        ::core::stringify!($t)
    };
}

/// Emits a `static NAME: Behavior<A, D>` holding an erased
/// `BehaviorDef` implementation built from the declared callbacks.
///
/// Slots: `[memory] [dblock] [activate] [tick] [deactivate] [launch]
/// [persist]`.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_behavior_impl {
    // Entry: `NAME: Agent` then the keys, every slot empty.
    ($k:tt; $(#[$($m:tt)*])* $vis:vis $name:ident : $A:ty $(, $($keys:tt)*)?) => {
        $crate::__bt_behavior_impl! {
            @keys $k { {$(#[$($m)*])*} $vis $name [$A] } [[] [] [] [] [] [] []] $($($keys)*)?
        }
    };
    // Middle: `memory: Type`.
    (@keys $k:tt $head:tt [[] $d:tt $a:tt $t:tt $x:tt $l:tt $p:tt] memory: $M:ty $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [[$M] $d $a $t $x $l $p] $($($rest)*)? }
    };
    // Middle: `dblock: Type`.
    (@keys $k:tt $head:tt [$m:tt [] $a:tt $t:tt $x:tt $l:tt $p:tt] dblock: $D:ty $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [$m [$D] $a $t $x $l $p] $($($rest)*)? }
    };
    // Middle: `activate: fn or closure`.
    (@keys $k:tt $head:tt [$m:tt $d:tt [] $t:tt $x:tt $l:tt $p:tt] activate: $f:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [$m $d [$f] $t $x $l $p] $($($rest)*)? }
    };
    // Middle: `tick: fn or closure`.
    (@keys $k:tt $head:tt [$m:tt $d:tt $a:tt [] $x:tt $l:tt $p:tt] tick: $f:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [$m $d $a [$f] $x $l $p] $($($rest)*)? }
    };
    // Middle: `deactivate: fn or closure`.
    (@keys $k:tt $head:tt [$m:tt $d:tt $a:tt $t:tt [] $l:tt $p:tt] deactivate: $f:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [$m $d $a $t [$f] $l $p] $($($rest)*)? }
    };
    // Middle: `launch: fn or closure`.
    (@keys $k:tt $head:tt [$m:tt $d:tt $a:tt $t:tt $x:tt [] $p:tt] launch: $f:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [$m $d $a $t $x [$f] $p] $($($rest)*)? }
    };
    // Middle: `persist` (a bare key): the memory block is saved with the agent.
    (@keys $k:tt { {$($attrs:tt)*} $vis:vis $name:ident [$A:ty] } [$m:tt $d:tt $a:tt $t:tt $x:tt $l:tt []] persist $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k { {$($attrs)*} $vis $name [$A] } [$m $d $a $t $x $l [$name]] $($($rest)*)? }
    };
    // Catch-all: `persist` given twice.
    (@keys $k:tt { $attrs:tt $vis:vis $name:ident $A:tt } [$m:tt $d:tt $a:tt $t:tt $x:tt $l:tt [$p:ident]] persist $($rest:tt)*) => {
        $crate::__bt_twice! { behavior $name persist }
    };
    // Exit: every key consumed.
    (@keys $k:tt { {$($attrs:tt)*} $vis:vis $name:ident [$A:ty] }
        [$mem:tt $db:tt [$($act:expr)?] [$($tick:expr)?] [$($deact:expr)?] [$($launch:expr)?] [$($persist:ident)?]]) => {
        $($attrs)*
        $vis static $name: $k::Behavior<$A, $crate::__bt_type_or_unit!($db)> = {
            #[allow(non_camel_case_types, dead_code, unused_variables, unused_qualifications,
                    clippy::all, clippy::pedantic)]
            struct __BtDef;
            #[allow(unused_variables, unused_qualifications, clippy::all, clippy::pedantic)]
            impl $k::__private::BehaviorDef<$A> for __BtDef {
                type Memory = $crate::__bt_type_or_unit!($mem);
                type DBlock = $crate::__bt_type_or_unit!($db);
                const NAME: &'static str = ::core::stringify!($name);
                const MODULE: &'static str = ::core::module_path!();
                const MEMORY_TYPE: &'static str = $crate::__bt_type_name!($mem);
                const DBLOCK_TYPE: &'static str = $crate::__bt_type_name!($db);
                const HAS_DBLOCK: bool = $crate::__bt_is_set!($db);
                $( $crate::__bt_activate! { $k; [$A] $mem $db $act } )?
                $( $crate::__bt_tick! { $k; [$A] $mem $tick } )?
                $( $crate::__bt_deactivate! { $k; [$A] $mem $deact } )?
                $( $crate::__bt_launch! { $k; [$A] $mem $launch } )?
                $( $crate::__bt_persist! { $k; $persist } )?
            }
            $k::Behavior::__new::<__BtDef>()
        };
    };
    // Catch-all: a key that is unknown or given twice.
    (@keys $k:tt { $attrs:tt $vis:vis $name:ident $A:tt } $slots:tt $key:ident : $($rest:tt)*) => {
        $crate::__bt_bad_key! { behavior $name; $key; memory dblock activate tick deactivate launch persist }
    };
    // Catch-all: anything else in the key list.
    (@keys $k:tt { $attrs:tt $vis:vis $name:ident $A:tt } $slots:tt $($rest:tt)+) => {
        ::core::compile_error!(::core::concat!(
            "behavior `", ::core::stringify!($name), "`: malformed declaration near `",
            ::core::stringify!($($rest)+), "`; expected `key: value` pairs separated by commas"
        ));
    };
    // Catch-all: a head that is not `NAME: Agent`.
    ($k:tt; $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "malformed behavior declaration `", ::core::stringify!($($rest)*),
            "`; expected `[pub] NAME: AgentType, key: value, …`"
        ));
    };
}

/// Emits `HAS_ACTIVATE` and the `activate` method that calls the user's
/// function with the arguments its declaration implies.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_activate {
    ($k:tt; [$A:ty] [] [] $f:expr) => {
        const HAS_ACTIVATE: bool = true;
        #[inline]
        fn activate(
            agent: &mut $A,
            _: &mut (),
            _: ::core::option::Option<()>,
            cx: &$k::Ctx,
        ) -> bool {
            $k::__private::call_a(agent, cx, $f)
        }
    };
    ($k:tt; [$A:ty] [$M:ty] [] $f:expr) => {
        const HAS_ACTIVATE: bool = true;
        #[inline]
        fn activate(
            agent: &mut $A,
            memory: &mut $M,
            _: ::core::option::Option<()>,
            cx: &$k::Ctx,
        ) -> bool {
            $k::__private::call_am(agent, memory, cx, $f)
        }
    };
    ($k:tt; [$A:ty] [] [$D:ty] $f:expr) => {
        const HAS_ACTIVATE: bool = true;
        #[inline]
        fn activate(
            agent: &mut $A,
            _: &mut (),
            dblock: ::core::option::Option<$D>,
            cx: &$k::Ctx,
        ) -> bool {
            $k::__private::call_ad(agent, dblock, cx, $f)
        }
    };
    ($k:tt; [$A:ty] [$M:ty] [$D:ty] $f:expr) => {
        const HAS_ACTIVATE: bool = true;
        #[inline]
        fn activate(
            agent: &mut $A,
            memory: &mut $M,
            dblock: ::core::option::Option<$D>,
            cx: &$k::Ctx,
        ) -> bool {
            $k::__private::call_amd(agent, memory, dblock, cx, $f)
        }
    };
}

/// Emits `HAS_TICK` and the `tick` method.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_tick {
    ($k:tt; [$A:ty] [] $f:expr) => {
        const HAS_TICK: bool = true;
        #[inline]
        fn tick(agent: &mut $A, _: &mut (), cx: &$k::Ctx) -> bool {
            $k::__private::call_a(agent, cx, $f)
        }
    };
    ($k:tt; [$A:ty] [$M:ty] $f:expr) => {
        const HAS_TICK: bool = true;
        #[inline]
        fn tick(agent: &mut $A, memory: &mut $M, cx: &$k::Ctx) -> bool {
            $k::__private::call_am(agent, memory, cx, $f)
        }
    };
}

/// Emits `HAS_DEACTIVATE` and the `deactivate` method.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_deactivate {
    ($k:tt; [$A:ty] [] $f:expr) => {
        const HAS_DEACTIVATE: bool = true;
        #[inline]
        fn deactivate(agent: &mut $A, _: &mut (), cx: &$k::Ctx) {
            $k::__private::call_a(agent, cx, $f)
        }
    };
    ($k:tt; [$A:ty] [$M:ty] $f:expr) => {
        const HAS_DEACTIVATE: bool = true;
        #[inline]
        fn deactivate(agent: &mut $A, memory: &mut $M, cx: &$k::Ctx) {
            $k::__private::call_am(agent, memory, cx, $f)
        }
    };
}

/// Emits `HAS_LAUNCH` and the `launch` method.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_launch {
    ($k:tt; [$A:ty] [] $f:expr) => {
        const HAS_LAUNCH: bool = true;
        #[inline]
        fn launch(agent: &mut $A, _: &mut (), cx: &$k::Ctx) -> ::core::option::Option<$k::Action> {
            $k::__private::call_a(agent, cx, $f)
        }
    };
    ($k:tt; [$A:ty] [$M:ty] $f:expr) => {
        const HAS_LAUNCH: bool = true;
        #[inline]
        fn launch(
            agent: &mut $A,
            memory: &mut $M,
            cx: &$k::Ctx,
        ) -> ::core::option::Option<$k::Action> {
            $k::__private::call_am(agent, memory, cx, $f)
        }
    };
}

/// Emits `PERSIST` for a behavior declared with `persist`: the memory type
/// must implement serde's `Serialize` and `Deserialize`. `$name` is the
/// behavior's name, declared here as a type so that the error for a
/// missing bound names the behavior and points at it.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_persist {
    ($k:tt; $name:ident) => {
        const PERSIST: ::core::option::Option<$k::__private::PersistFns> = {
            #[allow(non_camel_case_types, dead_code)]
            struct $name;
            ::core::option::Option::Some($k::__private::persist::<$name, Self::Memory>())
        };
    };
}

/// Maps a policy keyword to `$k::Policy::…`, or a named compile error.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_policy {
    ($k:tt; $g:ident; prioritized) => {
        $k::Policy::Prioritized
    };
    ($k:tt; $g:ident; sequential) => {
        $k::Policy::Sequential
    };
    ($k:tt; $g:ident; random) => {
        $k::Policy::Random
    };
    ($k:tt; $g:ident; shuffle) => {
        $k::Policy::Shuffle
    };
    ($k:tt; $g:ident; scored) => {
        $k::Policy::Scored
    };
    ($k:tt; $g:ident; slot) => {
        $k::Policy::Slot
    };
    ($k:tt; $g:ident; $other:tt) => {
        ::core::compile_error!(::core::concat!(
            "group `",
            ::core::stringify!($g),
            "`: unknown group policy `",
            ::core::stringify!($other),
            "`; expected prioritized, sequential, random, shuffle, scored or slot"
        ))
    };
}

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
    // Middle: `gate:`.
    (@keys $k:tt $mode:tt $kind:tt $head:tt [$s0:tt $s1:tt $s2:tt $s3:tt $s4:tt $s5:tt $s6:tt $s7:tt $s8:tt $s9:tt $s10:tt $s11:tt $s12:tt $s13:tt $s14:tt [] $s16:tt $s17:tt $s18:tt] gate: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_decider_impl! { @keys $k $mode $kind $head [$s0 $s1 $s2 $s3 $s4 $s5 $s6 $s7 $s8 $s9 $s10 $s11 $s12 $s13 $s14 [($v) as u16] $s16 $s17 $s18] $($($rest)*)? }
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
            memory dblock activate tick deactivate launch decide when needs_all needs_any
            needs_none needs_not_all stimuli_all stimuli_any stimuli_none stimuli_not_all every
            behavior_flags gate cooldown together
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

/// The error for a key the muncher could not take: a key it knows (so it
/// was given twice) or one it does not.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_bad_key {
    (behavior $n:ident; memory; $($known:ident)*) => { $crate::__bt_twice! { behavior $n memory } };
    (behavior $n:ident; dblock; $($known:ident)*) => { $crate::__bt_twice! { behavior $n dblock } };
    (behavior $n:ident; activate; $($known:ident)*) => { $crate::__bt_twice! { behavior $n activate } };
    (behavior $n:ident; tick; $($known:ident)*) => { $crate::__bt_twice! { behavior $n tick } };
    (behavior $n:ident; deactivate; $($known:ident)*) => { $crate::__bt_twice! { behavior $n deactivate } };
    (decider $n:ident; decide; $($known:ident)*) => { $crate::__bt_decide_twice! { $n } };
    (decider $n:ident; when; $($known:ident)*) => { $crate::__bt_decide_twice! { $n } };
    (decider $n:ident; needs_all; $($known:ident)*) => { $crate::__bt_twice! { decider $n needs_all } };
    (decider $n:ident; needs_any; $($known:ident)*) => { $crate::__bt_twice! { decider $n needs_any } };
    (decider $n:ident; needs_none; $($known:ident)*) => { $crate::__bt_twice! { decider $n needs_none } };
    (decider $n:ident; needs_not_all; $($known:ident)*) => { $crate::__bt_twice! { decider $n needs_not_all } };
    (decider $n:ident; stimuli_all; $($known:ident)*) => { $crate::__bt_twice! { decider $n stimuli_all } };
    (decider $n:ident; stimuli_any; $($known:ident)*) => { $crate::__bt_twice! { decider $n stimuli_any } };
    (decider $n:ident; stimuli_none; $($known:ident)*) => { $crate::__bt_twice! { decider $n stimuli_none } };
    (decider $n:ident; stimuli_not_all; $($known:ident)*) => { $crate::__bt_twice! { decider $n stimuli_not_all } };
    (decider $n:ident; every; $($known:ident)*) => { $crate::__bt_twice! { decider $n every } };
    (decider $n:ident; flags; $($known:ident)*) => { $crate::__bt_twice! { decider $n flags } };
    (decider $n:ident; behavior_flags; $($known:ident)*) => { $crate::__bt_twice! { decider $n behavior_flags } };
    (decider $n:ident; behavior; $($known:ident)*) => { $crate::__bt_twice! { decider $n behavior } };
    (decider $n:ident; name; $($known:ident)*) => { $crate::__bt_twice! { decider $n name } };
    (decider $n:ident; id; $($known:ident)*) => { $crate::__bt_twice! { decider $n id } };
    (decider $n:ident; gate; $($known:ident)*) => { $crate::__bt_twice! { decider $n gate } };
    (decider $n:ident; cooldown; $($known:ident)*) => { $crate::__bt_twice! { decider $n cooldown } };
    (decider $n:ident; together; $($known:ident)*) => { $crate::__bt_twice! { decider $n together } };
    (decider $n:ident; select; $($known:ident)*) => { $crate::__bt_twice! { decider $n select } };
    (behavior $n:ident; launch; $($known:ident)*) => { $crate::__bt_twice! { behavior $n launch } };
    (tree $n:ident; block; $($known:ident)*) => { $crate::__bt_twice! { tree $n block } };
    (tree $n:ident; max_depth; $($known:ident)*) => { $crate::__bt_twice! { tree $n max_depth } };
    (tree $n:ident; redecide_limit; $($known:ident)*) => { $crate::__bt_twice! { tree $n redecide_limit } };
    (tree $n:ident; memory; $($known:ident)*) => { $crate::__bt_twice! { tree $n memory } };
    ($what:ident $n:ident; $key:ident; $first:ident $($known:ident)*) => {
        ::core::compile_error!(::core::concat!(
            ::core::stringify!($what), " `", ::core::stringify!($n), "`: unknown key `",
            ::core::stringify!($key), "`; expected one of: ", ::core::stringify!($first)
            $(, ", ", ::core::stringify!($known))*
        ));
    };
}

/// The error for a second `decide:` or `when:`: both set the `decide`.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_decide_twice {
    ($n:ident) => {
        ::core::compile_error!(::core::concat!(
            "decider `",
            ::core::stringify!($n),
            "`: `decide:` or `when:` is given twice; they set the same function, give one of them once"
        ));
    };
}

/// The error for a key given twice.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_twice {
    ($what:ident $n:ident $key:ident) => {
        ::core::compile_error!(::core::concat!(
            ::core::stringify!($what),
            " `",
            ::core::stringify!($n),
            "`: key `",
            ::core::stringify!($key),
            "` is given twice"
        ));
    };
}

/// A group's behavior field.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_group_behavior {
    ($k:tt; []) => {
        ::core::option::Option::None
    };
    ($k:tt; [$gb:path]) => {
        ::core::option::Option::Some($k::Behavior::__erased(&$gb))
    };
}

/// The body of a group's `decide`: typed by its group behavior's DBlock.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_group_decide {
    ($k:tt; $agent:ident; $raw:ident; []; $f:expr) => {
        $k::__private::decide_plain($agent, $raw, $f)
    };
    ($k:tt; $agent:ident; $raw:ident; [$gb:path]; $f:expr) => {
        $k::__private::decide_for(&$gb, $agent, $raw, $f)
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
                every: $crate::__bt_or!($every 0.0),
                sync: $k::SyncChecks {
                    gate: $crate::__bt_or!($gate 0),
                    cooldown: $crate::__bt_or!($cool 0.0),
                    together: $crate::__bt_or!($tog 0),
                },
            },
            flags: $k::DeciderFlags::from_bits_retain($crate::__bt_or!($flags 0)),
            behavior_flags: $crate::__bt_or!($bflags 0),
            select: $select,
        }
    };
}

/// Emits a `static NAME: Tree<A, LEVELS, SLOTS, BLOCK>` compiled from a root
/// decider by the const flattening (a `CrowdTree` when the tree needs
/// shared state), and optionally a type alias for its agent memory.
///
/// Slots: `[block] [max_depth] [redecide_limit] [memory]`.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_tree_impl {
    // Entry: `NAME: Agent = ROOT` then the keys.
    ($k:tt; $(#[$($m:tt)*])* $vis:vis $name:ident : $A:ty = $root:path $(, $($keys:tt)*)?) => {
        $crate::__bt_tree_impl! {
            @keys $k { {$(#[$($m)*])*} $vis $name [$A] [$root] } [[] [] [] []] $($($keys)*)?
        }
    };
    // Middle: `block: bytes`.
    (@keys $k:tt $head:tt [[] $d:tt $l:tt $m:tt] block: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_tree_impl! { @keys $k $head [[$v] $d $l $m] $($($rest)*)? }
    };
    // Middle: `max_depth: levels`.
    (@keys $k:tt $head:tt [$b:tt [] $l:tt $m:tt] max_depth: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_tree_impl! { @keys $k $head [$b [$v] $l $m] $($($rest)*)? }
    };
    // Middle: `redecide_limit: count`.
    (@keys $k:tt $head:tt [$b:tt $d:tt [] $m:tt] redecide_limit: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_tree_impl! { @keys $k $head [$b $d [$v] $m] $($($rest)*)? }
    };
    // Middle: `memory: TypeAliasName`.
    (@keys $k:tt $head:tt [$b:tt $d:tt $l:tt []] memory: $alias:ident $(, $($rest:tt)*)?) => {
        $crate::__bt_tree_impl! { @keys $k $head [$b $d $l [$alias]] $($($rest)*)? }
    };
    // Exit: every key consumed.
    (@keys $k:tt { {$($attrs:tt)*} $vis:vis $name:ident [$A:ty] [$root:path] }
        [$block:tt $depth:tt $limit:tt [$($alias:ident)?]]) => {
        $($attrs)*
        // A `Tree`, or a `CrowdTree` when the tree needs shared state.
        $vis static $name: <$k::__private::Kind<
            { $k::__private::measure(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0)).needs_shared() }
        > as $k::__private::TreeKind>::Of<
            $A,
            { $k::__private::measure(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0)).levels },
            { $k::__private::measure(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0)).slots() },
            { $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block) },
        > = {
            const SHAPE: $k::__private::Shape =
                $k::__private::shape(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0));
            static ITEMS: [$k::__private::Item<$A>; SHAPE.items] = $k::__private::flatten(&$root, SHAPE);
            // Counted without the checks, which `SHAPE` reports once.
            const SHARED: bool =
                $k::__private::measure(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0)).needs_shared();
            $k::__private::Kind::<SHARED>::wrap(
                $k::Tree::__new(::core::stringify!($name), &ITEMS, SHAPE, $crate::__bt_or!($limit 0))
            )
        };
        $(
            #[doc = ::core::concat!("The agent memory of [`", ::core::stringify!($name), "`].")]
            $vis type $alias = $k::AgentMemory<
                $A,
                { $k::__private::measure(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0)).levels },
                { $k::__private::measure(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0)).slots() },
                { $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block) },
            >;
        )?
    };
    // Catch-all: a key that is unknown or given twice.
    (@keys $k:tt { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt $key:ident : $($rest:tt)*) => {
        $crate::__bt_bad_key! { tree $name; $key; block max_depth redecide_limit memory }
    };
    // Catch-all: anything else in the key list.
    (@keys $k:tt { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt $($rest:tt)+) => {
        ::core::compile_error!(::core::concat!(
            "tree `", ::core::stringify!($name), "`: malformed declaration near `",
            ::core::stringify!($($rest)+), "`; expected `key: value` pairs separated by commas"
        ));
    };
    // Catch-all: a head that is not `NAME: Agent = ROOT`.
    ($k:tt; $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "malformed tree declaration `", ::core::stringify!($($rest)*),
            "`; expected `[pub] NAME: Agent = ROOT_DECIDER, key: value, …`"
        ));
    };
}
