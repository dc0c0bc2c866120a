  // ---------- two runs compared ----------
  // A page written by `bt-compare --page` (bt_viewer::compare_page_with)
  // holds two recordings of one tree and what bt_viewer::compare found in
  // them (`#comparison`), or why they cannot be compared. The first run is
  // the page's recording, shown as always; this panel shows the report as
  // the library made it (the page computes no divergence of its own), and
  // the selected agent in both runs side by side.
  const CMP = {
    on: false, a: null, b: null, byId: new Map(), report: null, labels: ["run 1", "run 2"],
    first: new Map(), counts: null, total: 0, compared: 0, leaves: null, key: "",
  };
  const CMP_PLOT_H = 40, CMP_GAP = 8, CMP_DIFF = "#d93025", CMP_BAR = "#e0675c";

  function openComparison() {
    let doc;
    try { doc = JSON.parse($("comparison").textContent); }
    catch (e) { showError(new RecordingError("The comparison in this page is malformed: " + e.message + ".")); return; }
    const labels = Array.isArray(doc.labels) ? doc.labels.map(String) : ["run 1", "run 2"];
    $("source").textContent = labels[0] + " compared with " + labels[1];
    if (doc.error !== undefined) {
      $("app").hidden = true;
      message("These two recordings cannot be compared: " + doc.error + ".", "error");
      document.body.dataset.compare = "error";
      return;
    }
    if (!$("recording") || !$("recording-2") || !doc.report) {
      showError(new RecordingError("The page's comparison has no recordings or no report."));
      return;
    }
    if (!loadText(() => embedded("recording"), labels[0])) return;
    let b;
    try { const got = embedded("recording-2"); b = parse(got.text, false, got.cut); }
    catch (e) { showError(new RecordingError("The second recording (" + labels[1] + "): " + e.message)); return; }
    b.agents.forEach(index);
    $("source").textContent = labels[0] + " compared with " + labels[1];
    const r = doc.report;
    Object.assign(CMP, {
      a: S.rec, b, labels, report: r, byId: new Map(b.agents.map(x => [x.agent, x])),
      first: new Map(r.agents.filter(x => x.first).map(x => [x.agent, x.first])), compared: r.agents.length, key: "",
    });
    // Agents that had diverged by each tick of the first run's range.
    const T = S.last - S.first + 1;
    CMP.counts = new Int32Array(T);
    let j = 0, n = 0;
    for (let t = 0; t < T; t++) {
      while (j < r.diverged_by_tick.length && r.diverged_by_tick[j][0] <= S.first + t) n = r.diverged_by_tick[j++][1];
      CMP.counts[t] = n;
    }
    CMP.total = r.diverged_by_tick.length ? r.diverged_by_tick[r.diverged_by_tick.length - 1][1] : 0;
    mountComparison();
    CMP.on = true;
    document.body.classList.add("comparing");
    // The earliest divergence, when there is one.
    const rows = cmpRows();
    if (rows.length) { selectAgent(rows[0].agent); seek(rows[0].first.tick); }
    layout();
    render();
    document.body.dataset.compare = "1";
  }

  function mountComparison() {
    if (!$("compare-section")) {
      const t = $("compare-markup");
      $("app").insertBefore(t.content.cloneNode(true), $("overview-section"));
      const seekAt = (c, e) => { const x = e.clientX - c.getBoundingClientRect().left; if (x >= LABEL_W) seek(tickOfX(x)); };
      $("cmp-plot").addEventListener("click", e => seekAt($("cmp-plot"), e));
      $("cmp-lanes").addEventListener("click", e => seekAt($("cmp-lanes"), e));
      $("cmp-plot").addEventListener("mousemove", e => {
        const s = tickOfX(e.clientX - $("cmp-plot").getBoundingClientRect().left);
        if (s >= S.v0 && s <= S.v1) showTip(cmpCountText(s), e); else hideTip();
      });
      $("cmp-plot").addEventListener("mouseleave", hideTip);
      $("cmp-lanes").addEventListener("mousemove", e => {
        const s = tickOfX(e.clientX - $("cmp-lanes").getBoundingClientRect().left), a = S.agents[S.sel];
        if (!a || s < S.v0 || s > S.v1) { hideTip(); return; }
        const L = cmpLanes(a.agent), name = v => v === -2 ? "no tick kept" : v === -1 ? "idle" : node(v);
        const d = CMP.first.get(a.agent);
        showTip("#" + a.agent + " · tick " + s + "\nrun 1: " + name(L.at[0][s - S.first]) + "\nrun 2: " + name(L.at[1][s - S.first]) +
          (d ? "\nfirst decided otherwise at tick " + d.tick : "\ndecided alike throughout"), e);
      });
      $("cmp-lanes").addEventListener("mouseleave", hideTip);
      $("cmp-table").addEventListener("click", e => {
        const tr = e.target.closest("tr[data-agent]");
        if (tr) { selectAgent(Number(tr.dataset.agent)); seek(Number(tr.dataset.tick)); }
      });
    }
    $("compare-section").hidden = false;
    const r = CMP.report;
    $("cmp-runs").textContent = "tree " + r.tree + ": run 1 is " + CMP.labels[0] + " (the tree, events, dump and lanes of this page), run 2 is " + CMP.labels[1];
    let total = CMP.total + " of " + CMP.compared + " agents decided otherwise" +
      (CMP.total ? ", the first at tick " + cmpRows()[0].first.tick : "") + "; " + (CMP.compared - CMP.total) + " decided alike at every tick both runs kept.";
    if (r.unmatched.length) total += " Recorded in one run only: " + r.unmatched.map(a => "#" + a).join(", ") + ".";
    $("cmp-total").textContent = total;
    cmpTuning(r.tuning || []);
    const body = $("cmp-table").tBodies[0];
    body.textContent = "";
    const MAX = 2000, rows = cmpRows();
    for (const x of rows.slice(0, MAX)) {
      const tr = document.createElement("tr");
      tr.dataset.agent = x.agent; tr.dataset.tick = x.first.tick;
      for (const [cls, text] of [["agent", "#" + x.agent], ["tick", String(x.first.tick)],
        ["leaf", cmpLeaf(x.first.leaf[0]) + " / " + cmpLeaf(x.first.leaf[1])], ["what", cmpWhat(x.first.what)]]) {
        const td = document.createElement("td");
        td.className = cls; td.textContent = text;
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    if (rows.length === 0) {
      const tr = document.createElement("tr"), td = document.createElement("td");
      td.colSpan = 4; td.className = "none"; td.textContent = "None: the two runs decided alike at every tick both kept.";
      tr.appendChild(td); body.appendChild(tr);
    }
    if (rows.length > MAX) {
      const tr = document.createElement("tr"), td = document.createElement("td");
      td.colSpan = 4; td.textContent = "… and " + (rows.length - MAX) + " more (bt-compare lists them all)";
      tr.appendChild(td); body.appendChild(tr);
    }
  }

  // The tunables whose values differ between the runs, as the report
  // lists them: each run's value at its start and its changes, and the
  // first tick they differ (a click goes there).
  function cmpTuning(list) {
    const box = $("cmp-tuning");
    box.textContent = "";
    box.hidden = list.length === 0;
    if (!list.length) return;
    box.append("Tunables that differ: ");
    const run = (start, changes) => (start === null ? "–" : tuneText(start)) +
      changes.map(([t, v]) => ", " + tuneText(v) + " from tick " + t).join("");
    for (const t of list) {
      const sp = document.createElement("span");
      sp.dataset.name = t.name; sp.dataset.tick = t.first_tick;
      sp.textContent = t.name + ": " + run(t.start[0], t.changes[0]) + " / " + run(t.start[1], t.changes[1]) +
        " (first differs at tick " + t.first_tick + ")";
      sp.title = "run 1 / run 2; click to go to tick " + t.first_tick;
      sp.onclick = () => seek(t.first_tick);
      box.appendChild(sp);
    }
  }

  // The agents that diverged, earliest first (as Comparison::diverged).
  function cmpRows() {
    return CMP.report.agents.filter(x => x.first).sort((p, q) => p.first.tick - q.first.tick || p.agent - q.agent);
  }
  const cmpLeaf = l => l === null ? "idle" : l;
  const cmpNum = x => x === null || x === undefined ? "?" : decimal(x);

  // What differs, in the words of the table.
  function cmpWhat(w) {
    switch (w.kind) {
      case "decide-value": return w.decider + (w.accepted === false ? " turned down by its decide with " : " accepted with ") + cmpNum(w.values[0]) + " / " + cmpNum(w.values[1]);
      case "rejection": return w.decider + ": " + w.outcomes[0] + " / " + w.outcomes[1];
      case "step": return w.steps[0] + " / " + w.steps[1];
      default: return "another path, the same steps";
    }
  }

  function cmpCountAt(s) {
    return s < S.first || s > S.last ? 0 : CMP.counts[s - S.first];
  }
  const cmpCountText = s => "by tick " + s + ": " + cmpCountAt(s) + " of " + CMP.compared + " agents had decided otherwise";

  // Agent `id`'s tick at serial `s` in the second run, or null.
  function cmpTick(id, s) {
    const a = CMP.byId.get(id);
    if (!a || a.ticks.length === 0) return null;
    const j = entryAt(a, s);
    if (j < 0) return null;
    const e = a.ticks[j];
    if (e.length === 7) return e;
    const b = baseOf(a, j), clock = CMP.b.clock, now = clock.now[s - clock.first], since = e[1];
    const path = b[5].slice();
    for (let i = 0; i < path.length; i += 4) path[i + 2] = Math.fround(now - since[i / 4]);
    return [s, now, b[2], b[3], b[4], path, b[6]];
  }

  // The selected agent's spans in each run (as spansOf makes them), and
  // its leaf at each tick of the range (-1 idle, -2 not kept).
  function cmpLanes(id) {
    if (CMP.leaves && CMP.leaves.id === id) return CMP.leaves;
    const k = S.byId.get(id), b = CMP.byId.get(id);
    const spans = [k === undefined ? [] : S.spans[k].spans, b ? spansOf(b).spans : []];
    const T = S.last - S.first + 1;
    const at = spans.map(list => {
      const out = new Int32Array(T).fill(-2);
      for (const sp of list) for (let s = Math.max(sp.from, S.first); s <= Math.min(sp.to, S.last); s++) out[s - S.first] = sp.leaf === null ? -1 : sp.leaf;
      return out;
    });
    CMP.leaves = { id, spans, at };
    return CMP.leaves;
  }

  // Called by drawAll: the plot and the lanes follow the lanes' time axis;
  // the rest follows the cursor and the selected agent.
  function drawCompare() {
    if (!CMP.on) return;
    if (S.rec !== CMP.a) { leaveComparison(); return; }
    const a = S.agents[S.sel], id = a ? a.agent : null;
    drawCmpPlot();
    if (id !== null) drawCmpLanes(id);
    const key = id + "@" + S.cursor;
    if (key !== CMP.key) { CMP.key = key; renderCompare(id); }
  }

  // Another file was opened: the page shows it alone.
  function leaveComparison() {
    CMP.on = false;
    $("compare-section").hidden = true;
    document.body.classList.remove("comparing");
    delete document.body.dataset.compare;
    layout();
  }

  function drawCmpPlot() {
    const c = $("cmp-plot"), H = CMP_PLOT_H, g = sized(c, H), W = c.clientWidth, p = px();
    g.clearRect(0, 0, W, H);
    g.fillStyle = "#f6f7f9"; g.fillRect(LABEL_W, 0, W - LABEL_W, H);
    const scale = Math.max(1, CMP.total), top = 4;
    g.fillStyle = CMP_BAR;
    const cols = Math.min(S.v1 - S.v0 + 1, Math.ceil(W - LABEL_W));
    for (let ci = 0; ci < cols; ci++) {
      const s = S.v1 - S.v0 + 1 <= cols ? S.v0 + ci : Math.floor(S.v0 + ci / p);
      const n = cmpCountAt(s);
      if (!n) continue;
      const h = Math.round(n / scale * (H - top));
      const x0 = p >= 1 ? X(s) : LABEL_W + ci, w = p >= 1 ? Math.max(1, p) + .5 : 1;
      g.fillRect(x0, H - h, w, h);
    }
    g.fillStyle = "#6b7480"; g.font = "10px system-ui, sans-serif"; g.textBaseline = "top";
    g.fillText("diverged", 4, 2);
    g.fillText("max " + CMP.total, 4, 14);
    g.fillText("of " + CMP.compared, 4, 26);
    const x = X(S.cursor) + p / 2;
    g.fillStyle = "rgba(29,35,42,.8)"; g.fillRect(x - 1, 0, 2, H);
  }

  function drawCmpLanes(id) {
    const c = $("cmp-lanes"), H = 2 * LANE_H + CMP_GAP, g = sized(c, H), W = c.clientWidth, p = px();
    g.clearRect(0, 0, W, H);
    const L = cmpLanes(id), ys = [0, LANE_H + CMP_GAP];
    g.font = "11px system-ui, sans-serif"; g.textBaseline = "middle";
    g.save(); g.beginPath(); g.rect(LABEL_W, 0, W - LABEL_W, H); g.clip();
    L.spans.forEach((list, r) => {
      const y = ys[r];
      for (const sp of list) {
        if (sp.to < S.v0 || sp.from > S.v1) continue;
        const x0 = X(sp.from), x1 = X(sp.to + 1);
        g.fillStyle = colorOf(sp.leaf);
        g.fillRect(x0, y + 2, Math.max(1, x1 - x0 - (p > 3 ? 1 : 0)), LANE_H - 4);
        if (x1 - x0 > 46) {
          g.fillStyle = "#111";
          g.save(); g.beginPath(); g.rect(Math.max(x0, LABEL_W), y, x1 - Math.max(x0, LABEL_W) - 2, LANE_H); g.clip();
          g.fillText(leafName(sp.leaf), Math.max(x0, LABEL_W) + 3, y + LANE_H / 2);
          g.restore();
        }
      }
    });
    // Between the lanes: the ticks whose deciders differ, and the first
    // tick that decided otherwise.
    g.fillStyle = "#f4b4ae";
    for (let s = Math.max(S.v0, S.first); s <= Math.min(S.v1, S.last); s++) {
      const t = s - S.first;
      if (L.at[0][t] !== L.at[1][t]) g.fillRect(X(s), LANE_H + 1, Math.max(1, p), CMP_GAP - 2);
    }
    // The cursor, under the mark of the first divergence.
    const x = X(S.cursor) + p / 2;
    g.fillStyle = "rgba(29,35,42,.75)"; g.fillRect(x - 1, 0, 2, H);
    const d = CMP.first.get(id);
    if (d && d.tick >= S.v0 && d.tick <= S.v1) {
      const xd = X(d.tick) + p / 2, yg = LANE_H + CMP_GAP / 2;
      g.fillStyle = CMP_DIFF; g.fillRect(xd - 1, 0, 3, H);
      g.beginPath(); g.moveTo(xd - 6, yg - 5); g.lineTo(xd + 6, yg - 5); g.lineTo(xd, yg + 4); g.fill();
    }
    g.restore();
    ["run 1", "run 2"].forEach((name, r) => {
      g.fillStyle = "#fff"; g.fillRect(0, ys[r], LABEL_W, LANE_H);
      g.fillStyle = "#1d232a"; g.fillText(name + " #" + id, 4, ys[r] + LANE_H / 2);
    });
  }

  function renderCompare(id) {
    $("cmp-count").textContent = cmpCountText(S.cursor);
    for (const tr of $("cmp-table").tBodies[0].rows) {
      const on = Number(tr.dataset.agent) === id;
      tr.classList.toggle("sel", on);
      if (on) { const box = $("cmp-table-box"), head = $("cmp-table").tHead.offsetHeight;
        if (tr.offsetTop - head < box.scrollTop || tr.offsetTop + tr.offsetHeight > box.scrollTop + box.clientHeight) box.scrollTop = tr.offsetTop - head; }
    }
    if (id === null) {
      for (const el of ["cmp-agent", "cmp-title-1", "cmp-title-2", "cmp-events-1", "cmp-events-2"]) $(el).textContent = "";
      return;
    }
    const d = CMP.first.get(id);
    const inB = CMP.byId.has(id), kept = CMP.report.agents.find(x => x.agent === id);
    let line = "#" + id + ": ";
    if (!inB) line += "recorded in run 1 only.";
    else if (d) line += "decided otherwise from tick " + d.tick + " (" + cmpLeaf(d.leaf[0]) + " / " + cmpLeaf(d.leaf[1]) + ": " + cmpWhat(d.what) + ").";
    else line += "decided alike at all " + (kept ? kept.ticks : 0) + " ticks both runs kept.";
    $("cmp-agent").textContent = line;
    const ta = S.agents[S.sel] ? tickAt(S.sel, S.cursor) : null, tb = inB ? cmpTick(id, S.cursor) : null;
    const mark = cmpFirstStep(ta, tb);
    [ta, tb].forEach((tk, r) => {
      const leaf = tk ? (tk[2] === null ? "idle" : node(tk[2])) : "no tick kept";
      $("cmp-title-" + (r + 1)).textContent = "run " + (r + 1) + " (" + CMP.labels[r] + ") at tick " + S.cursor + ": " + leaf;
      cmpEvents($("cmp-events-" + (r + 1)), tk, mark);
    });
  }

  // The place of the first event that differs between two ticks, or -1.
  function cmpFirstStep(ta, tb) {
    if (!ta || !tb) return -1;
    const ea = ta[6], eb = tb[6], n = Math.max(ea.length, eb.length);
    for (let i = 0; i < n; i += 4) for (let q = 0; q < 4; q++) if (ea[i + q] !== eb[i + q]) return i / 4;
    return -1;
  }

  // A tick's events as the events panel lists them.
  function cmpEvents(list, tk, mark) {
    list.textContent = "";
    if (tk) eventItems(list, tk, mark);
  }

  // For the browser tests: what the panel holds.
  window.btCompare = {
    on: () => CMP.on,
    // Agent `id` in both runs: spans [leaf name, from, to] per run, and
    // its first divergence's tick (null: none).
    lanes: id => {
      const L = cmpLanes(Number(id)), d = CMP.first.get(Number(id));
      return { runs: L.spans.map(list => list.map(s => [leafName(s.leaf), s.from, s.to])), first: d ? d.tick : null };
    },
    // Where (in page pixels) tick `s` is drawn in the plot (its column's
    // left and width, the height of a full column) and in run `r`'s lane
    // (and between the lanes).
    plotPoint: s => { const c = $("cmp-plot").getBoundingClientRect(); return { left: c.left + X(s), width: px(), height: CMP_PLOT_H - 4 }; },
    lanePoint: (r, s) => { const c = $("cmp-lanes").getBoundingClientRect(); return { x: c.left + X(s) + px() / 2, y: c.top + (r === 0 ? 0 : LANE_H + CMP_GAP) + LANE_H / 2, gap: c.top + LANE_H + CMP_GAP / 2 }; },
  };
