  // ---------- the cursor ----------
  // A tick's events into `list` as the events panel lists them (the
  // `mark`-th event marked as where two runs differ, -1 for none): each
  // decide's value before its rejection, what the random and scored
  // groups chose after them, and the tick's error.
  function eventItems(list, tk, mark) {
    const ev = tk[6], masks = new Map(), after = choices(ev);
    const REJ = S.rec.legend.events.indexOf("reject") + 1, DECIDE = S.rec.legend.rejections.indexOf("decide");
    for (let i = 0; i < ev.length; i += 4) {
      if (ev[i] === REJ && ev[i + 1] === DECIDE) {
        // What the decide returned, as bt-core's trace has it.
        const d = document.createElement("li");
        d.className = "decline";
        d.textContent = "decline " + node(ev[i + 2]) + " = " + (ev[i + 3] === null ? "NaN" : decimal(ev[i + 3]));
        list.appendChild(d);
      }
      const li = document.createElement("li");
      li.className = (S.rec.legend.events[ev[i] - 1] || "other") + (i / 4 === mark ? " differs" : "");
      li.textContent = eventText(ev[i], ev[i + 1], ev[i + 2], ev[i + 3], masks);
      list.appendChild(li);
      for (const text of after.get(i) || []) {
        const w = document.createElement("li");
        w.className = "why"; w.textContent = text;
        list.appendChild(w);
      }
    }
    if (tk[4] >> 1) {
      const li = document.createElement("li");
      li.className = "error";
      li.textContent = "error: " + (S.rec.legend.errors[(tk[4] >> 1) - 1] || "unknown");
      list.appendChild(li);
    }
  }

  function render() {
    if (!S.rec) return;
    const a = S.agents[S.sel];
    const tk = a ? tickAt(S.sel, S.cursor) : null;
    $("scrubber").value = S.cursor;
    $("agent-label").textContent = a ? "#" + a.agent : "-";
    $("tick-label").textContent = "tick " + S.cursor + (tk ? " · t=" + tk[1].toFixed(3) : "") + " / " + S.last;
    // The active path, and the decide values of this tick on the nodes.
    const active = new Set(), value = new Map();
    if (tk) {
      for (let i = 0; i < tk[5].length; i += 4) active.add(tk[5][i]);
      const ACC = S.rec.legend.events.indexOf("accept") + 1;
      for (let i = 0; i < tk[6].length; i += 4) if (tk[6][i] === ACC) value.set(tk[6][i + 2], tk[6][i + 3]);
    }
    S.nodes.forEach((g, i) => {
      const on = active.has(i);
      g.classList.toggle("active", on);
      if (S.edges[i]) S.edges[i].classList.toggle("active", on);
      const text = value.has(i) ? "= " + decimal(value.get(i)) : "";
      if (S.vals[i].textContent !== text) { S.vals[i].textContent = text; fitName(i); }
      const r = lastRejection(i);
      if (r) g.dataset.lastRejection = r.reason; else delete g.dataset.lastRejection;
    });
    // The events, and what the random and scored groups chose.
    const list = $("events");
    list.textContent = "";
    if (tk) {
      eventItems(list, tk, -1);
      const flags = tk[4];
      let sum = (tk[2] === null ? "idle" : "leaf " + node(tk[2])) + ", " + tk[3] + " deciders visited";
      if (flags & 1) sum += "; some events were dropped (the tick was larger than the ring)";
      const inputs = inputsAt(S.sel, S.cursor);
      if (inputs) sum += " · " + inputsText(inputs);
      const tuned = tuneNote(S.cursor);
      if (tuned) sum += " · " + tuned;
      $("tick-summary").textContent = sum;
    } else {
      $("tick-summary").textContent = a ? "no tick of agent #" + a.agent + " kept here" : "";
    }
    $("dump").textContent = a ? dumpText(tk, $("whole-tree").checked) : "";
    renderValues();
    drawAll();
  }

  // The selected agent's own values at the cursor.
  function renderValues() {
    const table = $("values");
    table.textContent = "";
    const a = S.agents[S.sel], v = a && S.values.get(a.agent);
    if (!v) {
      const bad = a && S.values.errors && S.values.errors.get(a.agent);
      $("values-note").textContent = bad ? bad : a ? "Agent #" + a.agent + " recorded no values (see AgentData)." : "";
      return;
    }
    const j = keptAt(S.sel, S.cursor), jp = keptAt(S.sel, S.cursor - 1);
    const over = v.overflow.includes(S.cursor);
    $("values-note").textContent = "#" + a.agent + " at tick " + S.cursor + ", as the tick found it" + (over ? " — some values did not fit and are missing" : "");
    for (const name of Object.keys(v.fields)) {
      const col = v.fields[name], x = j >= 0 ? col[j] : null, px_ = jp >= 0 ? col[jp] : null;
      const tr = document.createElement("tr");
      tr.dataset.name = name;
      tr.dataset.value = x === null || x === undefined ? "" : JSON.stringify(x);
      if (jp >= 0 && x !== px_) tr.className = "changed";
      const n = document.createElement("td"); n.className = "name"; n.textContent = name;
      const d = document.createElement("td"); d.className = "value"; d.textContent = fmt(x);
      tr.append(n, d);
      table.appendChild(tr);
    }
  }

  function seek(s) {
    const t0 = performance.now();
    S.cursor = Math.max(S.first, Math.min(S.last, Math.round(s)));
    if (S.cursor < S.v0 || S.cursor > S.v1) { const w = S.v1 - S.v0; S.v0 = S.cursor - Math.floor(w / 2); S.v1 = S.v0 + w; zoom(S.v0, S.v1); }
    render();
    return performance.now() - t0;
  }

  function select(k) {
    if (k < 0 || k >= S.agents.length) return false;
    S.sel = k;
    selectIndex();
    layout();
    render();
    return true;
  }

  function selectAgent(id) {
    const k = S.byId.get(Number(id));
    if (k === undefined) return false;
    if (!S.rows.includes(k)) clearFilter();
    select(k);
    const box = $("timeline"), top = rowY(S.rows.indexOf(k));
    if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - LANE_H - S.plotH) box.scrollTop = Math.max(0, top - LANE_H);
    drawLanes();
    return true;
  }

