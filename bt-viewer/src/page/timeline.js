  // ---------- behaviors: colours, spans, counts ----------
  function assignColors() {
    S.colors = new Map();
    const leaves = S.items.filter(it => it.children.length === 0);
    leaves.forEach((it, k) => {
      const hue = Math.round((k * 360) / Math.max(leaves.length, 1) + 20) % 360;
      S.colors.set(it.index, "hsl(" + hue + ",65%,68%)");
    });
    S.leaves = leaves.map(it => it.index).concat([null]);
  }
  const colorOf = leaf => leaf === null ? "#d4d7dc" : S.colors.get(leaf) || "#ccc";
  const leafName = leaf => leaf === null ? "idle" : S.items[leaf].name;

  // Spans of equal leaf and markers, for agent `a`.
  function spansOf(a) { return spansMore(a, { spans: [], markers: [], entered: [] }, 0); }

  // Adds the spans and markers of agent `a`'s entries from `j0` on to
  // `out` (what spansOf gave for the entries before).
  function spansMore(a, out, j0) {
    const { spans, markers, entered } = out;
    const names = S.rec.legend.events;
    const kind = n => names.indexOf(n) + 1;
    const K = { preempt: kind("preempt"), redecide: kind("redecide"), subset: kind("subset-rule"), limit: kind("redecide-limit"),
      launch: kind("launch"), cancel: kind("cancel"), reported: kind("action-reported"), activate: kind("activate") };
    let cur = spans.length ? spans[spans.length - 1] : null, base = j0 > 0 ? baseOf(a, j0 - 1) : null;
    for (let j = j0; j < a.ticks.length; j++) {
      const e = a.ticks[j];
      if (e.length === 7) base = e;
      const from = a.start[j], to = from + (e.length === 7 ? 1 : e[0]) - 1, leaf = base[2];
      if (cur && cur.leaf === leaf && cur.to === from - 1) cur.to = to;
      else { cur = { leaf, from, to }; spans.push(cur); }
      const ev = base[6];
      const seen = new Set();
      for (let i = 0; i < ev.length; i += 4) {
        const k = ev[i];
        let m = null;
        if (k === K.preempt) m = "preempt";
        else if (k === K.redecide) m = "redecide";
        else if (k === K.subset) m = "subset-rule";
        else if (k === K.limit) m = "error";
        else if (k === K.launch || k === K.cancel || k === K.reported) m = "deferred";
        else if (k === K.activate) entered.push(from, to, ev[i + 2]);
        if (m) seen.add(m);
      }
      if (base[4] >> 1) seen.add("error");
      // In order of ticks (drawLane looks for the first in view).
      if (seen.size) for (let s = from; s <= to; s++) for (const m of seen) markers.push({ tick: s, kind: m });
    }
    // (first tick, last tick, item) of each activation, flat: a run
    // repeats the activations of its tick at each of its ticks.
    return out;
  }

  // How many agents run each leaf (or none) at each tick (`given`: as a
  // live stream's crowd summary counts them), and how many agents run it
  // at all (live: the most at one tick); the legend, its rare behaviors
  // marked; and the track of trouble (live: the crowd summary's).
  function countBehaviors(given) {
    const T = S.last - S.first + 1;
    const slot = new Map(S.leaves.map((l, i) => [l, i]));
    const diff = S.leaves.map(() => new Int32Array(T + 1));
    const agents = new Int32Array(S.leaves.length), seen = new Int32Array(S.leaves.length).fill(-1);
    if (given) given.forEach((col, i) => { for (const n of col) if (n > agents[i]) agents[i] = n; });
    else S.spans.forEach((sp, k) => {
      for (const s of sp.spans) {
        const i = slot.get(s.leaf), d = diff[i];
        d[s.from - S.first] += 1; d[s.to - S.first + 1] -= 1;
        if (seen[i] !== k) { seen[i] = k; agents[i] += 1; }
      }
    });
    S.counts = given || diff.map(d => { const c = new Int32Array(T); let n = 0; for (let t = 0; t < T; t++) { n += d[t]; c[t] = n; } return c; });
    S.leafAgents = agents;
    // Rare: run by at most one agent in a hundred (and at least by one).
    const rare = Math.max(1, Math.floor(S.agents.length / 100));
    const legend = $("overview-legend");
    legend.textContent = "";
    S.leaves.forEach((l, i) => {
      if (!agents[i]) return;
      const sp = document.createElement("span");
      sp.dataset.name = leafName(l);
      sp.dataset.agents = agents[i];
      if (agents[i] <= rare && S.agents.length >= 100) sp.className = "rare";
      sp.title = (given ? "run by up to " : "run by ") + agents[i] + (agents[i] === 1 ? " agent" : " agents") +
        (given ? " at a tick" : "") + " — click to show the agents that run it in the ticks in view";
      const sw = document.createElement("i");
      sw.style.background = colorOf(l);
      const n = document.createElement("small");
      n.textContent = " " + agents[i] + (sp.className ? " (rare)" : "");
      sp.append(sw, leafName(l) + (l === null ? "" : " #" + l), n);
      sp.onclick = () => filterLegend(l);
      legend.appendChild(sp);
    });
    // (A live page's track counts the crowd, as its summary gives them.)
    if (!given) countTrouble();
  }

  // ---------- the time axis ----------
  function px() { const W = $("lanes").clientWidth || 800; return (W - LABEL_W) / (S.v1 - S.v0 + 1); }
  const X = s => LABEL_W + (s - S.v0) * px();
  const tickOfX = x => Math.floor(S.v0 + (x - LABEL_W) / px());

  function zoom(v0, v1) {
    const min = Math.min(8, S.last - S.first + 1);
    v0 = Math.round(v0); v1 = Math.round(v1);
    if (v1 - v0 + 1 < min) { const c = (v0 + v1) / 2; v0 = Math.round(c - min / 2); v1 = v0 + min - 1; }
    const span = Math.min(v1 - v0, S.last - S.first);
    if (v0 < S.first) { v0 = S.first; v1 = v0 + span; }
    if (v1 > S.last) { v1 = S.last; v0 = v1 - span; }
    S.v0 = v0; S.v1 = v1;
    S.overviewCache = null;
    drawAll();
    return [S.v0, S.v1];
  }
  function zoomBy(f, center) {
    if (center === undefined) center = Math.min(Math.max(S.cursor, S.v0), S.v1);
    return zoom(center - (center - S.v0) * f, center + (S.v1 - center) * f);
  }

  function sized(canvas, h) {
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
      canvas.style.height = h + "px";
    }
    const g = canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    return g;
  }

  function drawRuler() {
    const c = $("ruler"), g = sized(c, 20), W = c.clientWidth;
    g.clearRect(0, 0, W, 20);
    g.fillStyle = "#f3f5f8"; g.fillRect(0, 0, W, 20);
    g.fillStyle = "#6b7480"; g.font = "10px system-ui, sans-serif"; g.textBaseline = "middle";
    g.fillText("tick", 6, 10);
    const p = px();
    let step = 1;
    for (const m of [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000]) { step = m; if (m * p >= 56) break; }
    g.strokeStyle = "#aab2bd";
    for (let s = Math.ceil(S.v0 / step) * step; s <= S.v1; s += step) {
      const x = X(s);
      g.beginPath(); g.moveTo(x + .5, 12); g.lineTo(x + .5, 20); g.stroke();
      g.fillText(String(s), x + 3, 8);
    }
    drawTuneMarks(g);
    const x = X(S.cursor) + p / 2;
    g.fillStyle = "#1d232a"; g.fillRect(x - 1, 0, 2, 20);
  }

  // The overview's height, the least height of a band with an agent in
  // it (a behavior one agent of 10 000 runs is seen and can be clicked),
  // and the track of reports, errors and rejections under it.
  const OV_H = 84, MIN_BAND = 3, TRACK_ROW = 10;
  const TRACK = [["subset", "Subset Rule", "#7b1fa2", "had a Subset Rule report"], ["error", "errors", "#000", "had an error"],
    ["rejection", "rejections", "#b8860b", "had a rejection"]];

  // The overview's columns: when a tick is a pixel wide or more, one per
  // tick; else one per pixel, each with the ticks whose X falls in it (so
  // that a behavior one agent ran at one tick shows however far out the
  // timeline is zoomed). The column of tick `s`, and the ticks [t0, t1]
  // of column `ci`.
  function columnOf(s) { const p = px(); return p >= 1 ? s - S.v0 : Math.floor((s - S.v0) * p); }
  function columnTicks(ci) {
    const p = px();
    if (p >= 1) return [S.v0 + ci, S.v0 + ci];
    const first = c => {
      let t = S.v0 + Math.ceil(c / p);
      while (t > S.v0 && columnOf(t - 1) >= c) t--;
      while (columnOf(t) < c) t++;
      return t;
    };
    const t0 = first(ci);
    return [t0, Math.min(S.v1, Math.max(t0, first(ci + 1) - 1))];
  }

  // The bands of the overview over ticks t0..t1, bottom first:
  // [slot, top, h, tick], a leaf's band for the most agents it had at one
  // of those ticks (the first such tick). A band is the least height
  // (MIN_BAND, less when so many leaves share the column that they would
  // not fit) plus its share of what is left.
  function bandsOver(t0, t1) {
    const most = [];
    let total = 0;
    for (let i = 0; i < S.leaves.length; i++) {
      const count = S.counts[i];
      let n = 0, at = t0;
      for (let s = Math.max(t0, S.first); s <= t1 && s <= S.last; s++) {
        if (count[s - S.first] > n) { n = count[s - S.first]; at = s; }
      }
      if (n) { most.push([i, n, at]); total += n; }
    }
    const m = most.length, least = Math.min(MIN_BAND, OV_H / Math.max(1, m));
    const per = Math.max(0, OV_H - least * m) / Math.max(1, S.agents.length, total), out = [];
    let y = OV_H;
    for (const [i, n, at] of most) {
      const h = least + n * per;
      out.push([i, y - h, h, at]);
      y -= h;
    }
    return out;
  }

  // The bands of the overview's column that holds tick `s`.
  function bandsAt(s) { const [t0, t1] = columnTicks(columnOf(s)); return bandsOver(t0, t1); }
  // The overview's column under page x `x` (in the overview's pixels).
  const columnAtX = x => px() >= 1 ? tickOfX(x) - S.v0 : Math.floor(x - LABEL_W);

  // The overview: the bands (as bandsAt gives them) are drawn into a
  // canvas of their own, one leaf at a time (a live page draws them anew
  // for each frame it shows), and copied, with the track under them; the
  // cursor goes on top.
  function drawOverview() {
    const c = $("overview"), H = OV_H, g = sized(c, H), W = c.clientWidth;
    const cache = S.overviewCache;
    const off = S.overviewCanvas || (S.overviewCanvas = document.createElement("canvas"));
    // Drawn again when the width, the zoom or the lanes' width (which sets
    // a tick's pixels) changed.
    const key = W + ":" + px() + ":" + S.v0 + ":" + S.v1;
    if (!cache || cache.key !== key || off.width !== c.width || off.height !== c.height) {
      if (off.width !== c.width || off.height !== c.height) { off.width = c.width; off.height = c.height; }
      const o = off.getContext("2d"), dpr = window.devicePixelRatio || 1;
      o.setTransform(dpr, 0, 0, dpr, 0, 0);
      o.clearRect(0, 0, W, H);
      o.fillStyle = "#6b7480"; o.font = "10px system-ui, sans-serif"; o.textBaseline = "top";
      o.fillText(S.agents.length + " agents", 4, 2);
      const p = px();
      const cols = Math.min(S.v1 - S.v0 + 1, Math.ceil(W - LABEL_W));
      const w = p >= 1 ? Math.max(1, p) + .5 : 1;
      // One path per leaf: each filled once.
      const paths = new Map();
      for (let ci = 0; ci < cols; ci++) {
        const [t0, t1] = columnTicks(ci), x = p >= 1 ? X(t0) : LABEL_W + ci;
        for (const [i, top, h] of bandsOver(t0, t1)) {
          let path = paths.get(i);
          if (!path) paths.set(i, path = new Path2D());
          path.rect(x, top, w, h);
        }
      }
      for (const [i, path] of paths) { o.fillStyle = colorOf(S.leaves[i]); o.fill(path); }
      S.overviewCache = { key };
      drawTrack(cols);
    }
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, c.width, c.height);
    g.drawImage(off, 0, 0);
    g.setTransform(window.devicePixelRatio || 1, 0, 0, window.devicePixelRatio || 1, 0, 0);
    const x = X(S.cursor) + px() / 2;
    g.fillStyle = "rgba(29,35,42,.8)"; g.fillRect(x - 1, 0, 2, H);
  }

  // The leaf band of the overview under (x, y): { leaf, tick, count }.
  function overviewAt(x, y) {
    const ci = columnAtX(x);
    if (x < LABEL_W || ci < 0 || columnTicks(ci)[0] > S.v1) return null;
    const [t0, t1] = columnTicks(ci);
    for (const [i, top, h, at] of bandsOver(t0, t1)) {
      if (y >= top && y <= top + h) return { leaf: S.leaves[i], tick: at, count: S.counts[i][at - S.first] };
    }
    return null;
  }

  // How many agents had a Subset Rule report, an error, a rejection at
  // each tick: S.trouble[kind] per tick from S.first (a run repeats the
  // events of its tick).
  function countTrouble() {
    const T = S.last - S.first + 1, ev = S.rec.legend.events;
    const SUB = ev.indexOf("subset-rule") + 1, LIM = ev.indexOf("redecide-limit") + 1, REJ = ev.indexOf("reject") + 1;
    const d = { subset: new Int32Array(T + 1), error: new Int32Array(T + 1), rejection: new Int32Array(T + 1) };
    const add = (arr, from, to) => { arr[from - S.first] += 1; arr[to - S.first + 1] -= 1; };
    for (const a of S.agents) {
      let base = null;
      for (let j = 0; j < a.ticks.length; j++) {
        const e = a.ticks[j];
        if (e.length === 7) base = e;
        const from = a.start[j], to = from + (e.length === 7 ? 1 : e[0]) - 1, k = trouble(base, SUB, LIM, REJ);
        if (k & 1) add(d.subset, from, to);
        if (k & 2) add(d.error, from, to);
        if (k & 4) add(d.rejection, from, to);
      }
    }
    S.trouble = {};
    for (const name in d) {
      const c = new Int32Array(T);
      let n = 0;
      for (let t = 0; t < T; t++) { n += d[name][t]; c[t] = n; }
      S.trouble[name] = c;
    }
    S.trackCache = null;
  }

  // Of tick `b`: 1 a Subset Rule report, 2 an error, 4 a rejection.
  function trouble(b, SUB, LIM, REJ) {
    let k = b[4] >> 1 ? 2 : 0;
    const ev = b[6];
    for (let i = 0; i < ev.length; i += 4) {
      if (ev[i] === SUB) k |= 1; else if (ev[i] === LIM) k |= 2; else if (ev[i] === REJ) k |= 4;
    }
    return k;
  }

  // The track: a row per kind, a bar at each tick with any, its height
  // growing with the log of the count (one agent is two pixels).
  function drawTrack(cols) {
    const c = $("track"), H = TRACK.length * TRACK_ROW, g = sized(c, H), W = c.clientWidth, p = px();
    g.clearRect(0, 0, W, H);
    g.font = "9px system-ui, sans-serif"; g.textBaseline = "middle";
    TRACK.forEach(([kind, label, color], r) => {
      const y0 = r * TRACK_ROW, col = S.trouble[kind];
      g.fillStyle = r % 2 ? "#f6f7f9" : "#eef0f3"; g.fillRect(0, y0, W, TRACK_ROW);
      g.fillStyle = "#6b7480"; g.fillText(label, 4, y0 + TRACK_ROW / 2);
      let max = 0;
      for (let t = S.v0; t <= S.v1; t++) max = Math.max(max, col[t - S.first]);
      if (!max) return;
      g.fillStyle = color;
      for (let ci = 0; ci < cols; ci++) {
        const [s0, s1] = columnTicks(ci);
        let n = 0;
        for (let s = s0; s <= Math.min(s1, S.v1); s++) n = Math.max(n, col[s - S.first]);
        if (!n) continue;
        const x0 = p >= 1 ? X(s0) : LABEL_W + ci, w = p >= 1 ? Math.max(2, p - (p > 3 ? 1 : 0)) : 1;
        const h = 2 + (TRACK_ROW - 3) * Math.log(1 + n) / Math.log(1 + max);
        g.fillRect(x0, y0 + TRACK_ROW - h, w, h);
      }
    });
  }

  // The track's kind and tick under (x, y): the tick with any of that kind
  // nearest x, within 3 pixels. { kind, tick, count } or null.
  function trackAt(x, y) {
    const r = Math.floor(y / TRACK_ROW);
    if (r < 0 || r >= TRACK.length || x < LABEL_W) return null;
    const kind = TRACK[r][0], col = S.trouble[kind], p = px();
    const s = tickOfX(x), reach = Math.max(0, Math.ceil(3 / p));
    for (let d = 0; d <= reach; d++) {
      for (const t of [s - d, s + d]) {
        if (t >= S.v0 && t <= S.v1 && col[t - S.first]) return { kind, tick: t, count: col[t - S.first] };
      }
    }
    return null;
  }

  // ---------- lanes ----------
  function numericFields(k) {
    const a = S.agents[k], v = a && S.values.get(a.agent);
    if (!v) return [];
    return Object.keys(v.fields).filter(n => v.fields[n].some(x => typeof x === "number")).slice(0, 4);
  }
  function rowY(r) { const sr = S.selRow; return r * LANE_H + (sr >= 0 && r > sr ? S.plotH : 0); }

  // Sizes the lanes' scroll area to the rows shown, and draws the
  // timeline unless `draw` is false (render draws it next).
  function layout(draw = true) {
    S.selRow = S.rows.indexOf(S.sel);
    S.plotH = S.selRow >= 0 ? numericFields(S.sel).length * PLOT_H : 0;
    const box = $("timeline");
    const total = S.rows.length * LANE_H + S.plotH;
    const h = box.clientHeight;
    $("lanes-spacer").style.height = Math.max(0, total - h) + "px";
    $("lane-count").textContent = S.rows.length + (S.rows.length === S.agents.length ? " lanes" : " of " + S.agents.length + " lanes");
    if (draw) drawAll();
  }

  function drawAll() { if (!S.rec) return; drawRuler(); drawOverview(); drawLanes(); drawCompare(); }

  function drawLanes() {
    const c = $("lanes"), box = $("timeline");
    const H = box.clientHeight, W = c.clientWidth;
    const g = sized(c, H);
    g.clearRect(0, 0, W, H);
    const top = box.scrollTop, p = px();
    g.font = "11px system-ui, sans-serif"; g.textBaseline = "middle";
    let r = Math.max(0, Math.floor((top - S.plotH) / LANE_H) - 1);
    while (r < S.rows.length && rowY(r) + LANE_H + (r === S.selRow ? S.plotH : 0) < top) r++;
    S.drawn = [];
    for (; r < S.rows.length; r++) {
      const y = rowY(r) - top;
      if (y > H) break;
      const k = S.rows[r];
      S.drawn.push(S.agents[k].agent);
      drawLane(g, k, y, W, p);
      if (r === S.selRow) drawPlots(g, k, y + LANE_H, W, p);
    }
    drawTuneLines(g, H);
    const x = X(S.cursor) + p / 2;
    g.fillStyle = "rgba(29,35,42,.75)"; g.fillRect(x - 1, 0, 2, H);
  }

  // The first of `list`, sorted by `key`, whose key is `v` or more (the
  // spans of a lane end, and its markers are, in order of ticks).
  function firstAt(list, v, key) {
    let lo = 0, hi = list.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (key(list[m]) < v) lo = m + 1; else hi = m; }
    return lo;
  }

  function drawLane(g, k, y, W, p) {
    const a = S.agents[k], sel = k === S.sel;
    g.save();
    g.beginPath(); g.rect(LABEL_W, y, W - LABEL_W, LANE_H); g.clip();
    const { spans, markers } = S.spans[k];
    for (let i = firstAt(spans, S.v0, sp => sp.to); i < spans.length; i++) {
      const sp = spans[i];
      if (sp.from > S.v1) break;
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
    const MK = { preempt: ["#d93025", 0, LANE_H, 3], redecide: ["#f29900", 9, 9, 3], "subset-rule": ["#7b1fa2", 0, LANE_H, 5],
      error: ["#000", 0, LANE_H, 5], deferred: ["#1a73e8", 0, 6, 5] };
    for (let i = firstAt(markers, S.v0, m => m.tick); i < markers.length; i++) {
      const m = markers[i];
      if (m.tick > S.v1) break;
      const [col, dy, h, w] = MK[m.kind];
      g.fillStyle = col; g.fillRect(X(m.tick), y + dy, w, h);
    }
    const hit = S.matches && S.matches.get(k);
    if (hit !== undefined && hit >= S.v0 && hit <= S.v1) {
      const x = X(hit) + p / 2;
      g.fillStyle = "#2f7de1"; g.beginPath(); g.moveTo(x - 5, y); g.lineTo(x + 5, y); g.lineTo(x, y + 7); g.fill();
    }
    g.restore();
    g.fillStyle = sel ? "#ffcf5a" : "#fff";
    g.fillRect(0, y, LABEL_W, LANE_H);
    g.fillStyle = "#c9ced6"; g.fillRect(LABEL_W - 1, y, 1, LANE_H);
    g.fillStyle = "#1d232a"; g.font = (sel ? "700 " : "") + "11px system-ui, sans-serif";
    g.fillText("#" + a.agent, 4, y + LANE_H / 2);
    g.font = "11px system-ui, sans-serif";
  }

  // The selected agent's numbers over time, one strip each.
  function drawPlots(g, k, y0, W, p) {
    const a = S.agents[k], v = S.values.get(a.agent);
    S.plotLabels = [];
    numericFields(k).forEach((name, f) => {
      const col = v.fields[name], y = y0 + f * PLOT_H;
      let lo = Infinity, hi = -Infinity;
      for (const x of col) if (typeof x === "number") { lo = Math.min(lo, x); hi = Math.max(hi, x); }
      // The label is the series' maximum; a constant series is drawn
      // across the middle of a scale widened around it.
      const label = lo <= hi ? fmt(hi) : "–";
      if (hi === lo) { hi += 1; lo -= 1; }
      g.fillStyle = "#f6f7f9"; g.fillRect(0, y, W, PLOT_H);
      g.fillStyle = "#6b7480"; g.font = "10px system-ui, sans-serif";
      g.fillText(name, 4, y + 9);
      g.fillText(label, LABEL_W - 30 > 30 ? 30 : 4, y + PLOT_H - 8);
      S.plotLabels.push([name, label]);
      g.save(); g.beginPath(); g.rect(LABEL_W, y, W - LABEL_W, PLOT_H); g.clip();
      g.strokeStyle = "#0b6b2e"; g.lineWidth = 1.5; g.beginPath();
      let pen = false;
      for (let j = 0; j < a.ticks.length; j++) {
        const e = a.ticks[j], n = e.length === 7 ? 1 : e[0];
        for (let q = 0; q < n; q++) {
          const s = a.start[j] + q;
          if (s < S.v0 - 1 || s > S.v1 + 1) { pen = false; continue; }
          const val = col[a.pos[j] + q];
          if (typeof val !== "number") { pen = false; continue; }
          const px_ = X(s) + p / 2, py = y + PLOT_H - 3 - (val - lo) / (hi - lo) * (PLOT_H - 6);
          if (pen) g.lineTo(px_, py); else g.moveTo(px_, py);
          pen = true;
        }
      }
      g.stroke();
      g.restore();
      g.font = "11px system-ui, sans-serif";
    });
  }

  // The lane row and tick under a point of the lanes canvas.
  function laneAt(x, y) {
    const yy = y + $("timeline").scrollTop;
    let r = Math.floor(yy / LANE_H);
    if (S.selRow >= 0 && r > S.selRow) {
      const inPlot = yy < rowY(S.selRow) + LANE_H + S.plotH;
      r = inPlot ? S.selRow : Math.floor((yy - S.plotH) / LANE_H);
    }
    if (r < 0 || r >= S.rows.length) return null;
    return { k: S.rows[r], tick: x < LABEL_W ? null : tickOfX(x) };
  }

  function laneTip(k, s) {
    const a = S.agents[k];
    if (s === null) return "#" + a.agent + ": click to show it";
    const sp = S.spans[k].spans.find(sp => sp.from <= s && s <= sp.to);
    const tk = tickAt(k, s);
    let t = "#" + a.agent + " · tick " + s + (tk ? " · t=" + tk[1].toFixed(3) : "");
    if (sp) t += "\n" + (sp.leaf === null ? "idle" : node(sp.leaf)) + ": ticks " + sp.from + "–" + sp.to + " (" + (sp.to - sp.from + 1) + ")";
    const v = S.values.get(a.agent), j = keptAt(k, s);
    if (v && j >= 0) for (const n of numericFields(k)) t += "\n" + n + " = " + fmt(v.fields[n][j]);
    return t;
  }

  // A value as the page writes it: integers whole, others to 4 decimals,
  // or 4 significant digits below 1 (4.7e-6 is not 0).
  const fmt = x => x === null || x === undefined ? "–" : typeof x === "number" ? String(numText(x)) : String(x);
  const numText = x => Number.isInteger(x) || !Number.isFinite(x) ? x : Math.abs(x) >= 1 ? +x.toFixed(4) : +x.toPrecision(4);

