//! The page's questions about the whole crowd, answered from the words
//! the server keeps: which agents entered a decider, were rejected at
//! one, ran one, or had a Subset Rule report or an error, between two
//! ticks, and the first tick each did.

use std::collections::HashMap;

use super::Snapshot;
use crate::recorder::{ERROR_BITS, ERROR_SHIFT, HEADER, Kind};

/// What a `GET /query` asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::live) struct Query {
    pub(in crate::live) kind: QueryKind,
    /// The decider (item index); none for [`QueryKind::Trouble`].
    pub(in crate::live) item: u16,
    /// The rejection's code (as the legend names them), or any.
    pub(in crate::live) reason: Option<u8>,
    pub(in crate::live) from: u64,
    pub(in crate::live) to: u64,
}

/// The kinds of question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::live) enum QueryKind {
    Entered,
    Rejected,
    Ran,
    Trouble,
}

impl Query {
    /// The question of a query string: `kind` (`entered`, `rejected`,
    /// `ran`, `trouble`), `item`, `reason` (negative or absent: any),
    /// `from`, `to`; what is at fault otherwise.
    pub(in crate::live) fn parse(query: Option<&str>) -> Result<Self, String> {
        let mut q = Query {
            kind: QueryKind::Trouble,
            item: 0,
            reason: None,
            from: 0,
            to: u64::MAX,
        };
        let mut kind = None;
        let mut seen: Vec<&str> = Vec::new();
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if seen.contains(&key) {
                return Err(format!("{key} is given twice"));
            }
            seen.push(key);
            // Any whole number (a tick past the last is the last).
            let number = || {
                value
                    .parse::<i128>()
                    .map_err(|_| format!("{key}={value} is not a whole number"))
            };
            match key {
                "kind" => {
                    kind = Some(match value {
                        "entered" => QueryKind::Entered,
                        "rejected" => QueryKind::Rejected,
                        "ran" => QueryKind::Ran,
                        "trouble" => QueryKind::Trouble,
                        _ => {
                            return Err(format!(
                                "kind={value}: a query is of kind entered, rejected, ran or trouble"
                            ));
                        }
                    });
                }
                "item" => {
                    q.item = u16::try_from(number()?)
                        .map_err(|_| format!("item={value} is no decider's index"))?;
                }
                "reason" => q.reason = u8::try_from(number()?).ok(),
                "from" => q.from = number()?.clamp(0, u64::MAX.into()) as u64,
                "to" => q.to = number()?.clamp(0, u64::MAX.into()) as u64,
                _ => {}
            }
        }
        q.kind = kind.ok_or("a query names its kind (kind=entered, rejected, ran or trouble)")?;
        Ok(q)
    }
}

impl Snapshot {
    /// The agents whose kept ticks within `q.from..=q.to` answer `q`, with
    /// the first such tick each, in order of that tick (then of agent);
    /// `Err` naming the decider when the tree has none of that index.
    pub(in crate::live) fn query(&self, q: &Query) -> Result<Vec<(u32, u64)>, String> {
        let Some(tree) = self.tree() else {
            return Ok(Vec::new());
        };
        if q.kind != QueryKind::Trouble && usize::from(q.item) >= tree.items.len() {
            return Err(format!(
                "item={}: the tree has {} deciders",
                q.item,
                tree.items.len()
            ));
        }
        let mut first: HashMap<u32, u64> = HashMap::new();
        let mut own = Vec::new();
        for delta in &self.deltas {
            for e in &delta.entries {
                if e.serial < q.from || e.serial > q.to {
                    continue;
                }
                if first.get(&e.agent).is_some_and(|&t| t <= e.serial) {
                    continue;
                }
                own.clear();
                delta.read_into(e.serial, &delta.words[e.start..e.start + e.len], &mut own);
                if answers(&own, q) {
                    first.insert(e.agent, e.serial);
                }
            }
        }
        let mut out: Vec<(u32, u64)> = first.into_iter().collect();
        out.sort_by_key(|&(agent, tick)| (tick, agent));
        Ok(out)
    }
}

/// Whether the tick whose words (standing alone) are `own` answers `q`.
fn answers(own: &[u64], q: &Query) -> bool {
    let h = own[1];
    let events = usize::from((h >> 32) as u16);
    let levels = usize::from((h >> 48) as u8);
    let flags = (h >> 56) as u8;
    let evs = &own[HEADER..HEADER + events];
    let of = |w: u64| ((w as u8), ((w >> 8) as u8), ((w >> 16) as u16));
    match q.kind {
        QueryKind::Entered => evs.iter().any(|&w| {
            let (k, _, item) = of(w);
            k == Kind::Activated as u8 && item == q.item
        }),
        QueryKind::Rejected => evs.iter().any(|&w| {
            let (k, code, item) = of(w);
            k == Kind::Rejected as u8 && item == q.item && q.reason.is_none_or(|r| r == code)
        }),
        QueryKind::Ran => own[HEADER + events..][..2 * levels]
            .chunks_exact(2)
            .any(|l| l[0] as u16 == q.item),
        QueryKind::Trouble => {
            (flags >> ERROR_SHIFT) & ERROR_BITS != 0
                || evs.iter().any(|&w| {
                    let k = w as u8;
                    k == Kind::SubsetViolation as u8 || k == Kind::RedecideLimit as u8
                })
        }
    }
}
