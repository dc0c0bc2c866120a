//! The agents' own values: what a watched agent says about itself at each
//! recorded tick ([`AgentData`]), kept beside the frames in room set aside
//! once.
//!
//! Each (frame, lane) has a block of `1 + 2 × fields` words and
//! `text_bytes` bytes. The block's first word is the number of fields
//! written, with bit 63 set when some did not fit ([`OVERFLOW`]) or
//! [`NO_DATA`] when the tick has no values. A field is two words: the
//! name's id | kind << 16 | text length << 32, then the number's bits or
//! the text's offset in the block's bytes. Names are interned once, in a
//! table of at most [`DataCapacity::names`] names.

use alloc_crate::vec;
use alloc_crate::vec::Vec;

/// What a watched agent records about itself at each tick: its health,
/// its target, its hunger, whatever the game chooses. Implemented by the
/// game for its agent type and used by
/// [`FlightRecorder::tick_all_with_data`](crate::FlightRecorder::tick_all_with_data);
/// agents without it are ticked with
/// [`tick_all`](crate::FlightRecorder::tick_all) and record no values.
///
/// `record` is called for watched agents only, after the tick's input
/// closure ran for the agent and before its tick: the values are those
/// the tick's decisions saw.
///
/// ```
/// use bt_viewer::{AgentData, DataOut};
///
/// struct Wolf { hunger: f32, prey: Option<&'static str> }
///
/// impl AgentData for Wolf {
///     fn record(&self, out: &mut DataOut<'_>) {
///         out.num("hunger", f64::from(self.hunger));
///         out.text("prey", self.prey.unwrap_or("-"));
///     }
/// }
/// ```
pub trait AgentData {
    /// Writes this tick's values into `out`.
    fn record(&self, out: &mut DataOut<'_>);
}

/// Room for the agents' values of [`AgentData`], per watched agent and
/// recorded tick, set aside once by
/// [`FlightRecorder::with_data`](crate::FlightRecorder::with_data).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataCapacity {
    /// Values per tick: more are dropped and the tick marked.
    pub fields: usize,
    /// Bytes of text per tick (over all the tick's text values): a text
    /// that does not fit is cut (at a character boundary) and the tick
    /// marked.
    pub text_bytes: usize,
    /// Distinct field names over the whole run: a value with a new name
    /// past these is dropped and the tick marked. At most 65 535 are kept
    /// (a name's id takes 16 bits).
    pub names: usize,
}

impl DataCapacity {
    /// Room for `values` numbers a tick per watched agent (what its
    /// [`AgentData::record`] writes with `num`), no text, and 64 names.
    pub const fn values(values: usize) -> Self {
        DataCapacity::new(values, 0)
    }

    /// Room for `fields` values a tick per watched agent (numbers and
    /// texts: one per `num` or `text` call of [`AgentData::record`]) and
    /// `text_bytes` bytes of text over the tick's texts (a target's name
    /// or two: 32), and 64 field names.
    pub const fn new(fields: usize, text_bytes: usize) -> Self {
        DataCapacity {
            fields,
            text_bytes,
            names: 64,
        }
    }

    /// Bytes one watched agent takes per tick kept.
    pub fn bytes_per_tick(&self) -> usize {
        (1 + 2 * self.fields) * 8 + self.text_bytes
    }
}

impl Default for DataCapacity {
    /// 8 values and 64 bytes of text a tick.
    fn default() -> Self {
        DataCapacity::new(8, 64)
    }
}

/// First word of a block whose tick recorded no values.
pub(crate) const NO_DATA: u64 = u64::MAX;
/// Set in a block's first word when some values did not fit.
pub(crate) const OVERFLOW: u64 = 1 << 63;

const NUM: u64 = 0;
const TEXT: u64 = 1;

/// Where an agent writes its values for one tick: see [`AgentData`].
/// Nothing it does allocates; what does not fit is dropped and the tick
/// marked as overflowing.
pub struct DataOut<'r> {
    names: &'r mut Vec<&'static str>,
    /// Per field position: the name id found there last time, tried first.
    order: &'r mut [u16],
    max_names: usize,
    fields: &'r mut [u64],
    text: &'r mut [u8],
    n: usize,
    text_len: usize,
    overflow: bool,
}

impl DataOut<'_> {
    /// The id of `name`, interned on first use. A crowd's agents write
    /// their values in the same order, tick after tick, so the id found at
    /// the same position in the last block recorded is tried first: no
    /// search but for a field that moved or is new (agents that write
    /// other fields in turn search more).
    #[inline]
    fn id(&mut self, name: &'static str) -> Option<u64> {
        let hint = usize::from(self.order[self.n]);
        if self
            .names
            .get(hint)
            .is_some_and(|n| core::ptr::eq(*n, name))
        {
            return Some(hint as u64);
        }
        let id = self.search(name)?;
        self.order[self.n] = id as u16;
        Some(id as u64)
    }

    /// The id of `name` found among the names, or given to it.
    #[cold]
    fn search(&mut self, name: &'static str) -> Option<usize> {
        let found = self
            .names
            .iter()
            .position(|n| core::ptr::eq(*n, name))
            .or_else(|| self.names.iter().position(|n| *n == name));
        match found {
            Some(i) => Some(i),
            None if self.names.len() < self.max_names => {
                self.names.push(name);
                Some(self.names.len() - 1)
            }
            None => None,
        }
    }

    fn push(&mut self, name: &'static str, head: u64, value: u64) -> bool {
        if 2 * self.n + 2 > self.fields.len() {
            self.overflow = true;
            return false;
        }
        let Some(id) = self.id(name) else {
            self.overflow = true;
            return false;
        };
        self.fields[2 * self.n] = id | head << 16;
        self.fields[2 * self.n + 1] = value;
        self.n += 1;
        true
    }

    /// A number: plotted over time under the agent's lane. One that an
    /// `f32` holds exactly (`f64::from(hunger)` of an `f32` hunger) is
    /// written in the recording as that `f32`'s shortest decimal.
    pub fn num(&mut self, name: &'static str, value: f64) {
        self.push(name, NUM, value.to_bits());
    }

    /// A text, such as the name of a target. Cut to what fits.
    pub fn text(&mut self, name: &'static str, value: &str) {
        let room = self.text.len() - self.text_len;
        let mut len = value.len().min(room).min(usize::from(u16::MAX));
        while !value.is_char_boundary(len) {
            len -= 1;
        }
        let at = self.text_len;
        if self.push(name, TEXT | (len as u64) << 16, at as u64) {
            self.text[at..at + len].copy_from_slice(&value.as_bytes()[..len]);
            self.text_len += len;
            self.overflow |= len < value.len();
        }
    }
}

/// A recorded value, decoded for the export.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum DataValue {
    Num(f64),
    Text(alloc_crate::string::String),
}

/// The values of every (frame, lane), set aside once.
#[derive(Clone, Debug)]
pub(crate) struct DataStore {
    pub(crate) capacity: DataCapacity,
    pub(crate) names: Vec<&'static str>,
    /// Per field position, the name id last found there (see `DataOut::id`).
    order: Vec<u16>,
    words: Vec<u64>,
    bytes: Vec<u8>,
    block_words: usize,
}

impl DataStore {
    pub(crate) fn new(capacity: DataCapacity, blocks: usize) -> Self {
        let block_words = 1 + 2 * capacity.fields;
        DataStore {
            capacity,
            names: Vec::with_capacity(capacity.names),
            order: vec![u16::MAX; capacity.fields],
            words: vec![NO_DATA; blocks * block_words],
            bytes: vec![0; blocks * capacity.text_bytes],
            block_words,
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        self.words.len() * 8 + self.bytes.len() + self.names.capacity() * 16
    }

    /// Marks block `block` as holding no values.
    #[inline]
    pub(crate) fn clear(&mut self, block: usize) {
        self.words[block * self.block_words] = NO_DATA;
    }

    /// Records `agent`'s values into block `block`.
    #[inline]
    pub(crate) fn record<A: AgentData + ?Sized>(&mut self, block: usize, agent: &A) {
        let w = block * self.block_words;
        let t = block * self.capacity.text_bytes;
        let (head, fields) = self.words[w..w + self.block_words].split_at_mut(1);
        let mut out = DataOut {
            max_names: self.capacity.names.min(usize::from(u16::MAX)),
            names: &mut self.names,
            order: &mut self.order,
            fields,
            text: &mut self.bytes[t..t + self.capacity.text_bytes],
            n: 0,
            text_len: 0,
            overflow: false,
        };
        agent.record(&mut out);
        head[0] = out.n as u64 | if out.overflow { OVERFLOW } else { 0 };
    }

    /// The values of block `block`: (name id, value) pairs and whether
    /// some were dropped; `None` when the tick recorded none.
    pub(crate) fn read(&self, block: usize) -> Option<(Vec<(usize, DataValue)>, bool)> {
        self.raw(block)
            .map(|(words, text)| Self::read_raw(words, text))
    }
}

/// A block as it is, and read: the live view's game thread copies a block
/// and its server thread reads the copy; the export reads it in place.
impl DataStore {
    /// The words (the count, then two per value) and the text bytes that
    /// block `block` uses; `None` when its tick recorded no values.
    pub(crate) fn raw(&self, block: usize) -> Option<(&[u64], &[u8])> {
        let w = block * self.block_words;
        let head = self.words[w];
        if head == NO_DATA {
            return None;
        }
        let n = (head & !OVERFLOW) as usize;
        let words = &self.words[w..w + 1 + 2 * n];
        let used = (0..n)
            .filter(|i| (words[1 + 2 * i] >> 16) & 1 == TEXT)
            .map(|i| words[2 + 2 * i] as usize + (words[1 + 2 * i] >> 32) as usize)
            .max()
            .unwrap_or(0);
        let text = &self.bytes[block * self.capacity.text_bytes..][..used];
        Some((words, text))
    }

    /// The values of a block copied from [`raw`](Self::raw): (name id,
    /// value) pairs and whether some were dropped.
    pub(crate) fn read_raw(words: &[u64], text: &[u8]) -> (Vec<(usize, DataValue)>, bool) {
        let head = words[0];
        let n = (head & !OVERFLOW) as usize;
        let values = (0..n)
            .map(|i| {
                let (h, v) = (words[1 + 2 * i], words[2 + 2 * i]);
                let id = (h & 0xffff) as usize;
                let value = if (h >> 16) & 1 == TEXT {
                    let (at, len) = (v as usize, (h >> 32) as usize);
                    DataValue::Text(
                        alloc_crate::string::String::from_utf8_lossy(&text[at..at + len])
                            .into_owned(),
                    )
                } else {
                    DataValue::Num(f64::from_bits(v))
                };
                (id, value)
            })
            .collect();
        (values, head & OVERFLOW != 0)
    }
}
