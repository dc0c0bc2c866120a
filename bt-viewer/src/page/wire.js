  // ---------- wiring ----------
  function wire() {
    $("scrubber").addEventListener("input", e => seek(Number(e.target.value)));
    $("first").onclick = () => seek(S.first);
    $("last").onclick = () => seek(S.last);
    $("prev").onclick = () => seek(S.cursor - 1);
    $("next").onclick = () => seek(S.cursor + 1);
    $("play").onclick = () => {
      if (S.playing) { clearInterval(S.playing); S.playing = null; $("play").textContent = "play"; return; }
      $("play").textContent = "pause";
      S.playing = setInterval(() => { if (S.cursor >= S.last) $("play").onclick(); else seek(S.cursor + 1); }, 100);
    };
    document.addEventListener("keydown", e => {
      if (e.target.tagName === "INPUT" && (e.target.type === "text" || e.target.type === "number")) return;
      if (e.target.tagName === "SELECT") return;
      if (e.key === "ArrowLeft") seek(S.cursor - 1);
      if (e.key === "ArrowRight") seek(S.cursor + 1);
    });
    $("agent-search").addEventListener("change", e => {
      const v = e.target.value.trim().replace(/^#/, "");
      if (v === "") return;
      if (!selectAgent(v)) message("No watched agent with id " + v + " in this recording.", "info");
      else if (S.rec) message(S.live ? "Live: following the running program." : "", S.live ? "info" : "");
    });
    $("decider-search").addEventListener("input", e => searchDecider(e.target.value));
    $("whole-tree").addEventListener("change", render);
    $("file").addEventListener("change", e => {
      const f = e.target.files && e.target.files[0];
      if (!f) return;
      const r = new FileReader();
      r.onload = () => loadText(String(r.result), f.name);
      r.onerror = () => showError(new RecordingError("The file could not be read."));
      r.readAsText(f);
    });
    // The query bar.
    $("q-kind").addEventListener("change", queryForm);
    $("q-run").onclick = () => query($("q-kind").value, Number($("q-item").value), Number($("q-reason").value), $("q-from").value, $("q-to").value);
    $("q-clear").onclick = clearFilter;
    // The overview: a click shows the agents of a band.
    const ov = $("overview");
    ov.addEventListener("click", e => {
      const r = ov.getBoundingClientRect(), b = overviewAt(e.clientX - r.left, e.clientY - r.top);
      if (b) filterBand(b.leaf, b.tick);
    });
    ov.addEventListener("mousemove", e => {
      const r = ov.getBoundingClientRect(), b = overviewAt(e.clientX - r.left, e.clientY - r.top);
      if (b) showTip(b.count + " agents " + (b.leaf === null ? "idle" : "running " + node(b.leaf)) + " at tick " + b.tick + "\nclick to show them", e); else hideTip();
    });
    ov.addEventListener("mouseleave", hideTip);
    // The track: a click shows the agents of a kind at a tick.
    const tr = $("track");
    tr.addEventListener("click", e => {
      const r = tr.getBoundingClientRect(), b = trackAt(e.clientX - r.left, e.clientY - r.top);
      if (b) filterTrack(b.kind, b.tick);
    });
    tr.addEventListener("mousemove", e => {
      const r = tr.getBoundingClientRect(), b = trackAt(e.clientX - r.left, e.clientY - r.top);
      if (b) showTip(b.count + " agents " + TRACK.find(t => t[0] === b.kind)[3] + " at tick " + b.tick + "\nclick to show them", e); else hideTip();
    });
    tr.addEventListener("mouseleave", hideTip);
    // The lanes: click selects and seeks, drag pans, ctrl + wheel zooms.
    const lanes = $("lanes"), ruler = $("ruler");
    let drag = null;
    const down = e => { drag = { x: e.clientX, v0: S.v0, v1: S.v1, moved: false }; };
    lanes.addEventListener("mousedown", down);
    ruler.addEventListener("mousedown", down);
    window.addEventListener("mousemove", e => {
      if (!drag) return;
      const dx = e.clientX - drag.x;
      if (Math.abs(dx) > 3) drag.moved = true;
      if (drag.moved) { const d = Math.round(dx / px()); zoom(drag.v0 - d, drag.v1 - d); }
    });
    window.addEventListener("mouseup", () => { setTimeout(() => { drag = null; }, 0); });
    lanes.addEventListener("click", e => {
      if (drag && drag.moved) return;
      const r = lanes.getBoundingClientRect(), at = laneAt(e.clientX - r.left, e.clientY - r.top);
      if (!at) return;
      if (at.k !== S.sel) select(at.k);
      if (at.tick !== null) seek(at.tick);
    });
    lanes.addEventListener("mousemove", e => {
      if (drag && drag.moved) return;
      const r = lanes.getBoundingClientRect(), at = laneAt(e.clientX - r.left, e.clientY - r.top);
      if (at) showTip(laneTip(at.k, at.tick), e); else hideTip();
    });
    lanes.addEventListener("mouseleave", hideTip);
    ruler.addEventListener("mousemove", e => {
      const r = ruler.getBoundingClientRect(), s = tickOfX(e.clientX - r.left), tk = tickAt(S.sel, s);
      const tuned = s >= S.v0 && s <= S.v1 ? tuneNote(s) : "";
      if (s >= S.v0 && s <= S.v1) showTip("tick " + s + (tk ? " · t=" + tk[1].toFixed(3) : "") + (tuned ? "\n" + tuned : ""), e);
    });
    ruler.addEventListener("mouseleave", hideTip);
    const wheel = e => {
      if (!S.rec) return;
      if (e.ctrlKey || e.metaKey) {
        e.preventDefault();
        const r = lanes.getBoundingClientRect();
        zoomBy(e.deltaY > 0 ? 1.25 : 0.8, Math.max(S.v0, Math.min(S.v1, tickOfX(e.clientX - r.left))));
      } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        e.preventDefault();
        const d = Math.round((e.deltaX || e.deltaY) / px() / 4) || Math.sign(e.deltaX || e.deltaY);
        zoom(S.v0 + d, S.v1 + d);
      }
    };
    $("timeline").addEventListener("wheel", wheel, { passive: false });
    ruler.addEventListener("wheel", wheel, { passive: false });
    $("timeline").addEventListener("scroll", drawLanes);
    $("zoom-in").onclick = () => zoomBy(0.5);
    $("zoom-out").onclick = () => zoomBy(2);
    $("zoom-fit").onclick = () => zoom(S.first, S.last);
    window.addEventListener("resize", () => { if (S.rec) { layout(); render(); } });
  }

  window.btViewer = {
    // The text of the recording the page holds under element id `id`.
    embeddedText: id => { const got = embedded(id); return got.cut ? got.cut.whole() : got.text; },
    loadText, seek, select, selectAgent, searchDecider, zoom, query, filterBand, filterLegend, filterTrack, clearFilter, goMatch,
    // The matches of the last filter, earliest tick first: [agent, tick].
    matches: () => S.found ? S.found.list.map(([k, tick]) => [S.agents[k].agent, tick]) : [],
    // The track's counts per kind, per tick from `first`; where (in page
    // pixels) its row `kind` is drawn at tick `s`.
    track: () => ({ first: S.first, counts: Object.fromEntries(Object.entries(S.trouble).map(([k, c]) => [k, Array.from(c)])) }),
    trackPoint: (kind, s) => {
      const r = TRACK.findIndex(t => t[0] === kind), c = $("track").getBoundingClientRect();
      return r < 0 ? null : { x: c.left + X(s) + px() / 2, y: c.top + r * TRACK_ROW + TRACK_ROW - 2 };
    },
    dumpText: () => $("dump").textContent,
    state: () => ({
      cursor: S.cursor, first: S.first, last: S.last, agent: S.agents[S.sel] ? S.agents[S.sel].agent : null,
      bootMs: BOOT, readMs: S.readMs, unpackMs: S.unpackMs, parseMs: S.parseMs, openMs: S.openMs, filterMs: S.filterMs, queryMs: S.queryMs, v0: S.v0, v1: S.v1,
    }),
    tipText,
    // The plots' labels as drawn: [field, label] under the selected lane.
    plotLabels: () => (S.plotLabels || []).slice(),
    live: liveState,
    // Agent `id`'s tick at serial `s` as the page holds it, and how many
    // tick entries the page holds.
    tick: (id, s) => { const k = S.byId.get(Number(id)); return k === undefined ? null : tickAt(k, s); },
    entries: () => S.agents.reduce((n, a) => n + a.ticks.length, 0),
    // What a lane shows: spans [leaf name, from, to] and markers by kind.
    lane: id => {
      const k = S.byId.get(Number(id));
      if (k === undefined) return null;
      const markers = {};
      for (const m of S.spans[k].markers) (markers[m.kind] = markers[m.kind] || []).push(m.tick);
      return { spans: S.spans[k].spans.map(s => [leafName(s.leaf), s.from, s.to]), markers };
    },
    // The agents whose lanes are shown, in order, and those drawn now.
    rows: () => S.rows.map(k => S.agents[k].agent),
    drawn: () => S.drawn.slice(),
    // The overview's counts: per leaf name, agents per tick from `first`.
    overview: () => {
      const out = {};
      S.leaves.forEach((l, i) => { if (S.counts[i].some(x => x > 0)) out[leafName(l)] = Array.from(S.counts[i]); });
      return { first: S.first, counts: out };
    },
    // Where (in page pixels) tick `s` of agent `id`'s lane is drawn, and
    // where the overview draws band `leaf` at tick `s`.
    lanePoint: (id, s) => {
      const k = S.byId.get(Number(id)), r = S.rows.indexOf(k);
      if (r < 0) return null;
      const box = $("timeline"), c = $("lanes").getBoundingClientRect();
      const y = rowY(r);
      if (y < box.scrollTop || y + LANE_H > box.scrollTop + box.clientHeight) { box.scrollTop = y; drawLanes(); }
      return { x: c.left + X(s) + px() / 2, y: c.top + rowY(r) - box.scrollTop + LANE_H / 2 };
    },
    overviewPoint: (name, s) => {
      const i = S.leaves.findIndex(l => leafName(l) === name);
      if (i < 0 || s < S.first || s > S.last) return null;
      const b = bandsAt(s).find(b => b[0] === i), c = $("overview").getBoundingClientRect();
      return b ? { x: c.left + X(s) + px() / 2, y: c.top + b[1] + b[2] / 2, h: b[2] } : null;
    },
    colorOf: name => { const l = S.leaves.find(l => leafName(l) === name); return l === undefined ? null : colorOf(l); },
    // The tunables' values as the page holds them, the value of `name` in
    // effect at tick `s`, and the marks of their changes in view, as drawn
    // (x in page pixels).
    tuning: () => S.rec && S.rec.tuning ? JSON.parse(JSON.stringify(S.rec.tuning)) : null,
    tunedAt,
    tuneMarks: () => { const c = $("ruler").getBoundingClientRect(); return tuneMarks().map(m => ({ tick: m.tick, text: m.text, x: c.left + m.x })); },
  };

  wire();
  if ($("comparison")) openComparison();
  else if ($("recording")) loadText(() => embedded("recording"), "embedded recording");
  else if (location.protocol.startsWith("http")) follow();
  else message("Open a recording (a .json file written by bt-viewer) with the button above.", "info");
})();
