//! `behavior!`: the erased `BehaviorDef` implementation and one helper per
//! callback.

/// Emits a `static NAME: Behavior<A, D>` holding an erased
/// `BehaviorDef` implementation built from the declared callbacks.
///
/// Slots: `[memory] [dblock] [activate] [tick] [deactivate] [launch]
/// [persist] [callbacks written with three parameters] [tunables]`.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_behavior_impl {
    // Entry: `NAME: Agent` then the keys, every slot empty.
    ($k:tt; $(#[$($m:tt)*])* $vis:vis $name:ident : $A:ty $(, $($keys:tt)*)?) => {
        $crate::__bt_behavior_impl! {
            @keys $k { {$(#[$($m)*])*} $vis $name [$A] } [[] [] [] [] [] [] [] [] []] $($($keys)*)?
        }
    };
    // Middle: `memory: Type`.
    (@keys $k:tt $head:tt [[] $d:tt $a:tt $t:tt $x:tt $l:tt $p:tt $n:tt $tb:tt] memory: $M:ty $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [[$M] $d $a $t $x $l $p $n $tb] $($($rest)*)? }
    };
    // Middle: `dblock: Type`.
    (@keys $k:tt $head:tt [$m:tt [] $a:tt $t:tt $x:tt $l:tt $p:tt $n:tt $tb:tt] dblock: $D:ty $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [$m [$D] $a $t $x $l $p $n $tb] $($($rest)*)? }
    };
    // Middle: `activate: fn or closure`.
    (@keys $k:tt $head:tt [$m:tt $d:tt [] $t:tt $x:tt $l:tt $p:tt $n:tt $tb:tt] activate: $f:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [$m $d [$f] $t $x $l $p $n $tb] $($($rest)*)? }
    };
    // Middle: `tick:`, `deactivate:` or `launch:` given a closure of three
    // parameters (agent, memory block, context): noted, so that the exit
    // arm can say that such a callback needs `memory:`.
    (@keys $k:tt $head:tt [$m:tt $d:tt $a:tt $t:tt $x:tt $l:tt $p:tt [$($n:ident)*] $tb:tt]
        $cb:ident : | $p1:tt $(: $t1:ty)? , $p2:tt $(: $t2:ty)? , $p3:tt $(: $t3:ty)? $(,)? | $($rest:tt)*) => {
        $crate::__bt_behavior_impl! { @three $k $head [$m $d $a $t $x $l $p [$($n)* $cb] $tb] $cb : | $p1 $(: $t1)? , $p2 $(: $t2)? , $p3 $(: $t3)? | $($rest)* }
    };
    // The same closure, noted: back to the generic arms, as a `move`
    // closure (it captures nothing), which the arm above does not take.
    (@three $k:tt $head:tt $slots:tt $cb:ident : | $($closure:tt)*) => {
        $crate::__bt_behavior_impl! { @keys $k $head $slots $cb : move | $($closure)* }
    };
    // Middle: `tick: fn or closure`.
    (@keys $k:tt $head:tt [$m:tt $d:tt $a:tt [] $x:tt $l:tt $p:tt $n:tt $tb:tt] tick: $f:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [$m $d $a [$f] $x $l $p $n $tb] $($($rest)*)? }
    };
    // Middle: `deactivate: fn or closure`.
    (@keys $k:tt $head:tt [$m:tt $d:tt $a:tt $t:tt [] $l:tt $p:tt $n:tt $tb:tt] deactivate: $f:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [$m $d $a $t [$f] $l $p $n $tb] $($($rest)*)? }
    };
    // Middle: `launch: fn or closure`.
    (@keys $k:tt $head:tt [$m:tt $d:tt $a:tt $t:tt $x:tt [] $p:tt $n:tt $tb:tt] launch: $f:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [$m $d $a $t $x [$f] $p $n $tb] $($($rest)*)? }
    };
    // Middle: `tunables: TABLE`: the callbacks' context is typed by it.
    (@keys $k:tt $head:tt [$m:tt $d:tt $a:tt $t:tt $x:tt $l:tt $p:tt $n:tt []] tunables: $tab:path $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k $head [$m $d $a $t $x $l $p $n [$tab]] $($($rest)*)? }
    };
    // Middle: `persist` (a bare key): the memory block is saved with the agent.
    (@keys $k:tt { {$($attrs:tt)*} $vis:vis $name:ident [$A:ty] } [$m:tt $d:tt $a:tt $t:tt $x:tt $l:tt [] $n:tt $tb:tt] persist $(, $($rest:tt)*)?) => {
        $crate::__bt_behavior_impl! { @keys $k { {$($attrs)*} $vis $name [$A] } [$m $d $a $t $x $l [$name] $n $tb] $($($rest)*)? }
    };
    // Catch-all: `persist` given twice.
    (@keys $k:tt { $attrs:tt $vis:vis $name:ident $A:tt } [$m:tt $d:tt $a:tt $t:tt $x:tt $l:tt [$p:ident] $n:tt $tb:tt] persist $($rest:tt)*) => {
        $crate::__bt_twice! { behavior $name persist }
    };
    // Exit: every key consumed.
    (@keys $k:tt { {$($attrs:tt)*} $vis:vis $name:ident [$A:ty] }
        [$mem:tt $db:tt [$($act:expr)?] [$($tick:expr)?] [$($deact:expr)?] [$($launch:expr)?] [$($persist:ident)?] $three:tt [$($tab:path)?]]) => {
        $crate::__bt_memory_hint! { $name $mem $three }
        $($attrs)*
        $vis static $name: $k::Behavior<$A, $crate::__bt_type_or_unit!($db)> = {
            #[allow(non_camel_case_types, dead_code, unused_variables, unused_qualifications,
                    clippy::all, clippy::pedantic)]
            struct __BtDef;
            #[allow(unused_variables, unused_qualifications, clippy::all, clippy::pedantic)]
            impl $k::__private::BehaviorDef<$A> for __BtDef {
                type Memory = $crate::__bt_type_or_unit!($mem);
                type DBlock = $crate::__bt_type_or_unit!($db);
                type Table = $crate::__bt_or!([$($tab)?] $k::AnyTable);
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
        $crate::__bt_bad_key! { behavior $name; $key; memory dblock activate tick deactivate launch persist tunables }
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
            cx: &$k::Ctx<'_, Self::Table>,
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
            cx: &$k::Ctx<'_, Self::Table>,
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
            cx: &$k::Ctx<'_, Self::Table>,
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
            cx: &$k::Ctx<'_, Self::Table>,
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
        fn tick(agent: &mut $A, _: &mut (), cx: &$k::Ctx<'_, Self::Table>) -> bool {
            $k::__private::call_a(agent, cx, $f)
        }
    };
    ($k:tt; [$A:ty] [$M:ty] $f:expr) => {
        const HAS_TICK: bool = true;
        #[inline]
        fn tick(agent: &mut $A, memory: &mut $M, cx: &$k::Ctx<'_, Self::Table>) -> bool {
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
        fn deactivate(agent: &mut $A, _: &mut (), cx: &$k::Ctx<'_, Self::Table>) {
            $k::__private::call_a(agent, cx, $f)
        }
    };
    ($k:tt; [$A:ty] [$M:ty] $f:expr) => {
        const HAS_DEACTIVATE: bool = true;
        #[inline]
        fn deactivate(agent: &mut $A, memory: &mut $M, cx: &$k::Ctx<'_, Self::Table>) {
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
        fn launch(
            agent: &mut $A,
            _: &mut (),
            cx: &$k::Ctx<'_, Self::Table>,
        ) -> ::core::option::Option<$k::Action> {
            $k::__private::call_a(agent, cx, $f)
        }
    };
    ($k:tt; [$A:ty] [$M:ty] $f:expr) => {
        const HAS_LAUNCH: bool = true;
        #[inline]
        fn launch(
            agent: &mut $A,
            memory: &mut $M,
            cx: &$k::Ctx<'_, Self::Table>,
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

/// Nothing, or a compile error when a behavior without `memory:` has a
/// `tick`, `deactivate` or `launch` closure of three parameters: rustc
/// alone would only say that the closure takes one argument too many.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_memory_hint {
    ($name:ident [$($M:tt)+] $three:tt) => {};
    ($name:ident [] []) => {};
    ($name:ident [] [activate $($rest:ident)*]) => {
        $crate::__bt_memory_hint! { $name [] [$($rest)*] }
    };
    ($name:ident [] [$cb:ident $($rest:ident)*]) => {
        ::core::compile_error!(::core::concat!(
            "behavior `", ::core::stringify!($name), "`: its `", ::core::stringify!($cb),
            "` takes three arguments (agent, memory block, context), but the behavior has no ",
            "memory block: add `memory: YourType` to the behavior, or take two arguments `|agent, cx|`"
        ));
    };
}
