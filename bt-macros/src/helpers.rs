//! Small helpers the other macros call on their slots: a value or a
//! default, a type or `()`, whether a slot is set.

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
