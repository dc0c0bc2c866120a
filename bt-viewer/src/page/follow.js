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
    // A page that follows some lanes holds ticks of those only.
    if (S.loaded) for (const id of S.loaded) { const k = S.byId.get(id); if (k !== undefined) total += S.agents[k].ticks.length; }
    else for (const a of S.agents) total += a.ticks.length;
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
    S.trimCut = cut;
    return true;
  }

  // The live stream: the page asks for the lanes it shows (the first ones
  // until it knows), gets their ticks and the whole crowd's per-tick
  // counts, and names its lanes again as they change (crowd.js). A stream
  // that breaks is opened again, sooner or later (backoff); only an `end`
  // event says the program stopped, or a long time without an answer.
  const LIVE_FIRST = 64;
  function follow() {
    if (typeof EventSource === "undefined") { message("This browser cannot follow a live stream.", "error"); return; }
    S.live = true;
    S.link = { es: null, lost: null, delay: 250, timer: null, ended: false, reconnects: 0, said: [], messages: 0, bytes: 0, busy: 0, draws: 0 };
    message("Waiting for the running program…", "info");
    connect();
  }

  function connect() {
    const L = S.link;
    const view = S.stream !== undefined ? viewWanted() : [];
    const es = new EventSource("events?first=" + (view.length ? 0 : LIVE_FIRST) + (view.length ? "&agents=" + view.join(",") : ""));
    L.es = es;
    const mine = f => ev => { if (L.es !== es) return; try { f(ev); } catch (e) { showError(e); } };
    if (window.btLive) window.btLive.attach(es, { state: () => S, seek, selectAgent }); // live controls
    es.addEventListener("recording", mine(ev => {
      const atEnd = !S.rec || S.cursor === S.last;
      const sel = S.rec && S.agents[S.sel] ? S.agents[S.sel].agent : null;
      if (!loadText(ev.data, "live")) return;
      S.stream = undefined;
      S.resume = { sel, atEnd };
    }));
    es.addEventListener("crowd", mine(ev => {
      onCrowd(JSON.parse(ev.data));
      const r = S.resume || {};
      if (r.sel !== null && r.sel !== undefined) selectAgent(r.sel);
      if (r.atEnd !== false) seek(S.last);
      if (L.lost !== null) { L.reconnects += 1; say("Live: reconnected; following the running program."); }
      else say("Live: following the running program." + windowNote());
      L.lost = null; L.delay = 250;
      if (window.btLive) window.btLive.update(); // live controls
    }));
    es.addEventListener("ticks", mine(ev => {
      const t0 = performance.now();
      onTicks(JSON.parse(ev.data));
      L.messages += 1; L.bytes += ev.data.length; L.busy += performance.now() - t0;
    }));
    es.addEventListener("lanes", mine(ev => onLanes(JSON.parse(ev.data))));
    es.addEventListener("tuning", mine(ev => onTuning(JSON.parse(ev.data))));
    es.addEventListener("end", mine(() => {
      L.ended = true; es.close();
      say("Live: the running program has stopped (what it sent stays here).");
    }));
    es.onerror = () => { if (L.es !== es) return; es.close(); lost(); };
  }

  // Says how the stream stands (the last few sayings are kept).
  function say(text) {
    message(text, "info");
    const said = S.link.said;
    if (said[said.length - 1] !== text) said.push(text);
    if (said.length > 20) said.shift();
  }

  // The stream broke (or could not open): try again, sooner or later.
  function lost() {
    const L = S.link;
    if (L.ended) return;
    if (L.lost === null) L.lost = performance.now();
    const gone = (performance.now() - L.lost) / 1000;
    say(gone < 20 ? "Live: connection lost, reconnecting…" :
      "Live: the running program has stopped or cannot be reached (no answer for " + Math.round(gone) +
      " s; what it sent stays here). Still trying…");
    clearTimeout(L.timer);
    L.timer = setTimeout(connect, L.delay);
    L.delay = Math.min(L.delay * 2, 4000);
  }

  // A ticks event: the new ticks of the lanes followed, and the crowd's
  // counts. Work in proportion to what it brings.
  function onTicks(msg) {
    if (!S.rec || S.stream === undefined) return;
    const atEnd = S.cursor === S.last, wholeView = S.v0 === S.first && S.v1 === S.last, following = S.v1 === S.last;
    // The query's range and the scrubber are written when the page draws.
    const qTo = $("q-to");
    S.qFollows = S.qFollows || qTo.value === "" || Number(qTo.value) === S.last;
    if (msg.clock) mergeClock(msg.clock);
    if (msg.crowd) addCrowd(msg.crowd);
    const added = new Map();
    for (const part of msg.agents) {
      const k = S.byId.get(part.agent);
      // A lane no longer followed until the server hears of it.
      if (k === undefined || !S.loaded.has(part.agent)) continue;
      const a = S.agents[k], j0 = a.ticks.length;
      added.set(part.agent, { before: a.kept, n: appendEntries(a, part.ticks) });
      indexMore(a, j0);
      if (a.ticks.length > 0) a.first_tick = a.start[0];
      spansMore(a, S.spans[k], j0);
    }
    for (const v of msg.values || []) { const n = added.get(v.agent); if (n) appendValues(v, n.before, n.n); }
    S.last = Math.max(S.last, S.crowdLast);
    let trimmedTo;
    if (trimLive()) {
      if (!S.trimmed) message("Live: following the running program, keeping its last ticks (up to " + LIVE_KEEP +
        " entries; ?keep=N in the address keeps another number).", "info");
      S.trimmed = true;
      trimmedTo = S.trimCut;
      S.last = Math.max(S.last, S.crowdLast);
    }
    keepFirst(trimmedTo);
    if (following) {
      const w = Math.min(S.last - S.first, wholeView ? LIVE_WINDOW - 1 : S.v1 - S.v0);
      S.v1 = S.last; S.v0 = Math.max(S.first, S.v1 - w);
    }
    if (atEnd) S.cursor = S.last;
    S.overviewCache = null;
    redraw();
  }

