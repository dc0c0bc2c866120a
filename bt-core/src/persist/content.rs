//! A value of a self-describing format, kept to be read later: the field
//! of a snapshot that a map (JSON, say) gives before the field the reader
//! needs next. Maps may come in any key order (a `serde_json::Value`
//! sorts them, so does `jq -S`); a snapshot is still read in its declared
//! order, because later fields are checked against earlier ones.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess,
    SeqAccess, VariantAccess, Visitor,
};

/// Any value a self-describing format can give.
#[derive(Debug)]
pub(crate) enum Content {
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(String),
    Bytes(Vec<u8>),
    Unit,
    None,
    Some(Box<Content>),
    Newtype(Box<Content>),
    Seq(Vec<Content>),
    Map(Vec<(Content, Content)>),
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ContentVisitor)
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Content, E> {
        Ok(Content::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Content, E> {
        Ok(Content::I64(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Content, E> {
        Ok(Content::U64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Content, E> {
        Ok(Content::F64(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Content, E> {
        Ok(Content::Str(v.into()))
    }
    fn visit_string<E>(self, v: String) -> Result<Content, E> {
        Ok(Content::Str(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Content, E> {
        Ok(Content::Bytes(v.into()))
    }
    fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Content, E> {
        Ok(Content::Bytes(v))
    }
    fn visit_unit<E>(self) -> Result<Content, E> {
        Ok(Content::Unit)
    }
    fn visit_none<E>(self) -> Result<Content, E> {
        Ok(Content::None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Content, D::Error> {
        Content::deserialize(d).map(|c| Content::Some(Box::new(c)))
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Content, D::Error> {
        Content::deserialize(d).map(|c| Content::Newtype(Box::new(c)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
        let mut items = Vec::new();
        while let Some(c) = seq.next_element()? {
            items.push(c);
        }
        Ok(Content::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Content, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Content::Map(entries))
    }
}

/// Reads a kept [`Content`] as the format would have read it.
pub(crate) struct ContentDeserializer<E> {
    content: Content,
    error: PhantomData<E>,
}

impl<E> ContentDeserializer<E> {
    pub(crate) fn new(content: Content) -> Self {
        ContentDeserializer {
            content,
            error: PhantomData,
        }
    }
}

impl<'de, E: de::Error> IntoDeserializer<'de, E> for Content {
    type Deserializer = ContentDeserializer<E>;

    fn into_deserializer(self) -> ContentDeserializer<E> {
        ContentDeserializer::new(self)
    }
}

impl<'de, E: de::Error> Deserializer<'de> for ContentDeserializer<E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        match self.content {
            Content::Bool(b) => v.visit_bool(b),
            Content::U64(n) => v.visit_u64(n),
            Content::I64(n) => v.visit_i64(n),
            Content::F64(x) => v.visit_f64(x),
            Content::Str(s) => v.visit_string(s),
            Content::Bytes(b) => v.visit_byte_buf(b),
            Content::Unit => v.visit_unit(),
            Content::None => v.visit_none(),
            Content::Some(c) => v.visit_some(ContentDeserializer::new(*c)),
            Content::Newtype(c) => v.visit_newtype_struct(ContentDeserializer::new(*c)),
            Content::Seq(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter());
                let value = v.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Content::Map(entries) => {
                let mut map = MapDeserializer::new(entries.into_iter());
                let value = v.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        match self.content {
            Content::None | Content::Unit => v.visit_none(),
            Content::Some(c) => v.visit_some(ContentDeserializer::new(*c)),
            other => v.visit_some(ContentDeserializer::new(other)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, E> {
        match self.content {
            Content::Newtype(c) => v.visit_newtype_struct(ContentDeserializer::new(*c)),
            other => v.visit_newtype_struct(ContentDeserializer::new(other)),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, E> {
        // A unit variant by its name, or a map of one entry: the variant's
        // name and its value.
        let (variant, value) = match self.content {
            Content::Map(entries) if entries.len() == 1 => {
                let mut entries = entries;
                let (k, val) = entries.remove(0);
                (k, Some(val))
            }
            other @ (Content::Str(_) | Content::U64(_)) => (other, None),
            _ => {
                return Err(de::Error::invalid_type(
                    de::Unexpected::Other("a value that is not an enum"),
                    &"a variant name or a map of one entry",
                ));
            }
        };
        v.visit_enum(EnumContent {
            variant,
            value,
            error: PhantomData,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// An enum value kept as its variant and its value.
struct EnumContent<E> {
    variant: Content,
    value: Option<Content>,
    error: PhantomData<E>,
}

impl<'de, E: de::Error> EnumAccess<'de> for EnumContent<E> {
    type Error = E;
    type Variant = VariantContent<E>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, VariantContent<E>), E> {
        let tag = seed.deserialize(ContentDeserializer::<E>::new(self.variant))?;
        Ok((
            tag,
            VariantContent {
                value: self.value,
                error: PhantomData,
            },
        ))
    }
}

/// The value of a kept enum variant.
struct VariantContent<E> {
    value: Option<Content>,
    error: PhantomData<E>,
}

impl<E: de::Error> VariantContent<E> {
    fn value(self, what: &'static str) -> Result<ContentDeserializer<E>, E> {
        match self.value {
            Some(c) => Ok(ContentDeserializer::new(c)),
            None => Err(de::Error::invalid_type(de::Unexpected::UnitVariant, &what)),
        }
    }
}

impl<'de, E: de::Error> VariantAccess<'de> for VariantContent<E> {
    type Error = E;

    fn unit_variant(self) -> Result<(), E> {
        match self.value {
            None | Some(Content::Unit) => Ok(()),
            Some(_) => Err(de::Error::invalid_type(
                de::Unexpected::NewtypeVariant,
                &"a unit variant",
            )),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, E> {
        seed.deserialize(self.value("a newtype variant")?)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, v: V) -> Result<V::Value, E> {
        self.value("a tuple variant")?.deserialize_any(v)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, E> {
        self.value("a struct variant")?.deserialize_any(v)
    }
}
