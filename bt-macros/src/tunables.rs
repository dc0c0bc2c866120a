//! `tunables!`: a tree's tunables, a `static` table, the table as a type,
//! and one typed `const` per tunable.

/// Emits `static TABLE: Tunables` (with the block of its defaults), the
/// type `TABLE` (an empty `enum`, in the type namespace) implementing
/// `TunableTable` and, per entry, `const NAME: Tunable<T>`; for a choice,
/// the `enum` it is read as, with its `TunableValue` impl.
///
/// A token muncher: each entry arm moves one `NAME: type = …;` into the
/// table's list and the consts' list (with, for a choice, its enum's
/// tokens), counting the place; the exit arm emits both, and each choice's
/// enum through the `@choice` arms. An entry of another form falls through
/// to a catch-all that names it.
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
            [$($c)* [[$(#[doc = $doc])*] $name [f64] [$i] []]]
            [$i + 1] $($rest)* }
    };
    // `NAME: i64 = default, min..=max;`
    (@items $k:tt $head:tt [$($d:tt)*] [$($c:tt)*] [$i:expr]
        $(#[doc = $doc:literal])* $name:ident : i64 = $def:literal , $lo:literal ..= $hi:literal ; $($rest:tt)*) => {
        $crate::__bt_tunables_impl! { @items $k $head
            [$($d)* $k::TunableDecl::int(::core::stringify!($name), ::core::concat!($($doc, "\n",)*), $def, $lo, $hi),]
            [$($c)* [[$(#[doc = $doc])*] $name [i64] [$i] []]]
            [$i + 1] $($rest)* }
    };
    // `NAME: bool = default;`
    (@items $k:tt $head:tt [$($d:tt)*] [$($c:tt)*] [$i:expr]
        $(#[doc = $doc:literal])* $name:ident : bool = $def:literal ; $($rest:tt)*) => {
        $crate::__bt_tunables_impl! { @items $k $head
            [$($d)* $k::TunableDecl::bool(::core::stringify!($name), ::core::concat!($($doc, "\n",)*), $def),]
            [$($c)* [[$(#[doc = $doc])*] $name [bool] [$i] []]]
            [$i + 1] $($rest)* }
    };
    // `NAME: enum Type { A, B, C } = A;` with no names: an error naming it.
    (@items $k:tt [$(#[$m:meta])* $vis:vis $table:ident] $d:tt $c:tt $i:tt
        $(#[doc = $doc:literal])* $name:ident : $(#[$em:meta])* enum $t:ident { } = $def:ident ; $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "tunables `", ::core::stringify!($table), "`: tunable `", ::core::stringify!($name),
            "` is a choice with no names"
        ));
    };
    // `NAME: enum Type { A, B, C } = A;`
    (@items $k:tt $head:tt [$($d:tt)*] [$($c:tt)*] [$i:expr]
        $(#[doc = $doc:literal])* $name:ident : $(#[$em:meta])* enum $t:ident {
            $($(#[doc = $vdoc:literal])* $v:ident),+ $(,)?
        } = $def:ident ; $($rest:tt)*) => {
        $crate::__bt_tunables_impl! { @items $k $head
            [$($d)* $k::TunableDecl::choice(
                ::core::stringify!($name), ::core::concat!($($doc, "\n",)*),
                ::core::stringify!($def), &[$(::core::stringify!($v)),+]),]
            [$($c)* [[$(#[doc = $doc])*] $name [$t] [$i] [[$(#[$em])*] $t [$([$(#[doc = $vdoc])*] $v)+]]]]
            [$i + 1] $($rest)* }
    };
    // Exit: every entry moved.
    (@items $k:tt [$(#[$m:meta])* $vis:vis $table:ident] [$($d:tt)*]
        [$([[$($doc:tt)*] $name:ident [$t:ty] [$i:expr] [$($choice:tt)*]])*] [$n:expr]) => {
        $(#[$m])*
        $vis static $table: $k::Tunables = {
            const DECLS: &[$k::TunableDecl] = &[$($d)*];
            static DEFAULTS: $k::__private::TunedDefaults = $k::__private::TunedDefaults::of(DECLS);
            $k::Tunables::new(::core::stringify!($table), DECLS)
                .__in(::core::module_path!())
                .__at(::core::concat!(::core::file!(), ":", ::core::line!(), ":", ::core::column!()))
                .__defaults(&DEFAULTS)
        };
        #[doc = ::core::concat!(
            "The table [`", ::core::stringify!($table), "`](static@", ::core::stringify!($table),
            ") as a type: name it in a behavior's `tunables:` key, and its callbacks' context ",
            "(`Ctx<", ::core::stringify!($table), ">`) reads each of the table's tunables with one load."
        )]
        #[allow(non_camel_case_types)]
        $vis enum $table {}
        impl $k::TunableTable for $table {
            const TABLE: ::core::option::Option<&'static $k::Tunables> =
                ::core::option::Option::Some(&$table);
        }
        $(
            $($doc)*
            #[allow(clippy::identity_op)]
            $vis const $name: $k::Tunable<$t> = $k::Tunable::__new(&$table, $i);
            $crate::__bt_tunables_impl! { @choice $k [$vis] $name $($choice)* }
        )*
    };
    // A tunable that is not a choice: nothing more.
    (@choice $k:tt [$vis:vis] $name:ident) => {};
    // A choice: its enum, with the table's visibility, read by place.
    (@choice $k:tt [$vis:vis] $name:ident [$(#[$em:meta])*] $t:ident [$([$($vdoc:tt)*] $v:ident)+]) => {
        #[doc = ::core::concat!("The names tunable `", ::core::stringify!($name), "` may take.")]
        $(#[$em])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $t {
            $($($vdoc)* #[allow(missing_docs)] $v,)+
        }
        const _: () = {
            impl $k::__private::TunableSealed for $t {}
            impl $k::TunableValue for $t {
                #[inline(always)]
                fn from_bits(bits: u64) -> Self {
                    const ALL: &[$t] = &[$($t::$v),+];
                    ALL[$k::__private::choice_at(bits, ALL.len())]
                }
                #[inline(always)]
                fn to_bits(self) -> u64 {
                    self as u64
                }
                fn tune_value(self) -> $k::TuneValue {
                    const NAMES: &[&str] = &[$(::core::stringify!($v)),+];
                    $k::__private::choice_value(NAMES[self as usize])
                }
            }
        };
    };
    // Catch-all: an entry of no known form.
    (@items $k:tt [$(#[$m:meta])* $vis:vis $table:ident] $d:tt $c:tt $i:tt $($rest:tt)+) => {
        ::core::compile_error!(::core::concat!(
            "tunables `", ::core::stringify!($table), "`: malformed entry near `",
            ::core::stringify!($($rest)+), "`; expected `NAME: f64 = default, min..=max;`, ",
            "`NAME: i64 = default, min..=max;`, `NAME: bool = default;` or ",
            "`NAME: enum Type { A, B } = A;`"
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
