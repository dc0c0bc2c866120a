  // ---------- names ----------
  const node = i => S.items[i].name + " #" + i;
  // A decision's value to three decimals, or to three digits when it is
  // that small (4.7e-6 is not 0.000).
  const decimal = x => {
    const v = Number(x);
    return v !== 0 && Math.abs(v) < 0.0005 ? String(+v.toPrecision(3)) : v.toFixed(3);
  };
  function hexMask(x) {
    const h = (typeof x === "string" ? BigInt(x) : BigInt(x)).toString(16);
    return "0x" + h.padStart(16, "0");
  }
  const hex = n => "0x" + n.toString(16);

  // A flag mask by the names of its bits (hex for bits with no name).
  function flagText(mask, names) {
    let m = BigInt(mask);
    const out = [];
    for (const [bit, name] of names) {
      const b = 1n << BigInt(bit);
      if (m & b) { out.push(name); m &= ~b; }
    }
    if (m !== 0n) out.push("0x" + m.toString(16));
    return out.join(" | ");
  }

  // The decision and stimuli flags agent entry `k`'s tick `s` was given,
  // [decision, stimuli] as BigInts, or null when the recording does not
  // hold them (see the recording's `inputs`).
  function inputsAt(k, s) {
    const a = S.agents[k], x = a && a.inputs;
    if (!x || x.length === 0) return null;
    let lo = 0, hi = x.length / 3 - 1, at = -1;
    while (lo <= hi) { const m = (lo + hi) >> 1; if (x[3 * m] <= s) { at = m; lo = m + 1; } else hi = m - 1; }
    return at < 0 ? null : [BigInt(x[3 * at + 1]), BigInt(x[3 * at + 2])];
  }

  // What of item `i`'s flag test `which` ("decision" or "stimuli") the
  // flags `word` fail, by the flags' names.
  function flagFailure(i, which, word) {
    const t = (S.items[i].preconditions || {})[which];
    if (!t) return "";
    const names = S.rec.tree.flag_names[which];
    const all = BigInt(t.all), any = BigInt(t.any), none = BigInt(t.none), notAll = BigInt(t.not_all);
    const out = [];
    if ((word & all) !== all) out.push("missing " + flagText(all & ~word, names));
    if (any !== 0n && (word & any) === 0n) out.push("none of " + flagText(any, names));
    if ((word & none) !== 0n) out.push("has " + flagText(word & none, names));
    if (notAll !== 0n && (word & notAll) === notAll) out.push("has all of " + flagText(notAll, names));
    return out.join("; ");
  }

  // A rejection's reason, with the flags that failed for a flag test when
  // the tick's flags `inputs` are known: "decision flags: missing DANGER".
  function rejectionText(code, item, inputs) {
    const reason = S.rec.legend.rejections[code];
    const which = reason === "decision flags" ? 0 : reason === "stimuli flags" ? 1 : -1;
    if (which < 0 || !inputs) return reason;
    const failed = flagFailure(item, which ? "stimuli" : "decision", inputs[which]);
    return failed ? reason + ": " + failed : reason;
  }

  // The tick's flags by name: "decision flags: DANGER | FOOD; stimuli flags: none".
  function inputsText(inputs) {
    const names = S.rec.tree.flag_names;
    return "decision flags: " + (flagText(inputs[0], names.decision) || "none") +
      "; stimuli flags: " + (flagText(inputs[1], names.stimuli) || "none");
  }

  function eventText(kind, code, item, arg, masks) {
    const lg = S.rec.legend;
    const name = lg.events[kind - 1] || "other";
    const it = S.items[item];
    switch (name) {
      case "reject": return "reject " + node(item) + " (" + rejectionText(code, item, inputsAt(S.sel, S.cursor)) + ")";
      case "accept": return "accept " + node(item) + " = " + decimal(arg);
      case "preempt": return "preempt in " + node(item) + " by " + node(arg);
      case "activate": {
        const b = it.behavior, f = BigInt(it.behavior_flags);
        if (b === null) return "activate " + node(item);
        return "activate " + node(item) + " [" + b + (f !== 0n ? " flags=0x" + f.toString(16) : "") + "]";
      }
      case "activate-failed": return "activate " + node(item) + " [" + it.behavior + "] failed";
      case "ended": return "tick " + node(item) + " [" + it.behavior + "] ended";
      case "deactivate": return "deactivate " + node(item) + " (" + lg.whys[code] + ")";
      case "redecide": {
        const m = (masks.get(item) || 0n) | (1n << BigInt(S.items[arg].child_index));
        masks.set(item, m);
        return "redecide " + node(item) + " without " + node(arg) + " mask=0x" + m.toString(16);
      }
      case "subset-rule": return "SUBSET RULE: " + node(item) + " accepted but no child can run";
      case "launch": return "launch " + node(item) + " code=" + arg;
      case "cancel": return "cancel " + node(item) + " ticket=" + code + "." + arg;
      case "action-reported": return "action of " + node(item) + " " + lg.actions[code];
      case "redecide-limit": return "REDECIDE LIMIT in " + node(item);
      case "jump": return "jump " + node(item) + " to " + node(arg);
      default: return name + " " + node(item);
    }
  }

  const CHOOSERS = { random: "random draw", shuffle: "shuffled draw", scored: "scores" };

  // What random and scored groups chose in a tick's events: for each
  // child of such a group activated in the tick, a line after its
  // activation with every candidate's value (the `decide` values the
  // trace has; 1 for a child with no `decide` that was not rejected) and
  // the pick.
  function choices(ev) {
    const kinds = S.rec.legend.events;
    const ACCEPT = kinds.indexOf("accept") + 1, ACTIVATE = kinds.indexOf("activate") + 1, REJECT = kinds.indexOf("reject") + 1;
    const after = new Map();
    let from = 0;
    for (let i = 0; i < ev.length; i += 4) {
      if (ev[i] !== ACTIVATE) continue;
      const it = S.items[ev[i + 2]];
      const parent = it.parent === null ? null : S.items[it.parent];
      if (!parent || !CHOOSERS[parent.policy]) continue;
      const value = new Map(), rejected = new Set();
      for (let q = from; q < i; q += 4) {
        if (S.items[ev[q + 2]].parent !== parent.index) continue;
        if (ev[q] === ACCEPT) value.set(ev[q + 2], Number(ev[q + 3]));
        if (ev[q] === REJECT) rejected.add(ev[q + 2]);
      }
      const list = parent.children
        .filter(c => value.has(c) || (!S.items[c].decide && !rejected.has(c)))
        .map(c => S.items[c].name + " " + (value.has(c) ? decimal(value.get(c)) : "1 (no decide)"));
      const text = CHOOSERS[parent.policy] + " in " + node(parent.index) + ": " + list.join(", ") + " → " + node(it.index);
      after.set(i, (after.get(i) || []).concat([text]));
      from = i + 4;
    }
    return after;
  }

  // ---------- dump (DebugPrintState) ----------
  function dumpText(tk, whole) {
    if (!tk) return "(no tick recorded for this agent here)\n";
    const path = tk[5];
    const levels = [];
    for (let i = 0; i < path.length; i += 4) levels.push({ item: path[i], redecides: path[i + 1], time: path[i + 2], mask: path[i + 3] });
    const line = (it, lv, d) => {
      let s = "  ".repeat(it.depth) + (lv ? "*" : " ") + it.child_index + ":" + it.name + "/0x" + (it.id >>> 0).toString(16).padStart(8, "0") + " ";
      s += it.policy !== null ? "(group " + it.policy + " " + hex(it.flags_bits) + ")" : "(behavior)";
      if (lv) s += " time: " + Number(lv.time).toFixed(2);
      if (it.behavior !== null) {
        const f = BigInt(it.behavior_flags);
        s += f === 0n ? " [" + it.behavior + "]" : " [" + it.behavior + " flags=0x" + f.toString(16) + "]";
      } else {
        s += " [(no group behavior)]";
      }
      if (lv && it.policy !== null) {
        s += " (" + hexMask(lv.mask) + " " + lv.redecides + ")";
        const next = levels[d + 1];
        s += next ? " idx: " + S.items[next.item].child_index : " idx: -";
      }
      return s + "\n";
    };
    if (!whole) {
      if (levels.length === 0) return "(idle)\n";
      return levels.map((lv, d) => line(S.items[lv.item], lv, d)).join("");
    }
    return S.items.map(it => {
      const lv = levels[it.depth];
      const active = lv && lv.item === it.index ? lv : null;
      return line(it, active, it.depth);
    }).join("");
  }

