//! Numbers as `serde_json` writes them (its own formatter, for the
//! floats), into the text being gathered byte by byte ([`Text`]): a tick's
//! text is gathered on the stack ([`Line`]), and its pieces are short,
//! shorter than a call to copy them takes.

use alloc_crate::vec::Vec;
use std::io::{self, Write};

use serde_json::ser::{CompactFormatter, Formatter};

/// Where text is gathered.
pub(super) trait Text {
    /// Adds a byte.
    fn byte(&mut self, b: u8);

    /// Adds bytes.
    #[inline(always)]
    fn bytes(&mut self, text: &[u8]) {
        for &b in text {
            self.byte(b);
        }
    }
}

impl Text for Vec<u8> {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.push(b);
    }

    #[inline(always)]
    fn bytes(&mut self, text: &[u8]) {
        self.extend_from_slice(text);
    }
}

/// The size of a [`Line`].
pub(super) const LINE: usize = 4096;

/// Text gathered in room kept from tick to tick, its length in a local:
/// the caller makes sure it fits.
pub(super) struct Line<'b> {
    bytes: &'b mut [u8; LINE],
    len: usize,
}

impl<'b> Line<'b> {
    #[inline(always)]
    pub(super) fn new(bytes: &'b mut [u8; LINE]) -> Self {
        Line { bytes, len: 0 }
    }

    /// The text gathered.
    pub(super) fn text(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl Text for Line<'_> {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.bytes[self.len] = b;
        self.len += 1;
    }
}

/// A number's text: the longest `serde_json` writes is 24 bytes.
#[derive(Clone, Copy)]
pub(super) struct Small {
    len: u8,
    bytes: [u8; 24],
}

impl Small {
    const fn new() -> Self {
        Small {
            len: 0,
            bytes: [0; 24],
        }
    }

    pub(super) fn text(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl Text for Small {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        // Longer numbers there are not.
        if let Some(place) = self.bytes.get_mut(usize::from(self.len)) {
            *place = b;
            self.len += 1;
        }
    }
}

/// Hands `serde_json`'s formatter (or `write!`) a [`Text`].
struct Writes<'t, T>(&'t mut T);

impl<T: Text> Write for Writes<'_, T> {
    #[inline(always)]
    fn write(&mut self, text: &[u8]) -> io::Result<usize> {
        self.0.bytes(text);
        Ok(text.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The two digits of each number below 100.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// An unsigned integer in decimal, as `serde_json` writes it.
#[inline(always)]
pub(super) fn uint(out: &mut impl Text, x: u64) {
    if x < 10 {
        out.byte(b'0' + x as u8);
    } else if x < 100 {
        let pair = x as usize * 2;
        out.byte(PAIRS[pair]);
        out.byte(PAIRS[pair + 1]);
    } else {
        out.bytes(long_uint(x).text());
    }
}

/// The text of [`uint`] of three digits or more.
#[inline(never)]
fn long_uint(x: u64) -> Small {
    let mut digits = [0u8; 20];
    let (mut at, mut rest) = (digits.len(), x);
    while rest >= 100 {
        let pair = (rest % 100) as usize * 2;
        rest /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if rest >= 10 {
        let pair = rest as usize * 2;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + rest as u8;
    }
    let mut text = Small::new();
    text.bytes(&digits[at..]);
    text
}

/// The text of a mask as a recording writes it: `"0x…"`, in lowercase
/// hexadecimal without leading zeros.
#[inline(never)]
pub(super) fn hex(mask: u64) -> Small {
    let mut text = Small::new();
    text.bytes(b"\"0x");
    let digits = (64 - mask.leading_zeros()).div_ceil(4).max(1);
    for i in (0..digits).rev() {
        text.byte(b"0123456789abcdef"[(mask >> (4 * i) & 0xf) as usize]);
    }
    text.byte(b'"');
    text
}

/// The text of the numbers of one kind written lately, by their bits: the
/// ticks of a frame share their time, and times active repeat from agent
/// to agent. A slot per [`MEMO`]th of the bits' hash; a number that finds
/// its slot taken by another is written anew.
pub(super) struct Memo {
    keys: Vec<u64>,
    /// Each slot's text; none (empty) until one is kept there.
    texts: Vec<Small>,
}

/// Slots of a [`Memo`].
const MEMO: usize = 4096;

impl Memo {
    pub(super) fn new() -> Self {
        Memo {
            keys: alloc_crate::vec![0; MEMO],
            texts: alloc_crate::vec![Small::new(); MEMO],
        }
    }

    /// Writes the text of the number whose `key` it is, as `make` makes
    /// it.
    #[inline(always)]
    fn write(&mut self, out: &mut impl Text, key: u64, make: impl FnOnce() -> Small) {
        let slot = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 52) as usize % MEMO;
        if self.keys[slot] != key || self.texts[slot].len == 0 {
            self.keys[slot] = key;
            self.texts[slot] = make();
        }
        out.bytes(self.texts[slot].text());
    }

    /// An `f64`, as [`float`] writes it (a memo of `f64`s only).
    #[inline(always)]
    pub(super) fn float(&mut self, out: &mut impl Text, x: f64) {
        self.write(out, x.to_bits(), || {
            let mut text = Small::new();
            float(&mut text, x);
            text
        });
    }

    /// An `f32`, as [`short_text`] writes it (a memo of `f32`s only).
    #[inline(always)]
    pub(super) fn short(&mut self, out: &mut impl Text, x: f32) {
        self.write(out, u64::from(x.to_bits()), || short_text(x));
    }
}

/// An `f64` as `serde_json` writes the `Value` made of it: `null` when it
/// is not finite.
pub(super) fn float(out: &mut impl Text, x: f64) {
    if x.is_finite() {
        // Writing to a Text cannot fail.
        let _ = CompactFormatter.write_f64(&mut Writes(out), x);
    } else {
        out.bytes(b"null");
    }
}

/// An agent's value as the recording writes it: a number an `f32` holds
/// exactly (an `f32` the agent widened) as that `f32`'s shortest decimal
/// ([`short_text`]), any other as [`float`] writes it.
pub(super) fn value(out: &mut impl Text, x: f64) {
    match crate::export::as_f32(x) {
        Some(x) => out.bytes(short_text(x).text()),
        None => float(out, x),
    }
}

/// An `f32` as the recording writes it: the shortest decimal that reads
/// back as the same `f32`, as an `f64` (`0.033333335`, not
/// `0.03333333507180214`); `null` when it is not finite.
#[inline(never)]
fn short_text(x: f32) -> Small {
    let mut text = Small::new();
    if !x.is_finite() {
        text.bytes(b"null");
        return text;
    }
    // The f32's shortest digits, as serde_json writes an f32. An f64 of
    // the same digits is written alike, but for where the exponent starts:
    // below 1e-5 and from 1e13 on, one of the two takes one.
    let _ = CompactFormatter.write_f32(&mut Writes(&mut text), x);
    let written = text.text();
    let digits = written.strip_prefix(b"-").unwrap_or(written);
    if written.contains(&b'e') || digits.starts_with(b"0.00000") {
        text = Small::new();
        float(&mut text, crate::export::short_f64(x));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::short_text;

    /// The shortest decimal of an f32, written as the `Value` the recording
    /// used to make of it (formatted, read back as an f64).
    fn by_value(x: f32) -> String {
        serde_json::to_string(&crate::export::short_value(x)).unwrap()
    }

    #[track_caller]
    fn check(x: f32) {
        let text = short_text(x);
        assert_eq!(
            String::from_utf8(text.text().to_vec()).unwrap(),
            by_value(x),
            "{x:e} ({:#x})",
            x.to_bits()
        );
    }

    #[test]
    fn masks_and_integers_are_written_as_format_writes_them() {
        let mut s: u64 = 0x2545_f491_4f6c_dd1d;
        let mut xs = vec![0, 1, 9, 10, 99, 100, 101, 999, 1000, u64::MAX, 1 << 63];
        for _ in 0..10_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            xs.push(s);
            xs.push(s >> (s % 64));
        }
        for x in xs {
            assert_eq!(super::hex(x).text(), format!("\"{x:#x}\"").as_bytes());
            let mut text = Vec::new();
            super::uint(&mut text, x);
            assert_eq!(text, x.to_string().into_bytes());
        }
    }

    #[test]
    fn short_floats_read_back_as_themselves() {
        let mut s: u32 = 0x9e37_79b9;
        for _ in 0..100_000 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let x = f32::from_bits(s);
            let text = by_value(x);
            if x.is_finite() {
                let back: f32 = text.parse().unwrap();
                assert_eq!(back.to_bits(), x.to_bits(), "{text}");
            } else {
                assert_eq!(text, "null");
            }
        }
        // Of two as near, the even one: 2^-12 is 0.000244140625.
        assert_eq!(by_value(f32::from_bits(0x3980_0000)), "0.00024414062");
    }

    #[test]
    fn short_floats_are_written_as_the_values_are() {
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            0.25,
            1.0 / 3.0,
            0.033_333_335,
            1e-5,
            9.99e-6,
            1e-6,
            1.5e-6,
            -1.5e-6,
            1e-7,
            1e12,
            9.999e12,
            1e13,
            1.5e13,
            1e15,
            1e16,
            1e17,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            f32::EPSILON,
            1e-45,
            123_456_790.0,
            16_777_216.0,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ] {
            check(x);
        }
        // Every power of two, and a spread of bit patterns.
        for e in 0..255u32 {
            check(f32::from_bits(e << 23));
            check(f32::from_bits(e << 23 | 0x7f_ffff));
        }
        let mut s: u32 = 0x2545_f491;
        for _ in 0..200_000 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            check(f32::from_bits(s));
        }
    }
}
