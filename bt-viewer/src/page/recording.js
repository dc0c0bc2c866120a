// The main script opens here and closes at the end of wire.js; page.rs
// joins the files between in order. This one: messages, the recording's
// validation, loading and index.
"use strict";
// Uncaught errors are kept here (they still reach the console): the
// browser tests assert there are none.
window.btErrors = [];
window.addEventListener("error", e => window.btErrors.push(String(e.message)));
window.addEventListener("unhandledrejection", e => window.btErrors.push(String(e.reason)));

(function () {
  // When the script began (after the page's markup, and an embedded
  // recording, were read).
  const BOOT = performance.now();
  const FORMAT = "bt-viewer-recording";
  const VERSION = 2;
  const LANE_H = 18;
  const PLOT_H = 30;
  // Between a tree box's name and its decide value.
  const VAL_GAP = 8;
  const LABEL_W = 78;
  const $ = id => document.getElementById(id);
  const SVGNS = "http://www.w3.org/2000/svg";

  const S = {
    rec: null, items: [], agents: [], byId: new Map(), first: 0, last: 0,
    cursor: 0, sel: 0, spans: [], colors: new Map(), nodes: [], edges: [],
    live: false, playing: null, query: "",
    // The lanes shown (agent entries), the visible tick range, the filter.
    rows: [], v0: 0, v1: 0, filter: null, values: new Map(), selIdx: null,
    counts: null, leaves: [],
  };

  // ---------- messages ----------
  function message(text, kind) {
    const m = $("message");
    m.textContent = text;
    m.className = text ? kind : "";
  }

  // ---------- validation ----------
  function fail(why) { throw new RecordingError(why); }
  class RecordingError extends Error {}

  // `cut`: the values already cut out of `text` (see `embedded`), or
  // null to find them here.
  function parse(text, whole, cut) {
    if (typeof text !== "string" || text.trim() === "") fail("The recording is empty.");
    let doc;
    // The agents' values, most of a large recording's text, are read an
    // agent at a time when first shown (see LazyValues); the rest now.
    if (!cut && !whole) cut = cutValues(text);
    try { doc = JSON.parse(cut ? cut.rest : text); }
    catch (e) {
      if (cut) return parse(cut.whole ? cut.whole() : text, true);
      fail("This is not a complete JSON document (the file may be truncated): " + e.message);
    }
    check(doc);
    if (cut) doc.lazyValues = new LazyValues(cut.read, cut.at);
    return doc;
  }

  // The top-level "values" array of a recording as bt-viewer writes it
  // (after "agents", before "clock" or the end): the text without it, and
  // where each agent's entry lies, by agent id. Null when the text is not
  // laid out so (it is then read whole). page.rs cuts an embedded
  // recording the same way.
  function cutValues(text) {
    const KEY = ',"values":[', i = text.indexOf(KEY);
    if (i < 0 || text.indexOf('"agents":[') > i) return null;
    const tail = text.trimEnd();
    let end = tail.lastIndexOf('],"clock":{');
    if (end < i) end = tail.endsWith("]}") ? tail.length - 2 : -1;
    if (end < i) return null;
    const at = new Map(), from = i + KEY.length;
    let p = text.indexOf('{"agent":', from);
    if (p !== from && !(p < 0 && end === from)) return null;
    while (p >= 0 && p < end) {
      let q = text.indexOf('{"agent":', p + 9);
      if (q < 0 || q > end) q = end + 1;
      const id = parseInt(text.slice(p + 9, p + 30), 10);
      if (!Number.isInteger(id) || at.has(id)) return null;
      // The entry ends before the comma that follows it (or the "]").
      at.set(id, [p, q - 1]);
      p = q <= end ? q : -1;
    }
    return { rest: text.slice(0, i) + text.slice(end + 1), at, read: r => text.slice(r[0], r[1]) };
  }

  // An agent's values, parsed and checked when first asked for: a Map of
  // agent id to { agent, fields, overflow }. `read(at.get(id), id)` is the
  // text of agent id's entry. A malformed entry reads as none, and
  // `errors` says what is wrong with it.
  class LazyValues {
    constructor(read, at) { this.read = read; this.at = at; this.done = new Map(); this.errors = new Map(); }
    get(id) {
      if (this.done.has(id)) return this.done.get(id);
      const r = this.at.get(id);
      if (!r) return undefined;
      let v;
      try { v = JSON.parse(this.read(r, id)); checkValues(v, "of agent " + id); if (v.agent !== id) fail("Values entry of agent " + id + " is malformed."); }
      catch (e) { this.errors.set(id, e instanceof RecordingError ? e.message : "The values of agent " + id + " are not JSON: " + e.message); v = undefined; }
      this.done.set(id, v);
      return v;
    }
    set(id, v) { this.done.set(id, v); return this; }
    has(id) { return this.get(id) !== undefined; }
    // (A live page lets go of the values of a lane it no longer follows.)
    delete(id) { this.at.delete(id); this.errors.delete(id); return this.done.delete(id); }
  }

  function checkValues(v, k) {
    if (!v || typeof v.agent !== "number" || !v.fields || typeof v.fields !== "object" || !Array.isArray(v.overflow))
      fail("Values entry " + k + " is malformed.");
    for (const name in v.fields) if (!Array.isArray(v.fields[name])) fail("Values of agent " + v.agent + ", field " + name + " are malformed.");
  }

  function check(doc) {
    if (doc === null || typeof doc !== "object" || Array.isArray(doc))
      fail("This JSON is not a bt-viewer recording: it is not an object.");
    if (doc.format !== FORMAT)
      fail("This JSON is not a bt-viewer recording: its \"format\" field is " +
        (doc.format === undefined ? "missing" : JSON.stringify(doc.format)) + ", expected \"" + FORMAT + "\".");
    if (doc.version !== VERSION)
      fail("This recording has version " + JSON.stringify(doc.version) + "; this viewer reads version " + VERSION +
        (typeof doc.version === "number" && doc.version < VERSION ? " (record it again with this bt-viewer, or open it with the viewer that wrote it)." : "."));
    const t = doc.tree;
    if (!t || !Array.isArray(t.items) || t.items.length === 0) fail("The recording has no tree items.");
    t.items.forEach((it, i) => {
      if (!it || typeof it.name !== "string" || it.index !== i || !Array.isArray(it.children))
        fail("Tree item " + i + " is malformed.");
      it.children.forEach(c => { if (!(c > i && c < t.items.length)) fail("Tree item " + i + " has a child out of range."); });
    });
    const fn = t.flag_names;
    if (!fn || !Array.isArray(fn.decision) || !Array.isArray(fn.stimuli)) fail("The recording's tree has no flag_names.");
    const lg = doc.legend;
    if (!lg || !["events", "rejections", "whys", "actions", "errors"].every(k => Array.isArray(lg[k])))
      fail("The recording has no legend (or only part of one).");
    if (!Array.isArray(doc.agents)) fail("The recording has no agents.");
    const clock = doc.clock;
    if (clock !== undefined && (!clock || typeof clock.first !== "number" || !Array.isArray(clock.now)))
      fail("The recording's clock is malformed.");
    doc.agents.forEach((a, k) => {
      if (!a || typeof a.agent !== "number" || !Array.isArray(a.ticks) || typeof a.first_tick !== "number")
        fail("Agent entry " + k + " is malformed.");
      if (a.inputs !== undefined && !(Array.isArray(a.inputs) && a.inputs.length % 3 === 0 &&
          a.inputs.every((x, i) => i % 3 ? x === 0 || /^0x[0-9a-f]+$/.test(x) : typeof x === "number")))
        fail("The flags of agent " + a.agent + " (its inputs) are malformed.");
      const n = t.items.length;
      let full = null;
      for (let j = 0; j < a.ticks.length; j++) {
        const e = a.ticks[j];
        if (Array.isArray(e) && e.length === 2) {
          if (!full || !(Number.isInteger(e[0]) && e[0] > 0) || !Array.isArray(e[1]) || e[1].length !== full[5].length / 4)
            fail("The recording is malformed at agent " + a.agent + ", entry " + j + " (a run of repeats must follow a tick).");
          if (!clock) fail("The recording has runs of repeats but no clock.");
          for (let q = 1; q <= e[0]; q++) if (typeof clock.now[full[0] + q - clock.first] !== "number")
            fail("The recording's clock has no time for agent " + a.agent + ", entry " + j + ".");
        } else { checkTick(e, n, "agent " + a.agent + ", tick " + j); full = e; }
      }
    });
    if (doc.values !== undefined) {
      if (!Array.isArray(doc.values)) fail("The recording's values are malformed.");
      doc.values.forEach(checkValues);
    }
    checkTuning(doc);
  }

  function checkTick(tk, n, where) {
    if (!Array.isArray(tk) || tk.length !== 7 || typeof tk[0] !== "number" || typeof tk[1] !== "number" ||
        !Array.isArray(tk[5]) || !Array.isArray(tk[6]) || tk[5].length % 4 || tk[6].length % 4)
      fail("The recording is malformed at " + where + ".");
    if (tk[2] !== null && !(tk[2] >= 0 && tk[2] < n)) fail("The recording names an unknown item at " + where + ".");
    for (let i = 0; i < tk[5].length; i += 4) if (!(tk[5][i] >= 0 && tk[5][i] < n)) fail("The recording names an unknown item at " + where + ".");
    for (let i = 0; i < tk[6].length; i += 4) if (!(tk[6][i + 2] >= 0 && tk[6][i + 2] < n)) fail("The recording names an unknown item at " + where + ".");
  }

  // ---------- loading ----------
  // `text`: the recording's text, or a function giving it and the values
  // cut out of it (see `embedded`).
  function loadText(text, source) {
    try {
      const got = typeof text === "function" ? text() : { text, cut: null };
      const t0 = performance.now();
      const doc = parse(got.text, false, got.cut);
      S.parseMs = performance.now() - t0;
      open(doc, source);
      return true;
    } catch (e) {
      showError(e);
      return false;
    }
  }

  function showError(e) {
    $("app").hidden = true;
    S.rec = null;
    const text = e instanceof RecordingError ? e.message : "The recording could not be shown: " + (e && e.message);
    message(text + " Open another file with the button above.", "error");
  }

  function open(doc, source) {
    const t0 = performance.now();
    S.rec = doc;
    S.trimmed = false;
    S.items = doc.tree.items;
    S.agents = doc.agents;
    S.byId = new Map(S.agents.map((a, k) => [a.agent, k]));
    S.values = doc.lazyValues || new Map((doc.values || []).map(v => [v.agent, v]));
    S.agents.forEach(index);
    $("source").textContent = source || "";
    $("tree-name").textContent = doc.tree.name;
    message("", "");
    rangeFromAgents();
    S.sel = 0;
    S.cursor = S.last;
    S.v0 = S.first; S.v1 = S.last;
    S.filter = null;
    S.rows = S.agents.map((_, k) => k);
    assignColors();
    S.spans = S.agents.map(spansOf);
    countBehaviors();
    S.overviewCache = null;
    $("app").hidden = false;
    drawTree();
    fillQuery();
    selectIndex();
    layout();
    if (S.agents.length === 0) message("The recording holds no watched agent.", "info");
    render();
    S.openMs = performance.now() - t0;
    document.body.dataset.ready = "1";
  }

  // Where each entry of an agent's ticks starts: full ticks cover one
  // serial, runs of repeats `n`.
  function index(a) {
    const n = a.ticks.length;
    const start = new Float64Array(n), pos = new Int32Array(n);
    let s = 0, p = 0;
    for (let j = 0; j < n; j++) {
      const e = a.ticks[j];
      if (e.length === 7) { s = e[0]; start[j] = s; pos[j] = p; s += 1; p += 1; }
      else { start[j] = s; pos[j] = p; s += e[0]; p += e[0]; }
    }
    a.start = start; a.pos = pos; a.end = s; a.kept = p;
  }

  function rangeFromAgents() {
    let first = Infinity, last = -Infinity;
    for (const a of S.agents) {
      if (a.ticks.length === 0) continue;
      first = Math.min(first, a.start[0]);
      last = Math.max(last, a.end - 1);
    }
    if (first === Infinity) { first = 0; last = 0; }
    S.first = first; S.last = last;
    const sc = $("scrubber");
    sc.min = first; sc.max = last;
  }

  // The entry of agent `a` that covers serial `s`, or -1.
  function entryAt(a, s) {
    const st = a.start;
    let lo = 0, hi = st.length - 1, at = -1;
    while (lo <= hi) { const m = (lo + hi) >> 1; if (st[m] <= s) { at = m; lo = m + 1; } else hi = m - 1; }
    if (at < 0) return -1;
    const e = a.ticks[at];
    const len = e.length === 7 ? 1 : e[0];
    return s < st[at] + len ? at : -1;
  }

  // The full tick a run entry repeats.
  function baseOf(a, j) { while (j >= 0 && a.ticks[j].length !== 7) j--; return j >= 0 ? a.ticks[j] : null; }

  // The tick of agent entry `k` at serial `s`, or null; a tick of a run
  // is made from the tick it repeats.
  function tickAt(k, s) {
    const a = S.agents[k];
    if (!a || a.ticks.length === 0) return null;
    const j = entryAt(a, s);
    if (j < 0) return null;
    const e = a.ticks[j];
    if (e.length === 7) return e;
    const b = baseOf(a, j), now = S.rec.clock.now[s - S.rec.clock.first], since = e[1];
    const path = b[5].slice();
    for (let i = 0; i < path.length; i += 4) path[i + 2] = Math.fround(now - since[i / 4]);
    return [s, now, b[2], b[3], b[4], path, b[6]];
  }

  // The place of serial `s` among agent k's kept ticks, or -1.
  function keptAt(k, s) {
    const a = S.agents[k];
    const j = a ? entryAt(a, s) : -1;
    return j < 0 ? -1 : a.pos[j] + (s - a.start[j]);
  }

