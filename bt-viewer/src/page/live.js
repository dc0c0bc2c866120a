"use strict";
// --- live controls ---
// The live page's controls: it follows the running program (and says so
// when the user looks back), and a program that calls LiveServer::frame
// can be paused, stepped, resumed and stopped by breakpoints from here.
// The main script hands over its event stream and a few of its functions
// through window.btLive.attach.
window.btLive = (function () {
  const $ = id => document.getElementById(id);
  const meta = document.querySelector('meta[name="bt-live-token"]');
  const L = { api: null, control: null, items: null, error: "", stop: "", barH: -1 };

  function attach(es, api) {
    L.api = api;
    $("live-bar").hidden = false;
    document.body.classList.add("live-bar-on");
    // The page keeps room below for the bar, however tall its list makes it.
    if (typeof ResizeObserver !== "undefined") new ResizeObserver(fitBar).observe($("live-bar"));
    fitBar();
    es.addEventListener("control", ev => {
      try { onControl(JSON.parse(ev.data)); } catch (e) { showError("Live: a control event could not be read: " + e.message); }
    });
    // While the program is paused, the server sends beats: a page that
    // answers none for 1.5 s counts as gone (a hung tab does not hold it).
    es.addEventListener("beat", ev => answerBeat(Number(ev.data)));
    // The user's own moves (scrubbing, keys, clicks) may leave the end.
    for (const kind of ["input", "click", "keyup"]) document.addEventListener(kind, () => setTimeout(update, 0));
    if (window.btTune) window.btTune.attach(api, send); // tunables panel
    wire();
  }

  // The page's bottom padding follows the bar's height; the lanes are
  // laid out again in the room left.
  function fitBar() {
    const h = $("live-bar").offsetHeight;
    if (h === L.barH) return;
    L.barH = h;
    document.body.style.paddingBottom = h + "px";
    window.dispatchEvent(new Event("resize"));
  }

  function showError(text) { L.error = text; $("live-error").textContent = text; }

  function send(body) {
    showError("");
    return fetch("control", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Bt-Token": meta ? meta.content : "" },
      body: JSON.stringify(body),
    }).then(r => r.ok ? true : r.text().then(t => { showError("The program refused: " + t); return false; }),
      e => { showError("The program could not be reached: " + e.message); return false; });
  }

  // Says the page read beat n; the answer needs no showing (a late one
  // is refused, and the next beat is answered anyway).
  function answerBeat(n) {
    fetch("control", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Bt-Token": meta ? meta.content : "" },
      body: JSON.stringify({ op: "beat", n }),
    }).catch(() => {});
  }

  function following() {
    const st = L.api.state();
    return !st.rec || st.cursor === st.last;
  }

  // Keeps the cursor in view while following; the banner otherwise.
  function update() {
    if (!L.api) return;
    const st = L.api.state();
    if (!st.rec) return;
    const on = following();
    $("live-follow").hidden = on;
    $("live-at").textContent = st.cursor;
    $("live-now").textContent = st.last;
    fillForm();
    if (window.btTune) window.btTune.update(); // tunables panel
  }

  function followAgain() { L.api.seek(L.api.state().last); update(); }

  function onControl(c) {
    L.control = c;
    $("live-controls").hidden = !c.framing;
    const state = $("live-state");
    state.className = c.paused ? "paused" : "";
    if (!c.paused) { state.textContent = "running"; L.stop = ""; }
    else {
      const hit = c.hit;
      let text = "paused at the end of tick " + c.tick;
      if (c.why === "breakpoint" && hit) {
        // The breakpoint that fired, by its id: its place in the list as
        // it is now, or none once removed.
        const place = typeof hit.breakpoint === "number" ? "breakpoint " + (hit.breakpoint + 1) : "a breakpoint since removed";
        text += ": " + place + " (" + describe(c.fired) + ") fired for agent #" + hit.agent;
      } else if (c.why === "step") text += " (one step)";
      state.textContent = text;
      // The page shows the tick it stopped at (and the agent a breakpoint
      // fired for), once per stop: an edit of the list while paused
      // leaves the user where they look. A page that comes (a reload)
      // while the program is paused shows it too.
      const stop = c.tick + " " + c.why + (hit ? " " + hit.agent + " " + hit.tick : "");
      if (stop !== L.stop) {
        L.stop = stop;
        if (hit) L.api.selectAgent(hit.agent);
        L.api.seek(hit ? hit.tick : c.tick);
      }
    }
    $("live-pause").disabled = c.paused;
    $("live-step").disabled = false;
    $("live-resume").disabled = !c.paused;
    drawBreakpoints();
    update();
  }

  function describe(b) {
    if (!b) return "?";
    const who = b.agent === null || b.agent === undefined ? "any agent" : "agent #" + b.agent;
    switch (b.on) {
      case "enter": return b.decider + " entered, " + who;
      case "reject": return b.decider + " rejected" + (b.reason ? " (" + b.reason + ")" : "") + ", " + who;
      case "subset-rule": return "Subset Rule" + (b.decider ? " at " + b.decider : "") + ", " + who;
      case "error": return "error, " + who;
      case "launch": return "deferred action" + (b.decider ? " of " + b.decider : "") + ", " + who;
      default: return b.on;
    }
  }

  // The breakpoints set, each with the id the program gave it: sent back
  // with it, a breakpoint stays the same one.
  function breakpoints() { return L.control ? L.control.breakpoints.map(b => Object.assign({}, b)) : []; }

  function drawBreakpoints() {
    const c = L.control, list = $("bp-list");
    const unrecorded = new Set((c && c.unrecorded) || []);
    const fired = c && c.paused && c.why === "breakpoint" && c.fired ? c.fired.id : null;
    list.textContent = "";
    breakpoints().forEach((b, i) => {
      const li = document.createElement("li");
      li.dataset.on = b.on;
      li.dataset.id = b.id;
      if (b.id === fired) li.className = "fired";
      li.append((i + 1) + ". " + describe(b) + " ");
      if (unrecorded.has(b.id)) {
        const note = document.createElement("span");
        note.className = "bp-unrecorded";
        note.textContent = "(agent #" + b.agent + " is not recorded now: fires once it is) ";
        li.appendChild(note);
      }
      const x = document.createElement("button");
      x.textContent = "remove";
      x.className = "bp-remove";
      x.onclick = () => send({ op: "breakpoints", set: breakpoints().filter(k => k.id !== b.id) });
      li.appendChild(x);
      list.appendChild(li);
    });
  }

  // The deciders and reasons of the recording shown.
  function fillForm() {
    const rec = L.api.state().rec;
    if (!rec || L.items === rec.tree.items) return;
    L.items = rec.tree.items;
    const dec = $("bp-decider");
    const keep = dec.value;
    dec.textContent = "";
    const any = document.createElement("option");
    any.value = ""; any.textContent = "any decider";
    dec.appendChild(any);
    for (const name of new Set(rec.tree.items.map(it => it.name))) {
      const o = document.createElement("option");
      o.value = name; o.textContent = name;
      dec.appendChild(o);
    }
    dec.value = keep;
    const reason = $("bp-reason");
    reason.textContent = "";
    for (const r of [""].concat(rec.legend.rejections)) {
      const o = document.createElement("option");
      o.value = r; o.textContent = r === "" ? "any reason" : r;
      reason.appendChild(o);
    }
    formShape();
  }

  function formShape() {
    const on = $("bp-on").value, dec = $("bp-decider");
    dec.hidden = on === "error";
    // An entry or a rejection is of one decider: "any decider" is not
    // offered for them.
    const one = on === "enter" || on === "reject", any = dec.querySelector('option[value=""]');
    if (any) { any.disabled = one; any.hidden = one; }
    if (one && dec.value === "" && dec.options.length > 1) dec.selectedIndex = 1;
    $("bp-reason").hidden = on !== "reject";
  }

  function add() {
    const on = $("bp-on").value;
    const b = { on };
    const decider = $("bp-decider").value;
    if (on !== "error" && decider !== "") b.decider = decider;
    if (on === "reject" && $("bp-reason").value !== "") b.reason = $("bp-reason").value;
    const agent = $("bp-agent").value.trim().replace(/^#/, "");
    if (agent !== "") {
      if (!/^\d+$/.test(agent)) { showError("An agent is given by its id, a number (or left empty for any)."); return Promise.resolve(false); }
      b.agent = Number(agent);
    } else b.agent = null;
    return send({ op: "breakpoints", set: breakpoints().concat([b]) });
  }

  let wired = false;
  function wire() {
    if (wired) return;
    wired = true;
    $("live-follow-again").onclick = followAgain;
    $("live-pause").onclick = () => send({ op: "pause" });
    $("live-step").onclick = () => send({ op: "step" });
    $("live-resume").onclick = () => send({ op: "resume" });
    $("bp-on").onchange = formShape;
    $("bp-add").onclick = add;
  }

  return { attach, update, send, add, state: () => L.control, error: () => L.error };
})();
// --- /live controls ---
