  // ---------- tree diagram: a tidy layered layout, left to right ----------
  function subtitle(it) {
    const parts = [];
    if (it.policy) parts.push(it.policy);
    if (it.behavior) parts.push("[" + it.behavior + "]");
    const p = it.preconditions || {};
    const names = S.rec.tree.flag_names;
    const test = (t, word, fn) => {
      if (!t) return;
      if (t.all !== "0x0") parts.push(word + " " + flagText(t.all, fn));
      if (t.any !== "0x0") parts.push(word + " any of " + flagText(t.any, fn));
      if (t.none !== "0x0") parts.push(word + " none of " + flagText(t.none, fn));
      if (t.not_all !== "0x0") parts.push(word + " not all of " + flagText(t.not_all, fn));
    };
    test(p.decision, "needs", names.decision); test(p.stimuli, "stimuli", names.stimuli);
    // A field that names a tunable shows its name (the number is its
    // default; the tunables panel and the timeline give the values).
    const tu = it.tuned || {};
    if (tu.every) parts.push("every " + tu.every);
    else if (p.every) parts.push("every " + p.every + "s");
    const sh = it.shared || {};
    if (tu.gate) parts.push("gate " + tu.gate);
    else if (sh.gate) parts.push("gate " + sh.gate);
    if (tu.cooldown) parts.push("cooldown " + tu.cooldown);
    else if (sh.cooldown) parts.push("cooldown " + sh.cooldown + "s");
    if (sh.together) parts.push("together " + sh.together);
    return parts.join(" · ");
  }

  function drawTree() {
    const svg = $("tree");
    svg.textContent = "";
    const items = S.items;
    const ROW = 40, BOXH = 32, GAP = 30;
    // Widths as the page draws the texts: the name and its index, room
    // for a decide value beside it, and the subtitle below.
    const probe = document.createElementNS(SVGNS, "g");
    probe.setAttribute("class", "node");
    svg.appendChild(probe);
    const measure = (text, cls) => {
      const t = document.createElementNS(SVGNS, "text");
      if (cls) t.setAttribute("class", cls);
      t.textContent = text;
      probe.appendChild(t);
      const w = t.getComputedTextLength();
      probe.removeChild(t);
      return w;
    };
    S.valW = measure("= -000.000", "val") || 60;
    const width = it => {
      const name = measure(it.name + " #" + it.index) || (it.name.length + 6) * 7.2;
      const sub = measure(subtitle(it), "sub") || subtitle(it).length * 5.6;
      return Math.ceil(Math.max(name + VAL_GAP + S.valW, sub)) + 12;
    };
    const colW = [];
    items.forEach(it => { colW[it.depth] = Math.max(colW[it.depth] || 0, width(it)); });
    const colX = [8];
    for (let d = 1; d < colW.length; d++) colX[d] = colX[d - 1] + colW[d - 1] + GAP;
    const y = new Array(items.length);
    let row = 0;
    const place = i => {
      const it = items[i];
      if (it.children.length === 0) { y[i] = row++ * ROW; return; }
      it.children.forEach(place);
      y[i] = (y[it.children[0]] + y[it.children[it.children.length - 1]]) / 2;
    };
    place(0);
    svg.removeChild(probe);
    const W = colX[colX.length - 1] + colW[colW.length - 1] + 8;
    const H = row * ROW + 8;
    svg.setAttribute("width", W); svg.setAttribute("height", H);
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    const edges = document.createElementNS(SVGNS, "g");
    svg.appendChild(edges);
    S.edges = new Array(items.length);
    S.nodes = new Array(items.length);
    S.vals = new Array(items.length);
    S.names = new Array(items.length);
    S.boxW = items.map(it => colW[it.depth]);
    items.forEach(it => {
      const cy = y[it.index] + 4 + BOXH / 2;
      if (it.parent !== null) {
        const p = items[it.parent];
        const x1 = colX[p.depth] + colW[p.depth], y1 = y[p.index] + 4 + BOXH / 2;
        const x2 = colX[it.depth], mx = (x1 + x2) / 2;
        const e = document.createElementNS(SVGNS, "path");
        e.setAttribute("class", "edge");
        e.setAttribute("d", "M" + x1 + "," + y1 + " C" + mx + "," + y1 + " " + mx + "," + cy + " " + x2 + "," + cy);
        edges.appendChild(e);
        S.edges[it.index] = e;
      }
      const g = document.createElementNS(SVGNS, "g");
      g.setAttribute("class", "node " + it.kind);
      g.dataset.item = it.index;
      g.dataset.name = it.name;
      g.setAttribute("transform", "translate(" + colX[it.depth] + "," + (y[it.index] + 4) + ")");
      const r = document.createElementNS(SVGNS, "rect");
      r.setAttribute("width", colW[it.depth]); r.setAttribute("height", BOXH); r.setAttribute("rx", 5);
      const t1 = document.createElementNS(SVGNS, "text");
      t1.setAttribute("x", 6); t1.setAttribute("y", 10); t1.setAttribute("class", "name"); t1.textContent = it.name;
      const ti = document.createElementNS(SVGNS, "tspan");
      ti.setAttribute("class", "idx"); ti.textContent = " #" + it.index;
      t1.appendChild(ti);
      const tv = document.createElementNS(SVGNS, "text");
      tv.setAttribute("x", colW[it.depth] - 6); tv.setAttribute("y", 10); tv.setAttribute("class", "val"); tv.setAttribute("text-anchor", "end");
      const t2 = document.createElementNS(SVGNS, "text");
      t2.setAttribute("x", 6); t2.setAttribute("y", 24); t2.setAttribute("class", "sub"); t2.textContent = subtitle(it);
      g.append(r, t1, tv, t2);
      g.addEventListener("mouseenter", ev => showTip(tipText(it.index), ev));
      g.addEventListener("mousemove", moveTip);
      g.addEventListener("mouseleave", hideTip);
      g.addEventListener("click", () => { $("decider-search").value = it.name; searchDecider(it.name); });
      g.style.cursor = "pointer";
      svg.appendChild(g);
      S.nodes[it.index] = g;
      S.vals[it.index] = tv;
      S.names[it.index] = t1;
    });
    // A reference's jump: a dashed edge from its box to its target's,
    // apart from the tree's own edges.
    items.forEach(it => {
      if (it.target === null || it.target === undefined) return;
      const t = items[it.target];
      const x1 = colX[it.depth] + colW[it.depth], y1 = y[it.index] + 4 + BOXH / 2;
      const x2 = colX[t.depth] + colW[t.depth], y2 = y[t.index] + 4 + BOXH / 2;
      const bend = Math.max(x1, x2) + GAP;
      const e = document.createElementNS(SVGNS, "path");
      e.setAttribute("class", "jump");
      e.dataset.from = it.index; e.dataset.to = t.index;
      e.setAttribute("d", "M" + x1 + "," + y1 + " C" + bend + "," + y1 + " " + bend + "," + y2 + " " + x2 + "," + y2);
      edges.appendChild(e);
    });
    const right = Math.max(...items.map(it => colX[it.depth] + colW[it.depth])) + 2 * GAP;
    if (items.some(it => it.target !== null && it.target !== undefined) && right > W) {
      svg.setAttribute("width", right);
      svg.setAttribute("viewBox", "0 0 " + right + " " + H);
    }
  }

  // The name of item `i` beside its decide value: cut short with an
  // ellipsis when both do not fit in the box (the tip gives it whole).
  function fitName(i) {
    const t = S.names[i], name = t.firstChild, it = S.items[i];
    const val = S.vals[i].textContent ? S.vals[i].getComputedTextLength() + VAL_GAP : 0;
    const room = S.boxW[i] - 12 - val;
    name.nodeValue = it.name;
    if (t.getComputedTextLength() <= room) return;
    let n = it.name.length;
    while (n > 1) { n--; name.nodeValue = it.name.slice(0, n) + "…"; if (t.getComputedTextLength() <= room) break; }
  }

  // Per item, the selected agent's rejections (by reason code) and decide
  // values (those that accepted and those that rejected) over its kept
  // ticks, as [from, to, code or value] runs: made once per agent.
  function selectIndex() {
    const a = S.agents[S.sel];
    const rej = new Map(), dec = new Map();
    S.selIdx = { rej, dec };
    if (!a) return;
    const kinds = S.rec.legend.events;
    const REJ = kinds.indexOf("reject") + 1, ACC = kinds.indexOf("accept") + 1;
    const DECIDE = S.rec.legend.rejections.indexOf("decide");
    let base = null, from = 0, to = 0;
    const add = (m, item, x) => {
      let l = m.get(item);
      if (!l) { l = []; m.set(item, l); }
      const last = l[l.length - 1];
      if (last && last[1] === from - 1 && last[2] === x) last[1] = to; else l.push([from, to, x]);
    };
    for (let j = 0; j < a.ticks.length; j++) {
      const e = a.ticks[j];
      if (e.length === 7) base = e;
      from = a.start[j]; to = from + (e.length === 7 ? 1 : e[0]) - 1;
      const ev = base[6];
      for (let i = 0; i < ev.length; i += 4) {
        if (ev[i] === REJ) {
          add(rej, ev[i + 2], ev[i + 1]);
          if (ev[i + 1] === DECIDE) add(dec, ev[i + 2], ev[i + 3]);
        } else if (ev[i] === ACC) add(dec, ev[i + 2], ev[i + 3]);
      }
    }
  }

  // A decide value as the page writes it: a rejecting one says so (NaN
  // is written null in a recording).
  const decideText = v => v === null ? "NaN (rejects)" : decimal(v) + (Number(v) > 0 ? "" : " (rejects)");

  // The last run in `list` at or before the cursor: [tick, value].
  function lastOf(list) {
    if (!list) return null;
    let lo = 0, hi = list.length - 1, at = -1;
    while (lo <= hi) { const m = (lo + hi) >> 1; if (list[m][0] <= S.cursor) { at = m; lo = m + 1; } else hi = m - 1; }
    return at < 0 ? null : [Math.min(list[at][1], S.cursor), list[at][2]];
  }

  // The last rejection of `item` for the selected agent, at or before the cursor.
  function lastRejection(item) {
    const r = lastOf(S.selIdx && S.selIdx.rej.get(item));
    if (!r) return null;
    const tk = tickAt(S.sel, r[0]);
    return { reason: rejectionText(r[1], item, inputsAt(S.sel, r[0])), tick: r[0], now: tk ? tk[1] : NaN };
  }

  function tipText(i) {
    const it = S.items[i];
    const lines = [node(i) + "  (" + (it.policy ? "group, " + it.policy : "behavior") + "; #" + i + " is its index in the tree, child " + it.child_index + " of its parent)"];
    if (it.behavior) lines.push("behavior: " + it.behavior + (it.behavior_flags !== "0x0" ? " flags=" + it.behavior_flags : ""));
    if (it.flags.length) lines.push("flags: " + it.flags.join(" | "));
    const sub = subtitle(it);
    if (sub) lines.push(sub);
    lines.push(it.decide ? "has a decide function" : "no decide (accepts with 1.0)");
    const d = lastOf(S.selIdx && S.selIdx.dec.get(i));
    if (d && d[0] === S.cursor) lines.push("decide value at this tick: " + decideText(d[1]));
    else if (d) lines.push("last decide value: " + decideText(d[1]) + " (tick " + d[0] + ")");
    else lines.push("decide value: none in the kept ticks up to here");
    const tk = tickAt(S.sel, S.cursor);
    if (tk && it.parent !== null && CHOOSERS[S.items[it.parent].policy]) {
      for (const texts of choices(tk[6]).values()) for (const t of texts) if (t.includes(" in " + node(it.parent) + ":")) lines.push(t);
    }
    const r = lastRejection(i);
    lines.push(r ? "last rejection: " + r.reason + " (tick " + r.tick + ", t=" + r.now.toFixed(3) + ")" : "last rejection: none in the kept ticks");
    return lines.join("\n");
  }

  function showTip(text, ev) {
    const tip = $("tip");
    tip.textContent = text;
    tip.style.display = "block";
    moveTip(ev);
  }
  function moveTip(ev) {
    const tip = $("tip");
    const x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 4);
    const y = ev.clientY + 12 + tip.offsetHeight > window.innerHeight ? ev.clientY - tip.offsetHeight - 8 : ev.clientY + 12;
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  function hideTip() { $("tip").style.display = "none"; }

