  // ---------- live ----------
  // A ticks event's clock: the time of the frames its runs are at.
  function mergeClock(c) {
    if (typeof c.first !== "number" || !Array.isArray(c.now)) fail("A live clock is malformed.");
    if (!S.rec.clock) S.rec.clock = { first: c.first, now: [] };
    const clock = S.rec.clock;
    if (c.first < clock.first) { clock.now = new Array(clock.first - c.first).fill(null).concat(clock.now); clock.first = c.first; }
    c.now.forEach((t, i) => { if (typeof t === "number") clock.now[c.first - clock.first + i] = t; });
  }

  // The last tick of agent entry `a`, as its entries give it.
  function lastTick(a) {
    const j = a.ticks.length - 1, e = a.ticks[j];
    if (e.length === 7) return e;
    const b = baseOf(a, j), s = a.end - 1, now = S.rec.clock.now[s - S.rec.clock.first];
    const path = b[5].slice();
    for (let i = 0; i < path.length; i += 4) path[i + 2] = Math.fround(now - e[1][i / 4]);
    return [s, now, b[2], b[3], b[4], path, b[6]];
  }

  // Appends a ticks event's entries to agent entry `a`: ticks, and runs
  // of the tick before them (`[n]`: each level active since that tick's
  // time minus its time active). Returns the number of ticks added.
  function appendEntries(a, entries) {
    let added = 0;
    for (const e of entries) {
      const where = "live agent " + a.agent;
      if (Array.isArray(e) && e.length === 7) {
        checkTick(e, S.items.length, where);
        a.ticks.push(e); a.end = e[0] + 1; added += 1;
        continue;
      }
      if (!Array.isArray(e) || !(e.length === 1 || e.length === 2) || !(Number.isInteger(e[0]) && e[0] > 0) || a.ticks.length === 0)
        fail("The live stream is malformed at " + where + " (a run of repeats must follow a tick).");
      const prev = lastTick(a);
      let since = e[1];
      if (e.length === 1) {
        since = [];
        for (let i = 0; i < prev[5].length; i += 4) since.push(prev[1] - Math.fround(prev[5][i + 2]));
      }
      if (!Array.isArray(since) || since.length !== prev[5].length / 4) fail("The live stream is malformed at " + where + ".");
      for (let q = 0; q < e[0]; q++) if (typeof S.rec.clock.now[a.end + q - S.rec.clock.first] !== "number")
        fail("The live stream has no time for a run of " + where + ".");
      a.ticks.push([e[0], since]); a.end += e[0]; added += e[0];
    }
    return added;
  }

  // Appends a ticks event's values of an agent that had `before` ticks
  // and got `n` more.
  function appendValues(v, before, n) {
    let mine = S.values.get(v.agent);
    if (!mine) { mine = { agent: v.agent, fields: {}, overflow: [] }; S.values.set(v.agent, mine); }
    for (const name in v.fields) {
      if (!mine.fields[name]) mine.fields[name] = new Array(before).fill(null);
      for (const x of v.fields[name]) mine.fields[name].push(x);
    }
    for (const name in mine.fields) { const col = mine.fields[name]; while (col.length < before + n) col.push(null); col.length = before + n; }
    for (const s of v.overflow || []) mine.overflow.push(s);
  }

  // The most tick entries (ticks and runs, over every agent) a live page
  // keeps: past them it lets go of its oldest ticks, down to three
  // quarters of them, so that a page that follows a program for hours
  // neither grows without end nor slows down. `?keep=N` in the page's
  // address sets another number.
  const LIVE_KEEP = (() => {
    const n = Number(new URLSearchParams(location.search).get("keep"));
    return Number.isInteger(n) && n >= 100 ? n : 500000;
  })();

  // Entries of agent `a` that cover serial `cut` or later.
  function entriesFrom(a, cut) {
    let lo = 0, hi = a.ticks.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1, e = a.ticks[m];
      if (a.start[m] + (e.length === 7 ? 1 : e[0]) - 1 < cut) lo = m + 1; else hi = m;
    }
    return a.ticks.length - lo;
  }

  // Lets go of the oldest ticks of a live page that holds more than
  // LIVE_KEEP entries: every agent's ticks before the first serial that
  // leaves at most three quarters of them. A run cut there starts with the
  // tick it repeats, made whole. Returns whether it let go of any.
  function trimLive() {
    let total = 0;
    for (const a of S.agents) total += a.ticks.length;
    if (total <= LIVE_KEEP) return false;
    const aim = Math.floor(LIVE_KEEP * 3 / 4);
    let lo = S.first, hi = S.last;
    while (lo < hi) {
      const m = Math.floor((lo + hi) / 2);
      let n = 0;
      for (const a of S.agents) n += entriesFrom(a, m);
      if (n <= aim) hi = m; else lo = m + 1;
    }
    const cut = lo;
    S.agents.forEach((a, k) => {
      const from = a.ticks.length - entriesFrom(a, cut);
      let head = [];
      let j = from;
      if (j < a.ticks.length && a.ticks[j].length !== 7) {
        const e = a.ticks[j], s0 = Math.max(cut, a.start[j]), end = a.start[j] + e[0];
        head = [tickAt(k, s0)];
        if (end - s0 > 1) head.push([end - s0 - 1, e[1]]);
        j += 1;
      }
      // Kept ticks before the cut: their values go with them.
      const dropped = from < a.ticks.length ? a.pos[from] + Math.max(0, cut - a.start[from]) : a.kept;
      a.ticks = head.concat(a.ticks.slice(j));
      index(a);
      if (a.ticks.length > 0) a.first_tick = a.start[0];
      const v = S.values.get(a.agent);
      if (v) {
        for (const name in v.fields) v.fields[name] = v.fields[name].slice(dropped);
        v.overflow = v.overflow.filter(s => s >= cut);
      }
      S.spans[k] = spansOf(a);
    });
    const clock = S.rec.clock;
    if (clock && cut > clock.first) { clock.now = clock.now.slice(cut - clock.first); clock.first = cut; }
    return true;
  }

  function follow() {
    if (typeof EventSource === "undefined") { message("This browser cannot follow a live stream.", "error"); return; }
    S.live = true;
    message("Waiting for the running program…", "info");
    const es = new EventSource("events");
    if (window.btLive) window.btLive.attach(es, { state: () => S, seek, selectAgent }); // live controls
    es.addEventListener("recording", ev => {
      const atEnd = !S.rec || S.cursor === S.last;
      const sel = S.rec && S.agents[S.sel] ? S.agents[S.sel].agent : null;
      if (!loadText(ev.data, "live")) return;
      if (sel !== null) selectAgent(sel);
      if (atEnd) seek(S.last);
      message("Live: following the running program.", "info");
      if (window.btLive) window.btLive.update(); // live controls
    });
    es.addEventListener("ticks", ev => {
      try {
        if (!S.rec) return;
        const msg = JSON.parse(ev.data);
        const atEnd = S.cursor === S.last, wholeView = S.v0 === S.first && S.v1 === S.last, following = S.v1 === S.last;
        if (msg.clock) mergeClock(msg.clock);
        const added = new Map();
        for (const part of msg.agents) {
          let k = S.byId.get(part.agent);
          if (k === undefined) continue;
          const a = S.agents[k];
          added.set(part.agent, { before: a.kept, n: appendEntries(a, part.ticks) });
          index(a);
          if (a.ticks.length > 0) a.first_tick = a.start[0];
          S.spans[k] = spansOf(a);
        }
        for (const v of msg.values || []) { const n = added.get(v.agent); if (n) appendValues(v, n.before, n.n); }
        rangeFromAgents();
        if (trimLive()) {
          if (!S.trimmed) message("Live: following the running program, keeping its last ticks (up to " + LIVE_KEEP +
            " entries; ?keep=N in the address keeps another number).", "info");
          S.trimmed = true;
          rangeFromAgents();
          // A view of ticks let go of moves to the oldest kept, its width kept.
          const w = S.v1 - S.v0;
          if (S.v0 < S.first) { S.v0 = S.first; S.v1 = Math.min(S.last, Math.max(S.v1, S.first + w)); }
          S.cursor = Math.max(S.cursor, S.first);
        }
        countBehaviors();
        S.overviewCache = null;
        if (S.sel < S.agents.length) selectIndex();
        if (wholeView) { S.v0 = S.first; S.v1 = S.last; }
        else if (following) { const w = S.v1 - S.v0; S.v1 = S.last; S.v0 = Math.max(S.first, S.v1 - w); }
        if (atEnd) S.cursor = S.last;
        layout();
        render();
        if (window.btLive) window.btLive.update(); // live controls
      } catch (e) { showError(e); }
    });
    es.addEventListener("end", () => {
      es.close();
      message("Live: the running program has stopped (what it sent stays here).", "info");
    });
    es.onerror = () => { if (S.live) message("Live: the running program has stopped (what it sent stays here).", "info"); es.close(); };
  }

