  // ---------- filters: a band of the overview, a query ----------
  function showRows(rows, note, matches) {
    S.rows = rows;
    S.matches = matches || null;
    S.filter = note;
    $("filter-note").textContent = note || "";
    $("timeline").scrollTop = 0;
    layout();
  }

  function clearFilter() {
    S.rows = S.agents.map((_, k) => k);
    showRows(S.rows, null, null);
    S.found = null;
    $("query-result").textContent = "";
  }

  // ---------- matches in tick order ----------
  // The matches of a filter, earliest tick first (the lower agent id
  // first on a tie), with buttons to the first, the previous and the
  // next: S.found = { list: [[k, tick], …], at }.
  function listMatches(rows, matches) {
    const list = rows.map(k => [k, matches.get(k)]);
    list.sort((a, b) => a[1] - b[1] || S.agents[a[0]].agent - S.agents[b[0]].agent);
    S.found = { list, at: -1 };
    const out = $("query-result");
    out.textContent = "";
    if (!list.length) { out.textContent = "no match"; return; }
    const button = (id, text, title, go) => {
      const b = document.createElement("button");
      b.id = id; b.textContent = text; b.title = title; b.onclick = go;
      out.appendChild(b);
      return b;
    };
    const [k0, t0] = list[0];
    const first = button("first-match", "first match: #" + S.agents[k0].agent + " @ tick " + t0,
      "the match of the earliest tick", () => goMatch(0));
    first.dataset.agent = S.agents[k0].agent; first.dataset.tick = t0;
    button("prev-match", "◀", "previous match (by tick)", () => goMatch(S.found.at - 1));
    button("next-match", "▶", "next match (by tick)", () => goMatch(S.found.at + 1));
    const at = document.createElement("span");
    at.id = "match-at";
    at.textContent = list.length + " matches by tick";
    out.appendChild(at);
  }

  // Selects the agent of match `i` (of S.found, kept in range), shows its
  // lane and moves the cursor to its tick.
  function goMatch(i) {
    const f = S.found;
    if (!f || !f.list.length) return null;
    f.at = Math.max(0, Math.min(f.list.length - 1, i));
    const [k, tick] = f.list[f.at];
    select(k);
    const r = S.rows.indexOf(k), box = $("timeline");
    if (r >= 0) {
      const top = rowY(r);
      if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - LANE_H - S.plotH) box.scrollTop = Math.max(0, top - LANE_H);
    }
    seek(tick);
    $("match-at").textContent = "match " + (f.at + 1) + " of " + f.list.length + ": #" + S.agents[k].agent + " @ tick " + tick;
    return [S.agents[k].agent, tick];
  }

  // Lanes of the agents whose leaf at tick `s` is `leaf` (an item or null).
  function filterBand(leaf, s) {
    const t0 = performance.now();
    const rows = [];
    for (let k = 0; k < S.agents.length; k++) {
      const a = S.agents[k], j = a.ticks.length ? entryAt(a, s) : -1;
      if (j < 0) continue;
      const b = a.ticks[j].length === 7 ? a.ticks[j] : baseOf(a, j);
      if (b[2] === leaf) rows.push(k);
    }
    if (rows.length && !rows.includes(S.sel)) { S.sel = rows[0]; selectIndex(); }
    showRows(rows, rows.length + " agents " + (leaf === null ? "idle" : "running " + node(leaf)) + " at tick " + s, null);
    seek(s);
    S.filterMs = performance.now() - t0;
    return rows.map(k => S.agents[k].agent);
  }

  // Lanes of the agents that run `leaf` (an item or null, a legend
  // entry) at some tick in view, the matches at the first such tick of
  // each; the cursor goes to the earliest.
  function filterLegend(leaf) {
    const t0 = performance.now();
    if (typeof leaf === "string") leaf = S.leaves.find(l => leafName(l) === leaf);
    if (leaf === undefined) return [];
    const rows = [], matches = new Map();
    for (let k = 0; k < S.agents.length; k++) {
      for (const sp of S.spans[k].spans) {
        if (sp.to < S.v0) continue;
        if (sp.from > S.v1) break;
        if (sp.leaf === leaf) { rows.push(k); matches.set(k, Math.max(sp.from, S.v0)); break; }
      }
    }
    showRows(rows, rows.length + " agents " + (leaf === null ? "idle" : "ran " + node(leaf)) + " in ticks " + S.v0 + "–" + S.v1 + " (in view)", matches);
    listMatches(rows, matches);
    if (rows.length) goMatch(0);
    S.filterMs = performance.now() - t0;
    return S.found.list.map(([k, tick]) => [S.agents[k].agent, tick]);
  }

  // Lanes of the agents that had `kind` (a row of the track: subset,
  // error, rejection) at tick `s`.
  function filterTrack(kind, s) {
    const t0 = performance.now();
    const ev = S.rec.legend.events, bit = { subset: 1, error: 2, rejection: 4 }[kind];
    const SUB = ev.indexOf("subset-rule") + 1, LIM = ev.indexOf("redecide-limit") + 1, REJ = ev.indexOf("reject") + 1;
    const rows = [], matches = new Map();
    for (let k = 0; k < S.agents.length; k++) {
      const a = S.agents[k], j = a.ticks.length ? entryAt(a, s) : -1;
      if (j < 0) continue;
      const b = a.ticks[j].length === 7 ? a.ticks[j] : baseOf(a, j);
      if (trouble(b, SUB, LIM, REJ) & bit) { rows.push(k); matches.set(k, s); }
    }
    const what = TRACK.find(t => t[0] === kind)[3];
    showRows(rows, rows.length + " agents " + what + " at tick " + s, matches);
    listMatches(rows, matches);
    if (rows.length) goMatch(0); else seek(s);
    S.filterMs = performance.now() - t0;
    return rows.map(k => S.agents[k].agent);
  }

  function fillQuery() {
    const item = $("q-item"), reason = $("q-reason");
    item.textContent = ""; reason.textContent = "";
    S.items.forEach(it => { const o = document.createElement("option"); o.value = it.index; o.textContent = node(it.index); item.appendChild(o); });
    const any = document.createElement("option"); any.value = -1; any.textContent = "any reason"; reason.appendChild(any);
    S.rec.legend.rejections.forEach((r, i) => { const o = document.createElement("option"); o.value = i; o.textContent = r; reason.appendChild(o); });
    $("q-from").value = S.first; $("q-to").value = S.last;
    queryForm();
  }
  function queryForm() {
    const kind = $("q-kind").value;
    $("q-item").style.display = kind === "trouble" ? "none" : "";
    $("q-reason-box").style.display = kind === "rejected" ? "" : "none";
  }

  // The agents that did `kind` (entered, rejected, ran, trouble) within
  // ticks from..to, and the first tick each did it.
  function runQuery(kind, item, reason, from, to) {
    const t0 = performance.now();
    const REJ = S.rec.legend.events.indexOf("reject") + 1;
    // A rejection of `item` for `reason` (any when negative) in tick `b`.
    const hit = b => {
      const ev = b[6];
      for (let i = 0; i < ev.length; i += 4) {
        if (ev[i + 2] === item && ev[i] === REJ && (reason < 0 || ev[i + 1] === reason)) return true;
      }
      return false;
    };
    const rows = [], matches = new Map();
    if (kind === "entered") {
      for (let k = 0; k < S.agents.length; k++) {
        const e = S.spans[k].entered;
        for (let i = 0; i < e.length; i += 3) {
          if (e[i + 2] !== item || e[i + 1] < from || e[i] > to) continue;
          matches.set(k, Math.max(e[i], from)); rows.push(k); break;
        }
      }
      S.queryMs = performance.now() - t0;
      return { rows, matches };
    }
    if (kind === "ran") {
      // The active path is the leaf and its ancestors: the lanes' spans
      // tell, but for spans with no leaf, whose ticks are looked at.
      const under = new Set();
      const walk = i => { under.add(i); S.items[i].children.forEach(walk); };
      walk(item);
      for (let k = 0; k < S.agents.length; k++) {
        for (const sp of S.spans[k].spans) {
          if (sp.to < from) continue;
          if (sp.from > to) break;
          let at = -1;
          if (sp.leaf !== null) { if (under.has(sp.leaf)) at = Math.max(sp.from, from); }
          else for (let q = Math.max(sp.from, from); q <= Math.min(sp.to, to) && at < 0; q++) {
            const tk = tickAt(k, q);
            if (tk) for (let i = 0; i < tk[5].length; i += 4) if (tk[5][i] === item) { at = q; break; }
          }
          if (at >= 0) { rows.push(k); matches.set(k, at); break; }
        }
      }
      S.queryMs = performance.now() - t0;
      return { rows, matches };
    }
    if (kind === "trouble") {
      // The lanes' markers already say where the reports and errors are.
      for (let k = 0; k < S.agents.length; k++) {
        for (const m of S.spans[k].markers) {
          if (m.tick < from || (m.kind !== "subset-rule" && m.kind !== "error")) continue;
          if (m.tick <= to && (!matches.has(k) || m.tick < matches.get(k))) matches.set(k, m.tick);
        }
        if (matches.has(k)) rows.push(k);
      }
      S.queryMs = performance.now() - t0;
      return { rows, matches };
    }
    for (let k = 0; k < S.agents.length; k++) {
      const a = S.agents[k];
      // A run repeats its tick's events: a tick that does not match
      // settles the run after it.
      let base = null, checked = false;
      for (let j = 0; j < a.ticks.length; j++) {
        const e = a.ticks[j];
        if (e.length === 7) { base = e; checked = false; }
        const s0 = a.start[j], s1 = s0 + (e.length === 7 ? 1 : e[0]) - 1;
        if (s1 < from) continue;
        if (s0 > to) break;
        if (checked) continue;
        if (hit(base)) { rows.push(k); matches.set(k, Math.max(s0, from)); break; }
        checked = true;
      }
    }
    S.queryMs = performance.now() - t0;
    return { rows, matches };
  }

  function query(kind, item, reason, from, to, found) {
    const t0 = performance.now();
    if (from === undefined || from === null || from === "") from = S.first;
    if (to === undefined || to === null || to === "") to = S.last;
    from = Number(from); to = Number(to);
    // A live page holds the lanes it shows: the server answers (a promise).
    if (S.stream !== undefined && !found) return liveQuery(kind, item, reason, from, to).then(f => query(kind, item, reason, from, to, f));
    const { rows, matches } = found || runQuery(kind, item, reason, from, to);
    const what = kind === "trouble" ? "had a Subset Rule report or an error" :
      kind === "entered" ? "entered " + node(item) : kind === "ran" ? "ran " + node(item) :
      "were rejected at " + node(item) + (reason >= 0 ? " for " + S.rec.legend.rejections[reason] : "");
    showRows(rows, rows.length + " agents " + what + " in ticks " + from + "–" + to, matches);
    listMatches(rows, matches);
    S.filterMs = performance.now() - t0;
    return S.found.list.map(([k, tick]) => [S.agents[k].agent, tick]);
  }

  // Decider search: marks the matching items and lists the agents that ran one.
  function searchDecider(q) {
    S.query = q.trim().toLowerCase();
    const hits = new Set();
    S.items.forEach((it, i) => {
      const on = S.query !== "" && it.name.toLowerCase().includes(S.query);
      if (on) hits.add(i);
      S.nodes[i].classList.toggle("match", on);
    });
    const out = $("search-results");
    out.textContent = "";
    if (S.query === "") return [];
    const found = [];
    S.agents.forEach((a, k) => {
      if (found.length >= 50) return;
      for (let j = 0; j < a.ticks.length; j++) {
        const tk = a.ticks[j];
        if (tk.length !== 7) continue;
        let ran = false;
        for (let i = 0; i < tk[5].length; i += 4) if (hits.has(tk[5][i])) { ran = true; break; }
        if (ran) { found.push({ k, tick: tk[0] }); break; }
      }
    });
    out.append(hits.size + " decider(s) match; agents that ran one: " + (found.length ? "" : "none"));
    for (const f of found) {
      const b = document.createElement("button");
      b.textContent = "#" + S.agents[f.k].agent + " @" + f.tick;
      b.dataset.agent = S.agents[f.k].agent;
      b.onclick = () => { selectAgent(S.agents[f.k].agent); seek(f.tick); };
      out.appendChild(b);
    }
    return found.map(f => S.agents[f.k].agent);
  }

