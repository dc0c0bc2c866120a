//! What a stream follows: every lane, or the lanes its page shows. A page
//! of a large crowd asks for its lanes when it comes (`GET
//! /events?first=N&agents=…`) and names them again as they change (`POST
//! /view`); its stream then carries those lanes' ticks and the crowd's
//! summary, and a `lanes` event with the kept ticks of each lane it starts
//! to follow.

use std::sync::Arc;

use serde::Deserialize;

use super::stream::Hub;

/// The most lanes a stream may follow by name (a page shows a few dozen).
pub(super) const MAX_VIEW: usize = 512;

/// A `POST /view` body: stream `stream` follows the lanes of `agents`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ViewRequest {
    pub(super) stream: u64,
    pub(super) agents: Vec<u32>,
}

/// The lanes an `/events` request's query asks for: `first=N` (the first
/// `N` lanes) and `agents=a,b,…` (those agents' lanes); `Ok(None)` when it
/// names neither (every lane), and what is at fault otherwise.
pub(super) fn asked(query: Option<&str>) -> Result<Option<(usize, Vec<u32>)>, String> {
    let (mut first, mut agents, mut any) = (0, Vec::new(), false);
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "first" => {
                first = value
                    .parse::<usize>()
                    .map_err(|_| format!("first={value} is not a number of lanes"))?
                    .min(MAX_VIEW);
                any = true;
            }
            "agents" => {
                for id in value.split([',', '+']).filter(|v| !v.is_empty()) {
                    let id = id
                        .parse::<u32>()
                        .map_err(|_| format!("agents= holds {id}, which is not an agent's id"))?;
                    agents.push(id);
                }
                if agents.len() > MAX_VIEW {
                    return Err(format!(
                        "agents= names {} agents; a stream follows {MAX_VIEW} at most",
                        agents.len()
                    ));
                }
                any = true;
            }
            _ => {}
        }
    }
    Ok(any.then_some((first, agents)))
}

/// Why a view could not be set.
pub(super) enum Refused {
    /// No stream of that number follows (it ended, or never was).
    NoStream,
    TooMany,
}

impl Hub {
    /// Stream `stream` now follows the lanes of `agents`: it gets a `lanes`
    /// event with the kept ticks of those it did not follow, and from the
    /// next publish on the `ticks` of these only.
    pub(super) fn set_view(&self, request: &ViewRequest) -> Result<(), Refused> {
        if request.agents.len() > MAX_VIEW {
            return Err(Refused::TooMany);
        }
        let snapshot = self.snapshot();
        let budget = self.limits.backlog_bytes;
        let mut streams = self.lock();
        let seen = streams.seen;
        let Some(at) = streams
            .joined
            .iter()
            .position(|c| c.id == request.stream && c.asked.is_some())
        else {
            return Err(Refused::NoStream);
        };
        let client = &mut streams.joined[at];
        let view = snapshot.slots_of(0, &request.agents);
        let before = client.view.clone().unwrap_or_else(|| Arc::from([]));
        let added: Vec<u32> = view
            .iter()
            .copied()
            .filter(|s| before.binary_search(s).is_err())
            .collect();
        client.view = Some(view);
        client.asked = Some((0, request.agents.clone()));
        // The lanes asked for come whatever their size: a page that
        // reads its stream is not dropped for asking.
        if !added.is_empty() && !client.reply(snapshot.lanes_event(seen, &added), budget) {
            streams.joined.remove(at);
        }
        Ok(())
    }
}
