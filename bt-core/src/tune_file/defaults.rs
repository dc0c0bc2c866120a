//! A starting file for a designer: every tunable of a table with its doc
//! lines, what it takes, and its default.

use alloc::string::String;
use core::fmt::Write as _;

use crate::decl::tune::{TunableKind, Tunables};

/// The text of a tuning file that sets every tunable of `table` to its
/// default, each under its doc lines and a line saying what it takes.
pub(crate) fn text(table: &Tunables) -> String {
    let mut out = String::new();
    // Writing to a `String` does not fail.
    let _ = write_text(&mut out, table);
    out
}

fn write_text(out: &mut String, table: &Tunables) -> core::fmt::Result {
    writeln!(out, "# The tunables of `{}`.", table.name())?;
    writeln!(
        out,
        "# A value saved here takes effect at the crowd's next tick; a tunable"
    )?;
    writeln!(out, "# left out of the file keeps the value it has.")?;
    for d in table.decls() {
        out.push('\n');
        for line in d.doc.lines() {
            writeln!(out, "#{}", line.trim_end())?;
        }
        let bits = d.default;
        match d.kind {
            TunableKind::Float { min, max } => {
                writeln!(
                    out,
                    "# A number from {min:?} to {max:?}; default {:?}.",
                    f64::from_bits(bits)
                )?;
                writeln!(out, "{} = {:?}", d.name, f64::from_bits(bits))?;
            }
            TunableKind::Int { min, max } => {
                writeln!(
                    out,
                    "# A whole number from {min} to {max}; default {}.",
                    bits as i64
                )?;
                writeln!(out, "{} = {}", d.name, bits as i64)?;
            }
            TunableKind::Bool => {
                writeln!(out, "# true or false; default {}.", bits != 0)?;
                writeln!(out, "{} = {}", d.name, bits != 0)?;
            }
            TunableKind::Choice { names } => {
                let default = names.get(bits as usize).copied().unwrap_or("");
                out.push_str("# One of");
                for (i, n) in names.iter().enumerate() {
                    let sep = if i == 0 { " " } else { ", " };
                    write!(out, "{sep}\"{n}\"")?;
                }
                writeln!(out, "; default \"{default}\".")?;
                writeln!(out, "{} = \"{default}\"", d.name)?;
            }
        }
    }
    Ok(())
}
