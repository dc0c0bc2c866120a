  // ---------- live: the lanes shown, and the crowd ----------
  // A live page follows the lanes it shows (and the selected agent's):
  // the server sends their ticks, and for the whole crowd per-tick counts
  // (agents per leaf; Subset Rule reports, errors, rejections) and the
  // agents newly recorded, whose lanes are added. A lane that comes into
  // view gets its kept ticks in a `lanes` event; one that leaves it lets
  // go of them.

  // While following, the timeline shows this many ticks at most, the
  // newest at the right (`?window=N` in the address sets another number).
  // A window under 10 ticks shows 10 (the page says so when it follows);
  // one that is not a whole number, 600.
  const LIVE_WINDOW_ASKED = new URLSearchParams(location.search).get("window");
  const LIVE_WINDOW = (() => {
    const n = Number(LIVE_WINDOW_ASKED);
    if (LIVE_WINDOW_ASKED === null || LIVE_WINDOW_ASKED === "" || !Number.isInteger(n) || n < 1) return 600;
    return Math.max(10, n);
  })();

  // What the page says of a window it did not take as asked.
  function windowNote() {
    const n = Number(LIVE_WINDOW_ASKED);
    return Number.isInteger(n) && n >= 1 && n < 10 ? " (a window of 10 ticks, the least, for ?window=" + n + ")" : "";
  }

  function emptyLane(id) {
    const a = { agent: id, first_tick: 0, ticks: [] };
    index(a);
    return a;
  }

  // The `crowd` event after the recording: the stream's number, every
  // agent recorded, and the crowd's counts of the kept ticks.
  function onCrowd(c) {
    if (!Number.isInteger(c.stream) || !Array.isArray(c.agents) || !Number.isInteger(c.first)) fail("The live crowd summary is malformed.");
    const had = S.byId, old = S.agents, oldSpans = S.spans;
    S.loaded = new Set(old.map(a => a.agent));
    S.agents = c.agents.map(id => had.has(id) ? old[had.get(id)] : emptyLane(id));
    S.spans = S.agents.map(a => had.has(a.agent) ? oldSpans[had.get(a.agent)] : spansOf(a));
    S.byId = new Map(S.agents.map((a, k) => [a.agent, k]));
    S.keep = c.keep;
    S.first = c.first; S.counts0 = c.first;
    S.counts = S.leaves.map(() => []);
    S.trouble = { subset: [], error: [], rejection: [] };
    S.crowdLast = S.first - 1;
    addCrowd(c);
    S.last = Math.max(S.crowdLast, S.first);
    S.cursor = S.last; S.v0 = Math.max(S.first, S.last - LIVE_WINDOW + 1); S.v1 = S.last;
    S.rows = S.agents.map((_, k) => k);
    S.sel = 0;
    countBehaviors(S.counts);
    S.stream = c.stream;
    S.viewKey = null;
    const sc = $("scrubber");
    sc.min = S.first; sc.max = S.last;
    $("q-from").value = S.first; $("q-to").value = S.last;
    S.overviewCache = null;
    selectIndex();
    layout();
    render();
  }

  // Adds a crowd summary's counts (from tick `first` on) and lanes for
  // the agents it names as new.
  function addCrowd(c) {
    for (const id of c.new || []) if (!S.byId.has(id)) {
      const a = emptyLane(id);
      S.byId.set(id, S.agents.length);
      S.agents.push(a); S.spans.push(spansOf(a));
      if (S.filter === null) S.rows.push(S.agents.length - 1);
      S.laneAdded = true;
    }
    const len = Object.values(c.leaves || {}).reduce((n, v) => Math.max(n, v.length), 0);
    const grow = (col, n) => { while (col.length < n) col.push(0); };
    const end = c.first + len - S.first;
    if (end <= 0) return;
    let legend = false;
    for (const key in c.leaves) {
      const i = S.leaves.indexOf(key === "idle" ? null : Number(key));
      if (i < 0) continue;
      const col = S.counts[i];
      if (!col.some(x => x > 0)) legend = true;
      grow(col, end);
      c.leaves[key].forEach((n, q) => { if (c.first + q >= S.first) col[c.first + q - S.first] += n; });
    }
    for (const col of S.counts) grow(col, end);
    // The track's counts, by the summary's names.
    for (const [name, field] of [["subset", "subset"], ["error", "errors"], ["rejection", "rejections"]]) {
      const col = S.trouble[name];
      grow(col, end);
      (c[field] || []).forEach((n, q) => { if (c.first + q >= S.first) col[c.first + q - S.first] += n; });
    }
    S.crowdLast = Math.max(S.crowdLast, c.first + len - 1);
    if (legend) countBehaviors(S.counts);
  }

  // Lets go of the counts of ticks the server no longer keeps (a few
  // dozen at a time), and of those before what trimLive kept.
  function keepFirst(trimmedTo) {
    let want = S.counts0;
    if (S.keep) want = Math.max(want, S.last - S.keep + 1);
    if (trimmedTo !== undefined) want = Math.max(want, trimmedTo);
    const drop = want - S.counts0;
    if (drop >= 64 || (drop > 0 && trimmedTo !== undefined)) {
      S.counts = S.counts.map(col => col.slice(drop));
      for (const name in S.trouble) S.trouble[name] = S.trouble[name].slice(drop);
      S.counts0 = want;
      S.first = want;
      countBehaviors(S.counts);
    }
    S.first = S.counts0;
    // A view of ticks let go of moves to the oldest kept, its width kept.
    const w = S.v1 - S.v0;
    if (S.v0 < S.first) { S.v0 = S.first; S.v1 = Math.min(S.last, Math.max(S.v1, S.first + w)); }
    S.cursor = Math.max(S.cursor, S.first);
  }

  // Extends agent `a`'s index of its entries from `j0` on.
  function indexMore(a, j0) {
    if (!Array.isArray(a.start)) { a.start = Array.from(a.start); a.pos = Array.from(a.pos); }
    a.start.length = j0; a.pos.length = j0;
    let s = 0, p = 0;
    if (j0 > 0) { const e = a.ticks[j0 - 1], n = e.length === 7 ? 1 : e[0]; s = a.start[j0 - 1] + n; p = a.pos[j0 - 1] + n; }
    for (let j = j0; j < a.ticks.length; j++) {
      const e = a.ticks[j];
      if (e.length === 7) s = e[0];
      a.start.push(s); a.pos.push(p);
      const n = e.length === 7 ? 1 : e[0];
      s += n; p += n;
    }
    a.end = s; a.kept = p;
  }

  // A `lanes` event: the kept ticks of lanes the page now follows, whole.
  function onLanes(msg) {
    if (!S.rec || S.stream === undefined) return;
    for (const part of msg.agents) {
      const k = S.byId.get(part.agent);
      if (k === undefined || !Array.isArray(part.ticks)) continue;
      part.ticks.forEach((tk, j) => checkTick(tk, S.items.length, "live agent " + part.agent + ", tick " + j));
      const a = S.agents[k];
      a.ticks = part.ticks; a.first_tick = part.first_tick;
      index(a);
      S.spans[k] = spansOf(a);
      S.values.delete(a.agent);
      S.loaded.add(a.agent);
    }
    for (const v of msg.values || []) if (S.byId.has(v.agent)) S.values.set(v.agent, v);
    redraw();
  }

  // The lanes a live page keeps following: those drawn and the selected
  // agent's first, then those it followed last, up to this many.
  const LIVE_LOADED = 160;

  // The lanes drawn, and the selected agent's.
  function viewNow() {
    const ids = new Set(S.drawn || []);
    const a = S.agents[S.sel];
    if (a) ids.add(a.agent);
    return [...ids].slice(0, LIVE_LOADED);
  }

  // The lanes to follow: those of viewNow, then those followed lately
  // (`S.loaded` holds them oldest first), LIVE_LOADED at most, sorted.
  function viewWanted() {
    const v = new Set(viewNow());
    const extra = S.loaded ? [...S.loaded].filter(id => !v.has(id)) : [];
    extra.slice(Math.max(0, extra.length - (LIVE_LOADED - v.size))).forEach(id => v.add(id));
    return [...v].sort((x, y) => x - y);
  }

  // Tells the server the lanes to follow, when they changed; those no
  // longer followed let go of their ticks.
  function sendView() {
    if (S.stream === undefined || S.viewBusy) return;
    const v = viewWanted(), key = S.stream + ":" + v.join(",");
    if (key === S.viewKey) return;
    const keep = new Set(v);
    for (const id of [...S.loaded]) if (!keep.has(id)) {
      const k = S.byId.get(id), a = S.agents[k];
      a.ticks = []; index(a); S.spans[k] = spansOf(a);
      S.values.delete(id); S.loaded.delete(id);
    }
    S.viewKey = key; S.viewBusy = true;
    const meta = document.querySelector('meta[name="bt-live-token"]');
    fetch("view", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Bt-Token": meta ? meta.content : "" },
      body: JSON.stringify({ stream: S.stream, agents: v }),
    }).then(r => { if (!r.ok) S.viewKey = null; }, () => { S.viewKey = null; })
      .finally(() => { S.viewBusy = false; });
  }

  // Draws once per frame, whatever the number of messages.
  function redraw() {
    if (S.drawPending) return;
    S.drawPending = true;
    const go = () => {
      if (!S.drawPending) return;
      S.drawPending = false;
      if (!S.rec) return;
      const t0 = performance.now();
      if (S.sel < S.agents.length) selectIndex();
      S.laneAdded = false;
      if (S.qFollows) { $("q-to").value = S.last; S.qFollows = false; }
      const sc = $("scrubber");
      sc.min = S.first; sc.max = S.last;
      layout(false);
      render();
      if (window.btLive) window.btLive.update(); // live controls
      sendView();
      if (S.link) { S.link.busy += performance.now() - t0; S.link.draws += 1; }
    };
    requestAnimationFrame(go);
    setTimeout(go, 100);
  }
  if (location.protocol.startsWith("http")) setInterval(() => { if (S.live && S.rec) sendView(); }, 250);

  // A query of a live page, which the server answers from the ticks it
  // keeps: { rows, matches } as runQuery gives them.
  function liveQuery(kind, item, reason, from, to) {
    const t0 = performance.now();
    const url = "query?kind=" + encodeURIComponent(kind) + "&item=" + item + "&reason=" + reason + "&from=" + from + "&to=" + to;
    return fetch(url).then(r => r.ok ? r.json() : r.text().then(t => { throw new Error(t); })).then(res => {
      const rows = [], matches = new Map();
      for (const [agent, tick] of res.matches) {
        const k = S.byId.get(agent);
        if (k === undefined || matches.has(k)) continue;
        rows.push(k); matches.set(k, tick);
      }
      S.queryMs = performance.now() - t0;
      return { rows, matches };
    }, e => { message("Live: the query could not be answered: " + e.message, "error"); return { rows: [], matches: new Map() }; });
  }

  // What the live page follows, for the tests.
  function liveState() {
    const L = S.link || {};
    return {
      stream: S.stream === undefined ? null : S.stream, reconnects: L.reconnects || 0, lost: L.lost !== null && L.lost !== undefined,
      said: (L.said || []).slice(), messages: L.messages || 0, draws: L.draws || 0, bytes: L.bytes || 0, busy: L.busy || 0,
      loaded: S.loaded ? [...S.loaded].sort((x, y) => x - y) : [], agents: S.agents.length,
      trouble: S.trouble ? { first: S.first, subset: Array.from(S.trouble.subset), errors: Array.from(S.trouble.error), rejections: Array.from(S.trouble.rejection) } : null,
    };
  }
