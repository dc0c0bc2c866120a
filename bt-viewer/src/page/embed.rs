//! How the page holds a recording: compressed (raw deflate) and written in
//! base64, so that the browser reads a quarter of the bytes, and with each
//! agent's values compressed on their own, so that the page opens without
//! unpacking them and unpacks an agent's values when it first shows them.

use miniz_oxide::deflate::core::{
    CompressorOxide, TDEFLFlush, TDEFLStatus, compress, create_comp_flags_from_zip_params,
};

/// How hard the compressor works: zlib's default, about four times smaller
/// than the JSON text for a large recording.
const LEVEL: i32 = 6;

/// The script elements holding recording `text` under the element id `id`:
/// `<script id="{id}">` with the text (without its agents' values when they
/// can be cut out, see [`cut_values`]; `data-size` its length in bytes,
/// `data-sum` their Adler-32)
/// and, then, `<script id="{id}-values">`
/// with each agent's values entry and the character after it. Both are raw
/// deflate in base64 (no `<`, so nothing in the recording can end the
/// script); the values element says in `data-agents` each entry's agent id
/// and the length of its base64 text, in order, in `data-sums` the
/// Adler-32 of each entry's text, and in `data-at` where
/// (in UTF-16 units, as JavaScript counts) the values array was cut out.
pub(super) fn scripts(id: &str, text: &str) -> String {
    let mut z = Deflater::new();
    let Some(cut) = cut_values(text) else {
        let whole = z.base64(text.as_bytes());
        let (size, sum) = (text.len(), adler32(text.as_bytes()));
        return format!(
            r#"<script id="{id}" type="{TYPE}" data-size="{size}" data-sum="{sum}">{whole}</script>"#
        );
    };
    let mut rest = String::with_capacity(text.len() - (cut.end - cut.at));
    rest.push_str(&text[..cut.at]);
    rest.push_str(&text[cut.end..]);
    let (size, sum) = (rest.len(), adler32(rest.as_bytes()));
    let rest = z.base64(rest.as_bytes());
    let mut agents = String::with_capacity(cut.entries.len() * 12);
    let mut sums = String::with_capacity(cut.entries.len() * 11);
    let mut values = String::new();
    for (agent, range) in &cut.entries {
        let bytes = &text.as_bytes()[range.clone()];
        let piece = z.base64(bytes);
        if !agents.is_empty() {
            agents.push(',');
            sums.push(',');
        }
        agents.push_str(&format!("{agent},{}", piece.len()));
        sums.push_str(&adler32(bytes).to_string());
        values.push_str(&piece);
    }
    format!(
        r#"<script id="{id}" type="{TYPE}" data-size="{size}" data-sum="{sum}">{rest}</script><script id="{id}-values" type="{TYPE}" data-at="{}" data-agents="{agents}" data-sums="{sums}">{values}</script>"#,
        text[..cut.at].encode_utf16().count()
    )
}

/// The Adler-32 checksum of `bytes` (RFC 1950): the page checks what it
/// unpacks against it, so that a damaged page says so.
fn adler32(bytes: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5 552 bytes at most between reductions keep `b` within a u32.
    for block in bytes.chunks(5552) {
        for &x in block {
            a += u32::from(x);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// The type of the script elements: data, not a script to run.
const TYPE: &str = "application/x-bt-recording+deflate-base64";

/// The top-level `"values"` array of a recording laid out as bt-viewer
/// writes it, as the page's reader finds it: `,"values":[` after
/// `"agents":[`, ending with `],"clock":{` or the text's final `]}`, made of
/// entries each starting `{"agent":` and an id no other entry has.
struct Cut {
    /// Where `,"values":[` starts.
    at: usize,
    /// Just after the array's `]`.
    end: usize,
    /// Each entry's agent id and text, with the character that follows it
    /// (the separator, or the array's `]` after the last): the entries end
    /// to end are the array's content and its end.
    entries: Vec<(i64, std::ops::Range<usize>)>,
}

/// The values array of `text` (see [`Cut`]), or `None` when the text is
/// not laid out so: the page then gets the text whole and reads it as a
/// file opened with its button.
fn cut_values(text: &str) -> Option<Cut> {
    const KEY: &str = r#","values":["#;
    const ENTRY: &str = r#"{"agent":"#;
    let at = text.find(KEY)?;
    if text.find(r#""agents":["#).is_some_and(|a| a > at) {
        return None;
    }
    let tail = text.trim_end();
    let close = match tail.rfind(r#"],"clock":{"#) {
        Some(c) if c >= at => c,
        _ if tail.ends_with("]}") && tail.len() - 2 >= at => tail.len() - 2,
        _ => return None,
    };
    let from = at + KEY.len();
    if close == from && text[from..].contains(ENTRY) {
        return None;
    }
    let mut starts = Vec::new();
    let mut p = from;
    while p < close {
        if !text[p..].starts_with(ENTRY) {
            return None;
        }
        starts.push(p);
        p = match text[p + ENTRY.len()..close].find(ENTRY) {
            Some(q) => p + ENTRY.len() + q,
            None => close,
        };
    }
    let mut seen = std::collections::HashSet::new();
    let mut entries = Vec::with_capacity(starts.len());
    for (k, &s) in starts.iter().enumerate() {
        let id = leading_integer(&text[s + ENTRY.len()..])?;
        if !seen.insert(id) {
            return None;
        }
        let e = starts.get(k + 1).copied().unwrap_or(close + 1);
        entries.push((id, s..e));
    }
    Some(Cut {
        at,
        end: close + 1,
        entries,
    })
}

/// The integer `text` starts with, as JavaScript's `parseInt` reads it
/// (spaces, a sign, digits), when it is one an `i64` holds exactly in a
/// double.
fn leading_integer(text: &str) -> Option<i64> {
    let t = text.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 15 {
        return None;
    }
    let n: i64 = t[..digits].parse().ok()?;
    Some(if neg { -n } else { n })
}

/// One compressor, reset for each piece.
struct Deflater(Box<CompressorOxide>);

impl Deflater {
    fn new() -> Self {
        Deflater(Box::new(CompressorOxide::new(
            create_comp_flags_from_zip_params(LEVEL, -15, 0),
        )))
    }

    /// `bytes` as raw deflate, in base64.
    fn base64(&mut self, bytes: &[u8]) -> String {
        base64(&self.deflate(bytes))
    }

    fn deflate(&mut self, mut input: &[u8]) -> Vec<u8> {
        self.0.reset();
        let mut out = vec![0; (input.len() / 3).max(64)];
        let mut len = 0;
        loop {
            let (status, read, wrote) =
                compress(&mut self.0, input, &mut out[len..], TDEFLFlush::Finish);
            len += wrote;
            input = &input[read..];
            match status {
                TDEFLStatus::Done => break,
                TDEFLStatus::Okay => {
                    if out.len() - len < 64 {
                        out.resize(out.len() * 2, 0);
                    }
                }
                // Only a wrong parameter makes it fail; they are fixed.
                other => unreachable!("deflate failed: {other:?}"),
            }
        }
        out.truncate(len);
        out
    }
}

/// `bytes` in base64 (RFC 4648, with padding).
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(char::from(ABC[(n >> (18 - 6 * k)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adler32_matches_rfc_1950() {
        // The example of RFC 1950's companion text and zlib's.
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(b""), 1);
        let long = vec![0xFFu8; 100_000];
        let (mut a, mut b) = (1u64, 0u64);
        for &x in &long {
            a = (a + u64::from(x)) % 65_521;
            b = (b + a) % 65_521;
        }
        assert_eq!(adler32(&long), ((b << 16) | a) as u32);
    }

    #[test]
    fn base64_matches_rfc_4648() {
        for (raw, b64) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), b64);
        }
    }

    #[test]
    fn deflate_round_trips() {
        let text = r#"{"agent":1,"fields":{"x":[1,2,3,1,2,3,1,2,3]}}"#.repeat(50);
        let z = Deflater::new().deflate(text.as_bytes());
        assert!(z.len() < text.len() / 10);
        let back = miniz_oxide::inflate::decompress_to_vec(&z).unwrap();
        assert_eq!(back, text.as_bytes());
    }

    #[test]
    fn values_are_cut_as_the_page_reads_them() {
        let text = r#"{"agents":[],"values":[{"agent":3,"fields":{}},{"agent":-1,"x":0}],"clock":{"first":0}}"#;
        let cut = cut_values(text).expect("laid out");
        assert_eq!(
            &text[cut.at..cut.end],
            r#","values":[{"agent":3,"fields":{}},{"agent":-1,"x":0}]"#
        );
        let entries: Vec<_> = cut
            .entries
            .iter()
            .map(|(id, r)| (*id, &text[r.clone()]))
            .collect();
        assert_eq!(
            entries,
            [
                (3, r#"{"agent":3,"fields":{}},"#),
                (-1, r#"{"agent":-1,"x":0}]"#)
            ]
        );
        let last = r#"{"agents":[],"values":[]}"#;
        assert_eq!(cut_values(last).map(|c| c.entries.len()), Some(0));
        for odd in [
            r#"{"values":[{"agent":1}],"agents":[]}"#,
            r#"{"agents":[],"values":[{"agent":1},{"agent":1}]}"#,
            r#"{"agents":[],"values":[ {"agent":1}]}"#,
            r#"{"agents":[],"values":[{"agent":x}]}"#,
            r#"{"agents":[],"values":[{"agent":1}"#,
            r#"{"agents":[],"values":[],"clock":{"x":{"agent":1}}}"#,
        ] {
            assert!(cut_values(odd).is_none(), "{odd}");
        }
    }
}
