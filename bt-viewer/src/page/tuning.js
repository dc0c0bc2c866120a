  // ---------- tunables ----------
  // The tree's tunables as the recording holds them: their table
  // (`tree.tunables`) and their values (`tuning`: those in effect at the
  // first frame and each change, with the tick it took effect at). Each
  // change is marked on the ruler and across the lanes at its tick; a
  // live page gets the values anew in `tuning` events.
  const TUNE_COLOR = "#e8710a";

  // What is wrong with a recording's tunables, if anything.
  function checkTuning(doc) {
    const table = doc.tree.tunables;
    if (table !== undefined && !(Array.isArray(table) && table.every(t => t && typeof t.name === "string" && typeof t.kind === "string")))
      fail("The recording's tunables (tree.tunables) are malformed.");
    if (doc.tuning !== undefined) checkValues_(doc.tuning, "The recording's tuning");
  }

  function checkValues_(t, what) {
    if (!t || typeof t.first !== "number" || !Array.isArray(t.start) || !Array.isArray(t.changes) ||
        !t.start.every(v => v && typeof v.name === "string") ||
        !t.changes.every(c => c && typeof c.tick === "number" && typeof c.name === "string"))
      fail(what + " is malformed.");
  }

  // A live `tuning` event: the values over the frames the program keeps.
  function onTuning(t) {
    if (!S.rec) return;
    checkValues_(t, "A live tuning event");
    S.rec.tuning = t;
    drawAll();
    if (window.btLive) window.btLive.update(); // live controls
  }

  // A tunable's value as the page writes it.
  const tuneText = v => typeof v === "number" ? String(numText(v)) : String(v);

  // The changes that took effect at ticks s0..s1.
  function tuneChanges(s0, s1) {
    const t = S.rec && S.rec.tuning;
    return t ? t.changes.filter(c => c.tick >= s0 && c.tick <= s1) : [];
  }

  // The marks of the changes in view, as drawn: { tick, x, text } (x in
  // the ruler's pixels), one per tick, its changes joined.
  function tuneMarks() {
    const by = new Map();
    for (const c of tuneChanges(S.v0, S.v1)) {
      const text = c.name + " " + tuneText(c.from) + " → " + tuneText(c.to);
      by.set(c.tick, by.has(c.tick) ? by.get(c.tick) + ", " + text : text);
    }
    return [...by].map(([tick, text]) => ({ tick, x: X(tick), text }));
  }

  // On the ruler: a flag at each change's tick, labelled when there is
  // room before the next.
  function drawTuneMarks(g) {
    const marks = tuneMarks(), W = $("ruler").clientWidth;
    g.font = "10px system-ui, sans-serif"; g.textBaseline = "middle";
    marks.forEach((m, i) => {
      const next = i + 1 < marks.length ? marks[i + 1].x : W;
      g.fillStyle = TUNE_COLOR;
      g.fillRect(m.x, 0, 2, 20);
      g.beginPath(); g.moveTo(m.x + 2, 0); g.lineTo(m.x + 9, 4); g.lineTo(m.x + 2, 8); g.fill();
      const room = next - m.x - 14;
      if (room > 30) {
        g.save(); g.beginPath(); g.rect(m.x + 10, 0, room, 20); g.clip();
        g.fillStyle = "#fff"; g.fillRect(m.x + 10, 1, Math.min(room, g.measureText(m.text).width + 4), 10);
        g.fillStyle = "#8a4000"; g.fillText(m.text, m.x + 12, 6);
        g.restore();
      }
    });
  }

  // Across the lanes: a dashed line at each change's tick.
  function drawTuneLines(g, H) {
    const marks = tuneMarks();
    if (!marks.length) return;
    g.save();
    g.strokeStyle = TUNE_COLOR; g.lineWidth = 1.5; g.setLineDash([4, 3]);
    for (const m of marks) { g.beginPath(); g.moveTo(m.x + 1, 0); g.lineTo(m.x + 1, H); g.stroke(); }
    g.restore();
  }

  // The changes that took effect at tick `s`, for the ruler's tooltip and
  // the tick's summary ("" for none).
  function tuneNote(s) {
    const here = tuneChanges(s, s);
    return here.length ? "tuned at this tick: " + here.map(c => c.name + " " + tuneText(c.from) + " → " + tuneText(c.to)).join(", ") : "";
  }

  // The value of tunable `name` in effect at tick `s` (the newest when
  // `s` is past the last change), or undefined.
  function tunedAt(name, s) {
    const t = S.rec && S.rec.tuning;
    if (!t) return undefined;
    let v;
    for (const x of t.start) if (x.name === name) v = x.value;
    for (const c of t.changes) if (c.name === name && c.tick <= s) v = c.to;
    return v;
  }
