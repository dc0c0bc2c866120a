//! `tree!`: the `static` tree compiled from a root decider.

/// Emits a `static NAME: Tree<A, LEVELS, SLOTS, BLOCK>` compiled from a root
/// decider by the const flattening (a `CrowdTree` when the tree needs
/// shared state), and optionally a type alias for its agent memory and a
/// marker type that names the tree (`StaticTree`).
///
/// Slots: `[block] [max_depth] [redecide_limit] [memory] [marker] [tunables]`.
#[doc(hidden)]
#[macro_export]
macro_rules! __bt_tree_impl {
    // Entry: `NAME: Agent = ROOT` then the keys.
    ($k:tt; $(#[$($m:tt)*])* $vis:vis $name:ident : $A:ty = $root:path $(, $($keys:tt)*)?) => {
        $crate::__bt_tree_impl! {
            @keys $k { {$(#[$($m)*])*} $vis $name [$A] [$root] } [[] [] [] [] [] []] $($($keys)*)?
        }
    };
    // Middle: `block: bytes`.
    (@keys $k:tt $head:tt [[] $d:tt $l:tt $m:tt $t:tt $u:tt] block: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_tree_impl! { @keys $k $head [[$v] $d $l $m $t $u] $($($rest)*)? }
    };
    // Middle: `max_depth: levels`.
    (@keys $k:tt $head:tt [$b:tt [] $l:tt $m:tt $t:tt $u:tt] max_depth: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_tree_impl! { @keys $k $head [$b [$v] $l $m $t $u] $($($rest)*)? }
    };
    // Middle: `redecide_limit: count`.
    (@keys $k:tt $head:tt [$b:tt $d:tt [] $m:tt $t:tt $u:tt] redecide_limit: $v:expr $(, $($rest:tt)*)?) => {
        $crate::__bt_tree_impl! { @keys $k $head [$b $d [$v] $m $t $u] $($($rest)*)? }
    };
    // Middle: `tunables: TABLE`.
    (@keys $k:tt $head:tt [$b:tt $d:tt $l:tt $m:tt $t:tt []] tunables: $v:path $(, $($rest:tt)*)?) => {
        $crate::__bt_tree_impl! { @keys $k $head [$b $d $l $m $t [$v]] $($($rest)*)? }
    };
    // Catch-all: `memory:` given a visibility: the alias takes the tree's.
    (@keys $k:tt { $attrs:tt $tvis:vis $name:ident $A:tt $root:tt } [$b:tt $d:tt $l:tt [] $t:tt $u:tt] memory: pub $(($($in:tt)*))? $alias:ident $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "tree `", ::core::stringify!($name), "`: write `memory: ", ::core::stringify!($alias),
            "`, with no visibility: the type `", ::core::stringify!($alias),
            "` takes the tree's own (`pub ", ::core::stringify!($name), "` makes both public)"
        ));
    };
    // Middle: `memory: TypeAliasName`.
    (@keys $k:tt $head:tt [$b:tt $d:tt $l:tt [] $t:tt $u:tt] memory: $alias:ident $(, $($rest:tt)*)?) => {
        $crate::__bt_tree_impl! { @keys $k $head [$b $d $l [$alias] $t $u] $($($rest)*)? }
    };
    // Catch-all: `marker:` given a visibility: the type takes the tree's.
    (@keys $k:tt { $attrs:tt $tvis:vis $name:ident $A:tt $root:tt } [$b:tt $d:tt $l:tt $m:tt [] $u:tt] marker: pub $(($($in:tt)*))? $marker:ident $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "tree `", ::core::stringify!($name), "`: write `marker: ", ::core::stringify!($marker),
            "`, with no visibility: the type `", ::core::stringify!($marker),
            "` takes the tree's own (`pub ", ::core::stringify!($name), "` makes both public)"
        ));
    };
    // Middle: `marker: TypeName`.
    (@keys $k:tt $head:tt [$b:tt $d:tt $l:tt $m:tt [] $u:tt] marker: $marker:ident $(, $($rest:tt)*)?) => {
        $crate::__bt_tree_impl! { @keys $k $head [$b $d $l $m [$marker] $u] $($($rest)*)? }
    };
    // Exit: every key consumed.
    (@keys $k:tt { {$($attrs:tt)*} $vis:vis $name:ident [$A:ty] [$root:path] }
        [$block:tt $depth:tt $limit:tt [$($alias:ident)?] [$($marker:ident)?] [$($tunables:path)?]]) => {
        $($attrs)*
        // A `Tree`, or a `CrowdTree` when the tree needs shared state.
        $vis static $name: <$k::__private::Kind<
            { $k::__private::measure(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0)).needs_shared() $(|| { let _ = &$tunables; true })? }
        > as $k::__private::TreeKind>::Of<
            $A,
            { $k::__private::measure(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0)).levels },
            { $k::__private::measure(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0)).slots() },
            { $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block) },
        > = {
            const SHAPE: $k::__private::Shape =
                $k::__private::shape(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0));
            static ITEMS: [$k::__private::Item<$A>; SHAPE.items] = $k::__private::flatten(&$root, SHAPE);
            // The tunables the deciders name are the tree's.
            const _: () = $k::__private::check_tuned(
                &$root,
                ::core::stringify!($name),
                $crate::__bt_or!([$(::core::option::Option::Some(&$tunables))?] ::core::option::Option::None),
            );
            // Counted without the checks, which `SHAPE` reports once.
            const SHARED: bool =
                $k::__private::measure(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0)).needs_shared() $(|| { let _ = &$tunables; true })?;
            $k::__private::Kind::<SHARED>::wrap(
                $k::Tree::__new(::core::stringify!($name), &ITEMS, SHAPE, $crate::__bt_or!($limit 0))
                    .__tuned($crate::__bt_or!([$(::core::option::Option::Some(&$tunables))?] ::core::option::Option::None))
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
        $(
            #[doc = ::core::concat!(
                "The tree [`", ::core::stringify!($name), "`] as a type, for code generic over ",
                "the tree (`bt_core::StaticTree`)."
            )]
            $vis enum $marker {}

            impl $k::StaticTree for $marker {
                type Tree = $k::Tree<
                    $A,
                    { $k::__private::measure(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0)).levels },
                    { $k::__private::measure(&$root, $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block), $crate::__bt_or!($depth 0)).slots() },
                    { $crate::__bt_or!($block $k::__private::measure(&$root, usize::MAX, $crate::__bt_or!($depth 0)).block) },
                >;

                #[inline(always)]
                fn tree() -> &'static Self::Tree {
                    &$name
                }
            }
        )?
    };
    // Catch-all: a key that is unknown or given twice.
    (@keys $k:tt { $attrs:tt $vis:vis $name:ident $($h:tt)* } $slots:tt $key:ident : $($rest:tt)*) => {
        $crate::__bt_bad_key! { tree $name; $key; block max_depth redecide_limit memory marker tunables }
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
