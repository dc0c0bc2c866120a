//! A tuning file's text, checked whole against a table of tunables: every
//! key and value, before anything is staged.

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::TuneFileError;
use crate::decl::tune::value::bits_for;
use crate::decl::tune::{Tunables, TuneError, TuneValue};

/// A file's values, checked: the place of each tunable it sets in its
/// table, and the bits, in the file's order.
pub(crate) type Checked = Vec<(usize, u64)>;

/// Checks the file `path` of content `bytes` against `table`: the values
/// it sets, or the first fault in it, in the file's order.
pub(crate) fn check(
    path: &Path,
    bytes: &[u8],
    table: &'static Tunables,
) -> Result<Checked, TuneFileError> {
    let text = core::str::from_utf8(bytes).map_err(|e| TuneFileError::Syntax {
        path: path.into(),
        line: line_at(bytes, e.valid_up_to()),
        message: "not UTF-8 text".into(),
    })?;
    let doc = DeTable::parse(text).map_err(|e| TuneFileError::Syntax {
        path: path.into(),
        line: e.span().map_or(1, |s| line_at(bytes, s.start)),
        message: e.message().trim_end().into(),
    })?;
    // The keys as the file orders them (the reader sorts them).
    let mut entries: Vec<(&Spanned<Cow<'_, str>>, &Spanned<DeValue<'_>>)> =
        doc.get_ref().iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    let mut checked = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        let line = line_at(bytes, key.span().start);
        let Some(index) = table.find(key.get_ref()) else {
            return Err(TuneFileError::UnknownKey {
                path: path.into(),
                line,
                key: key.get_ref().to_string(),
                table: table.name(),
            });
        };
        let decl = &table.decls()[index];
        let found = || written(text, value.span());
        let wrong_type = || TuneFileError::WrongType {
            path: path.into(),
            line,
            key: decl.name,
            expected: decl.kind.name(),
            found: found(),
        };
        let given = match value.get_ref() {
            DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(v) => TuneValue::Int(v),
                // Past `i64`: outside any int or float tunable's range.
                Err(_) => {
                    return Err(TuneFileError::OutOfRange {
                        path: path.into(),
                        line,
                        key: decl.name,
                        found: found(),
                        kind: decl.kind,
                    });
                }
            },
            DeValue::Float(x) => match x.as_str().parse::<f64>() {
                Ok(v) => TuneValue::Float(v),
                Err(_) => return Err(wrong_type()),
            },
            DeValue::Boolean(b) => TuneValue::Bool(*b),
            DeValue::String(s) => TuneValue::Name(Cow::Owned(s.to_string())),
            _ => return Err(wrong_type()),
        };
        match bits_for(decl.name, decl.kind, given) {
            Ok(bits) => checked.push((index, bits)),
            Err(TuneError::OutOfRange { kind, .. }) => {
                return Err(TuneFileError::OutOfRange {
                    path: path.into(),
                    line,
                    key: decl.name,
                    found: found(),
                    kind,
                });
            }
            Err(_) => return Err(wrong_type()),
        }
    }
    Ok(checked)
}

/// The line (from 1) of byte `at` of `bytes`.
fn line_at(bytes: &[u8], at: usize) -> usize {
    let at = at.min(bytes.len());
    1 + bytes[..at].iter().filter(|&&b| b == b'\n').count()
}

/// The value at `span` of `text` as the file writes it, on one line and
/// cut short if long.
fn written(text: &str, span: core::ops::Range<usize>) -> String {
    const MAX: usize = 40;
    let raw = text.get(span).unwrap_or("").trim();
    let line = raw.lines().next().unwrap_or("");
    match line.char_indices().nth(MAX) {
        Some((cut, _)) => alloc::format!("{}…", &line[..cut]),
        None if line.len() < raw.len() => alloc::format!("{line}…"),
        None => line.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_counts_from_one() {
        assert_eq!(line_at(b"a\nb\nc", 0), 1);
        assert_eq!(line_at(b"a\nb\nc", 2), 2);
        assert_eq!(line_at(b"a\nb\nc", 99), 3);
    }

    #[test]
    fn a_value_is_shown_on_one_line_and_cut_short() {
        assert_eq!(written("x = [1,\n 2]", 4..11), "[1,…");
        let long = alloc::format!("\"{}\"", "a".repeat(50));
        assert_eq!(written(&long, 0..long.len()).chars().count(), 41);
        assert_eq!(written("x = true ", 4..9), "true");
    }
}
