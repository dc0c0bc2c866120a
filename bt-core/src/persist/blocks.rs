//! The memory blocks of a memory snapshot: written as each level's
//! behavior keeps them, read back into the levels of a checked path.

use core::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, SeqAccess, VariantAccess, Visitor,
};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use super::{Fault, SnapshotError};
use crate::memory::Level;
use crate::raw::{Blocks, ErasedBehavior};
use crate::tree::Tree;

/// What a level's block holds in a snapshot.
pub(super) enum BlockOut<'m> {
    /// Nothing to keep: no behavior, or a memory type without size.
    None,
    /// The value of a behavior declared with `persist`.
    Kept(&'m dyn erased_serde::Serialize),
    /// The value of a behavior without `persist`: not saved.
    Dropped,
}

const BLOCK: &str = "Block";
const BLOCK_VARIANTS: &[&str] = &["None", "Kept", "Dropped"];

impl Serialize for BlockOut<'_> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        match self {
            BlockOut::None => s.serialize_unit_variant(BLOCK, 0, "None"),
            BlockOut::Kept(v) => s.serialize_newtype_variant(BLOCK, 1, "Kept", v),
            BlockOut::Dropped => s.serialize_unit_variant(BLOCK, 2, "Dropped"),
        }
    }
}

/// Reads the blocks of the checked path into `blocks`; returns how many
/// levels stay active.
pub(super) struct BlocksSeed<'b, A: 'static, const L: usize, const S: usize, const N: usize> {
    pub(super) tree: &'static Tree<A, L, S, N>,
    pub(super) levels: &'b [Level],
    pub(super) blocks: &'b mut Blocks<A, L, N>,
    pub(super) fault: &'b Fault,
}

impl<'de, A: 'static, const L: usize, const S: usize, const N: usize> DeserializeSeed<'de>
    for BlocksSeed<'_, A, L, S, N>
{
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, A: 'static, const L: usize, const S: usize, const N: usize> Visitor<'de>
    for BlocksSeed<'_, A, L, S, N>
{
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "one memory block per active level")
    }

    fn visit_seq<Q: SeqAccess<'de>>(self, mut seq: Q) -> Result<usize, Q::Error> {
        let depth = self.levels.len();
        let mut keep = depth;
        for (k, level) in self.levels.iter().enumerate() {
            let behavior = self.tree.items[level.item as usize].behavior;
            let seed = BlockSeed {
                behavior,
                depth: k,
                blocks: &mut *self.blocks,
                fault: self.fault,
            };
            let Some(kept) = seq.next_element_seed(seed)? else {
                return Err(self.fault.raise(SnapshotError::Count {
                    what: "memory blocks",
                    found: k,
                    expected: depth,
                }));
            };
            if !kept && keep == depth {
                keep = k;
            }
        }
        let extra = BlockSeed {
            behavior: None,
            depth,
            blocks: &mut *self.blocks,
            fault: self.fault,
        };
        if seq.next_element_seed(extra)?.is_some() {
            return Err(self.fault.raise(SnapshotError::Count {
                what: "memory blocks",
                found: depth + 1,
                expected: depth,
            }));
        }
        Ok(keep)
    }
}

/// Reads one level's block; `true` when the level can stay active.
struct BlockSeed<'b, A: 'static, const L: usize, const N: usize> {
    behavior: Option<&'static ErasedBehavior<A>>,
    depth: usize,
    blocks: &'b mut Blocks<A, L, N>,
    fault: &'b Fault,
}

#[derive(Deserialize)]
#[serde(variant_identifier)]
enum BlockTag {
    None,
    Kept,
    Dropped,
}

impl<'de, A: 'static, const L: usize, const N: usize> DeserializeSeed<'de>
    for BlockSeed<'_, A, L, N>
{
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_enum(BLOCK, BLOCK_VARIANTS, self)
    }
}

impl<'de, A: 'static, const L: usize, const N: usize> Visitor<'de> for BlockSeed<'_, A, L, N> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a memory block")
    }

    fn visit_enum<E: EnumAccess<'de>>(self, data: E) -> Result<bool, E::Error> {
        let (tag, variant) = data.variant::<BlockTag>()?;
        let mismatch = |problem| match self.behavior {
            Some(b) => self.fault.raise::<E::Error>(SnapshotError::Block {
                behavior: b.name,
                depth: self.depth,
                problem,
            }),
            None => self.fault.raise::<E::Error>(SnapshotError::BadValue {
                what: "memory block of a level without a behavior",
            }),
        };
        match (tag, self.behavior) {
            (BlockTag::None, None) => {
                variant.unit_variant()?;
                Ok(true)
            }
            (BlockTag::None, Some(b)) if b.memory.size == 0 && b.persist.is_none() => {
                variant.unit_variant()?;
                // Nothing to read: the value is its type's only one.
                self.blocks.init(self.depth, b);
                Ok(true)
            }
            (BlockTag::Kept, Some(b)) if b.persist.is_some() => {
                if !b.memory.fits(N) {
                    return Err(mismatch("memory type larger than the block"));
                }
                variant.newtype_variant_seed(ValueSeed {
                    behavior: b,
                    depth: self.depth,
                    blocks: self.blocks,
                })?;
                Ok(true)
            }
            (BlockTag::Dropped, Some(b)) if b.memory.size != 0 => {
                variant.unit_variant()?;
                Ok(false)
            }
            (BlockTag::Kept, _) => Err(mismatch(
                "a saved value, but the behavior does not persist its memory",
            )),
            (BlockTag::None | BlockTag::Dropped, _) => Err(mismatch(
                "no saved value, but the behavior persists its memory",
            )),
        }
    }
}

/// Reads a persisted memory value into its block.
struct ValueSeed<'b, A: 'static, const L: usize, const N: usize> {
    behavior: &'static ErasedBehavior<A>,
    depth: usize,
    blocks: &'b mut Blocks<A, L, N>,
}

impl<'de, A: 'static, const L: usize, const N: usize> DeserializeSeed<'de>
    for ValueSeed<'_, A, L, N>
{
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let mut erased = <dyn erased_serde::Deserializer<'de>>::erase(d);
        self.blocks
            .load(self.depth, self.behavior, &mut erased)
            .map_err(|e| {
                de::Error::custom(format_args!(
                    "memory of behavior `{}` at depth {}: {e}",
                    self.behavior.name, self.depth
                ))
            })
    }
}
