//! What a group decider adds to the muncher: its policy, its group
//! behavior and the typed body of its `decide`.

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
