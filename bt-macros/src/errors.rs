//! The compile errors for a key the munchers could not take: unknown, or
//! given twice.

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
    (behavior $n:ident; tunables; $($known:ident)*) => { $crate::__bt_twice! { behavior $n tunables } };
    (tree $n:ident; block; $($known:ident)*) => { $crate::__bt_twice! { tree $n block } };
    (tree $n:ident; max_depth; $($known:ident)*) => { $crate::__bt_twice! { tree $n max_depth } };
    (tree $n:ident; redecide_limit; $($known:ident)*) => { $crate::__bt_twice! { tree $n redecide_limit } };
    (tree $n:ident; memory; $($known:ident)*) => { $crate::__bt_twice! { tree $n memory } };
    (tree $n:ident; marker; $($known:ident)*) => { $crate::__bt_twice! { tree $n marker } };
    (tree $n:ident; tunables; $($known:ident)*) => { $crate::__bt_twice! { tree $n tunables } };
    ($what:ident $n:ident; $key:ident; $first:ident $($known:ident)*) => {
        ::core::compile_error!(::core::concat!(
            ::core::stringify!($what), " `", ::core::stringify!($n), "`: unknown key `",
            ::core::stringify!($key), "`; expected one of: ", ::core::stringify!($first)
            $(, ", ", ::core::stringify!($known))*
        ));
    };
}

/// The error for a key a reference could not take: one no reference
/// takes (it runs no behavior and picks no child), or else unknown or
/// given twice.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_reference_key {
    ($n:ident; flags) => {
        ::core::compile_error!(::core::concat!(
            "reference `", ::core::stringify!($n),
            "`: `flags:` is not allowed on a reference; it picks no child, so decider flags have nothing to change"
        ));
    };
    ($n:ident; behavior_flags) => {
        ::core::compile_error!(::core::concat!(
            "reference `", ::core::stringify!($n),
            "`: `behavior_flags:` is not allowed on a reference; it runs no behavior to pass them to"
        ));
    };
    ($n:ident; behavior) => {
        ::core::compile_error!(::core::concat!(
            "reference `", ::core::stringify!($n),
            "`: `behavior:` is not allowed on a reference; it runs no behavior"
        ));
    };
    ($n:ident; name) => {
        ::core::compile_error!(::core::concat!(
            "reference `", ::core::stringify!($n),
            "`: `name:` is not allowed on a reference; it is named after its static"
        ));
    };
    ($n:ident; id) => {
        ::core::compile_error!(::core::concat!(
            "reference `", ::core::stringify!($n),
            "`: `id:` is not allowed on a reference; its id is made from its static's module path and name"
        ));
    };
    ($n:ident; $key:ident) => {
        $crate::__bt_bad_key! {
            decider $n; $key;
            decide when needs_all needs_any needs_none needs_not_all stimuli_all stimuli_any
            stimuli_none stimuli_not_all every gate cooldown together
        }
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
