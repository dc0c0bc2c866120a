//! The agents' values, gathered by field and written as the recording's
//! [`AgentValues`](crate::AgentValues) serialize.

use alloc_crate::string::String;
use alloc_crate::vec::Vec;
use std::io;

use super::numbers::{uint, value};
use crate::recorder::DataValue;

/// One agent's values, gathered by field: the room is kept from agent to
/// agent.
#[derive(Default)]
pub(super) struct Values {
    /// Per name id, a value per kept tick of the agent.
    fields: Vec<Vec<Option<DataValue>>>,
    /// Fields in use for this agent.
    used: usize,
    overflow: Vec<u64>,
    /// The agent's kept ticks.
    n: usize,
    /// Whether one of them recorded values.
    any: bool,
}

impl Values {
    /// Starts gathering the values of an agent with `n` kept ticks.
    pub(super) fn reset(&mut self, n: usize) {
        for field in &mut self.fields[..self.used] {
            field.clear();
        }
        self.used = 0;
        self.overflow.clear();
        self.n = n;
        self.any = false;
    }

    /// The values recorded at the agent's `j`-th kept tick, of frame
    /// `serial`; `over` when some were dropped.
    pub(super) fn add(
        &mut self,
        j: usize,
        serial: u64,
        values: Vec<(usize, DataValue)>,
        over: bool,
    ) {
        self.any = true;
        if over {
            self.overflow.push(serial);
        }
        for (id, v) in values {
            if self.used <= id {
                if self.fields.len() <= id {
                    self.fields.resize_with(id + 1, Vec::new);
                }
                for field in &mut self.fields[self.used..=id] {
                    field.resize(self.n, None);
                }
                self.used = id + 1;
            }
            if let Some(place) = self.fields[id].get_mut(j) {
                *place = Some(v);
            }
        }
    }

    /// Whether a tick of the agent recorded values.
    pub(super) fn any(&self) -> bool {
        self.any
    }

    /// Writes them as an [`AgentValues`](crate::AgentValues) serializes:
    /// the fields named and not all null, by id.
    pub(super) fn write(
        &self,
        buf: &mut Vec<u8>,
        agent: u32,
        names: &[&'static str],
    ) -> io::Result<()> {
        let null = |v: &Option<DataValue>| match v {
            None => true,
            Some(DataValue::Num(x)) => !x.is_finite(),
            Some(DataValue::Text(_)) => false,
        };
        buf.extend_from_slice(b"{\"agent\":");
        uint(buf, u64::from(agent));
        buf.extend_from_slice(b",\"fields\":{");
        // In the order a `serde_json::Map` keeps them (by name, or as
        // inserted with its `preserve_order` feature), which the names
        // alone tell.
        let order: serde_json::Map<String, serde_json::Value> = self.fields[..self.used]
            .iter()
            .enumerate()
            .filter(|(id, field)| *id < names.len() && !field.iter().all(null))
            .map(|(id, _)| (names[id].into(), id.into()))
            .collect();
        for (i, (name, id)) in order.iter().enumerate() {
            let field = &self.fields[id.as_u64().unwrap_or(0) as usize];
            if i > 0 {
                buf.push(b',');
            }
            serde_json::to_writer(&mut *buf, name)?;
            buf.extend_from_slice(b":[");
            for (j, v) in field.iter().enumerate() {
                if j > 0 {
                    buf.push(b',');
                }
                match v {
                    None => buf.extend_from_slice(b"null"),
                    Some(DataValue::Num(x)) => value(buf, *x),
                    Some(DataValue::Text(s)) => serde_json::to_writer(&mut *buf, s)?,
                }
            }
            buf.push(b']');
        }
        buf.extend_from_slice(b"},\"overflow\":[");
        for (i, &serial) in self.overflow.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            uint(buf, serial);
        }
        buf.extend_from_slice(b"]}");
        Ok(())
    }
}
