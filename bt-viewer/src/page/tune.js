// --- tunables panel ---
// The live page's panel of the tree's tunables: each with its doc line,
// kind, range and value in effect, and a control that changes it (a
// number field, a checkbox, or a list of names), sent as a `tune` control
// request. The program takes the change at its next frame, in effect from
// its next tick; the page shows it staged until the values it is sent say
// so, and a refusal names the tunable and why. window.btLive hands it the
// page and its way to send requests.
window.btTune = (function () {
  const $ = id => document.getElementById(id);
  const T = { api: null, send: null, table: null, staged: new Map() };

  function attach(api, send) { T.api = api; T.send = send; }

  // The value in effect now: the last change's, or the start's.
  function valueNow(rec, name) {
    const t = rec.tuning;
    if (!t) return undefined;
    let v;
    for (const x of t.start) if (x.name === name) v = x.value;
    for (const c of t.changes) if (c.name === name) v = c.to;
    return v;
  }

  // Where a change took effect, for the note after it was sent.
  function takenAt(rec, name, value) {
    const t = rec.tuning;
    if (!t) return null;
    for (let i = t.changes.length - 1; i >= 0; i--) {
      const c = t.changes[i];
      if (c.name === name) return c.to === value ? c.tick : null;
    }
    return null;
  }

  const text = v => v === undefined || v === null ? "–" : String(v);
  const range = t => t.kind === "bool" ? "bool" : t.kind === "choice" && Array.isArray(t.choices) ?
    "one of " + t.choices.join(", ") : t.kind + " " + text(t.min) + " … " + text(t.max);

  // The control that changes tunable `t`: a checkbox, a list of names, or
  // a number field with its button.
  function controlOf(t, row) {
    if (t.kind === "bool") {
      const box = document.createElement("input");
      box.type = "checkbox";
      box.onchange = () => tune(t, box.checked, row);
      return [box];
    }
    if (Array.isArray(t.choices)) {
      const sel = document.createElement("select");
      for (const name of t.choices) { const o = document.createElement("option"); o.value = o.textContent = name; sel.appendChild(o); }
      sel.onchange = () => tune(t, sel.value, row);
      return [sel];
    }
    const field = document.createElement("input");
    field.type = "number";
    field.step = t.kind === "int" ? "1" : "any";
    if (typeof t.min === "number") field.min = t.min;
    if (typeof t.max === "number") field.max = t.max;
    field.oninput = () => { field.dataset.edited = "1"; };
    const set = document.createElement("button");
    set.textContent = "set";
    set.className = "tune-set";
    const go = () => {
      const v = field.value.trim();
      if (v === "" || !Number.isFinite(Number(v))) { note(row, "not a number", true); return; }
      tune(t, Number(v), row);
    };
    set.onclick = go;
    field.onkeydown = e => { if (e.key === "Enter") go(); };
    return [field, set];
  }

  function note(row, what, bad) {
    const n = row.querySelector(".tune-note");
    n.textContent = what;
    n.className = "tune-note" + (bad ? " refused" : "");
  }

  function tune(t, value, row) {
    note(row, "sending…", false);
    return fetchTune(t.name, value).then(([ok, why]) => {
      if (ok) { T.staged.set(t.name, value); note(row, "staged: in effect from the program's next tick", false); }
      else note(row, why, true);
      update();
      return ok;
    });
  }

  // Sends the request; [taken, the program's answer].
  function fetchTune(name, value) {
    const meta = document.querySelector('meta[name="bt-live-token"]');
    return fetch("control", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Bt-Token": meta ? meta.content : "" },
      body: JSON.stringify({ op: "tune", name, value }),
    }).then(r => r.text().then(t => [r.ok, r.ok ? t : "refused: " + t]), e => [false, "the program could not be reached: " + e.message]);
  }

  // Builds the panel when the tree's table changes; shows the values in
  // effect, and leaves a field being edited alone.
  function update() {
    if (!T.api) return;
    const rec = T.api.state().rec, panel = $("tune-panel");
    const table = rec && rec.tree.tunables;
    panel.hidden = !table || table.length === 0;
    if (panel.hidden) return;
    if (T.table !== table) build(table);
    $("tune-count").textContent = "(" + table.length + ")";
    for (const t of table) {
      const row = $("tune-table").querySelector('tr[data-name="' + CSS.escape(t.name) + '"]');
      if (!row) continue;
      const v = valueNow(rec, t.name), cell = row.querySelector(".tune-value");
      cell.textContent = text(v);
      row.dataset.value = JSON.stringify(v === undefined ? null : v);
      const input = row.querySelector("input, select");
      if (input.type === "checkbox") input.checked = v === true;
      else if (document.activeElement !== input && !input.dataset.edited && v !== undefined) input.value = v;
      if (T.staged.has(t.name)) {
        const at = takenAt(rec, t.name, T.staged.get(t.name));
        if (at !== null) { T.staged.delete(t.name); note(row, "in effect from tick " + at, false); if (input.dataset) delete input.dataset.edited; }
      }
    }
  }

  function build(table) {
    T.table = table;
    const body = $("tune-table");
    body.textContent = "";
    for (const t of table) {
      const tr = document.createElement("tr");
      tr.dataset.name = t.name;
      const cells = [["tune-name", t.name], ["tune-doc", t.doc || ""], ["tune-kind", range(t)], ["tune-value", ""]];
      for (const [cls, content] of cells) {
        const td = document.createElement("td");
        td.className = cls; td.textContent = content;
        tr.appendChild(td);
      }
      const ctl = document.createElement("td");
      ctl.className = "tune-control";
      ctl.append(...controlOf(t, tr));
      const n = document.createElement("td");
      n.className = "tune-note";
      tr.append(ctl, n);
      body.appendChild(tr);
    }
  }

  return { attach, update, tune: (name, value) => fetchTune(name, value) };
})();
// --- /tunables panel ---
