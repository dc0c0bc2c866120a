//! `tunables!`: a tree's tunables, a `static` table and one typed `const`
//! per tunable.

/// Emits `static TABLE: Tunables` and, per entry, `const NAME: Tunable<T>`.
///
/// A token muncher: each entry arm moves one `NAME: type = …;` into the
/// table's list and the consts' list, counting the place; the exit arm
/// emits both. An entry of another form falls through to a catch-all that
/// names it.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_tunables_impl {
    // Entry: `[pub] TABLE:` then the entries.
    ($k:tt; $(#[$m:meta])* $vis:vis $table:ident : $($body:tt)*) => {
        $crate::__bt_tunables_impl! { @items $k [$(#[$m])* $vis $table] [] [] [0u16] $($body)* }
    };
    // `NAME: f64 = default, min..=max;`
    (@items $k:tt $head:tt [$($d:tt)*] [$($c:tt)*] [$i:expr]
        $(#[doc = $doc:literal])* $name:ident : f64 = $def:literal , $lo:literal ..= $hi:literal ; $($rest:tt)*) => {
        $crate::__bt_tunables_impl! { @items $k $head
            [$($d)* $k::TunableDecl::float(::core::stringify!($name), ::core::concat!($($doc, "\n",)*), $def, $lo, $hi),]
            [$($c)* [[$(#[doc = $doc])*] $name [f64] [$i]]]
            [$i + 1] $($rest)* }
    };
    // `NAME: i64 = default, min..=max;`
    (@items $k:tt $head:tt [$($d:tt)*] [$($c:tt)*] [$i:expr]
        $(#[doc = $doc:literal])* $name:ident : i64 = $def:literal , $lo:literal ..= $hi:literal ; $($rest:tt)*) => {
        $crate::__bt_tunables_impl! { @items $k $head
            [$($d)* $k::TunableDecl::int(::core::stringify!($name), ::core::concat!($($doc, "\n",)*), $def, $lo, $hi),]
            [$($c)* [[$(#[doc = $doc])*] $name [i64] [$i]]]
            [$i + 1] $($rest)* }
    };
    // `NAME: bool = default;`
    (@items $k:tt $head:tt [$($d:tt)*] [$($c:tt)*] [$i:expr]
        $(#[doc = $doc:literal])* $name:ident : bool = $def:literal ; $($rest:tt)*) => {
        $crate::__bt_tunables_impl! { @items $k $head
            [$($d)* $k::TunableDecl::bool(::core::stringify!($name), ::core::concat!($($doc, "\n",)*), $def),]
            [$($c)* [[$(#[doc = $doc])*] $name [bool] [$i]]]
            [$i + 1] $($rest)* }
    };
    // Exit: every entry moved.
    (@items $k:tt [$(#[$m:meta])* $vis:vis $table:ident] [$($d:tt)*]
        [$([[$($doc:tt)*] $name:ident [$t:ty] [$i:expr]])*] [$n:expr]) => {
        $(#[$m])*
        $vis static $table: $k::Tunables =
            $k::Tunables::new(::core::stringify!($table), &[$($d)*]).__in(::core::module_path!());
        $(
            $($doc)*
            #[allow(clippy::identity_op)]
            $vis const $name: $k::Tunable<$t> = $k::Tunable::__new(&$table, $i);
        )*
    };
    // Catch-all: an entry of no known form.
    (@items $k:tt [$(#[$m:meta])* $vis:vis $table:ident] $d:tt $c:tt $i:tt $($rest:tt)+) => {
        ::core::compile_error!(::core::concat!(
            "tunables `", ::core::stringify!($table), "`: malformed entry near `",
            ::core::stringify!($($rest)+), "`; expected `NAME: f64 = default, min..=max;`, ",
            "`NAME: i64 = default, min..=max;` or `NAME: bool = default;`"
        ));
    };
    // Catch-all: a head that is not `[pub] TABLE:`.
    ($k:tt; $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "malformed tunables declaration `", ::core::stringify!($($rest)*),
            "`; expected `[pub] TABLE: NAME: f64 = default, min..=max; …`"
        ));
    };
}
