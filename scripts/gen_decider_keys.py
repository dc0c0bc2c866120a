#!/usr/bin/env python3
"""Rewrites the key arms of `__bt_decider_impl!` in bt-macros/src/decider.rs.

Each key arm restates every slot of the muncher, which is tedious and
error-prone by hand. Run from the repository root after changing the slot
list (the emit arms in decider.rs destructure the same slots, in this order):

    python3 scripts/gen_decider_keys.py
"""

SLOTS = [
    "decide", "needs_all", "needs_any", "needs_none", "needs_not_all",
    "stimuli_all", "stimuli_any", "stimuli_none", "stimuli_not_all",
    "every", "flags", "behavior_flags", "behavior", "name", "id",
    "gate", "cooldown", "together", "select",
]

# key -> (pattern after `key:`, stored tokens, modes, kinds)
FLAGS = ("$($f:path)|+", "0u64 $(| ($f).bits() as u64)+")
KEYS = {
    "decide": ("$v:expr", "$v"),
    "needs_all": FLAGS, "needs_any": FLAGS, "needs_none": FLAGS, "needs_not_all": FLAGS,
    "stimuli_all": FLAGS, "stimuli_any": FLAGS, "stimuli_none": FLAGS, "stimuli_not_all": FLAGS,
    "every": ("$v:expr", "($v) as f64"),
    "flags": ("$($f:ident)|+", "0u8 $(| $k::DeciderFlags::$f.bits())+"),
    "behavior_flags": FLAGS,
    "behavior": ("$b:path", "$b"),
    "name": ("$v:expr", "$v"),
    "id": ("$v:expr", "$v"),
    "gate": ("$v:expr", "($v) as u16"),
    "cooldown": ("$v:expr", "($v) as f64"),
    "together": ("$v:expr", "($v) as u8"),
    "select": ("$v:expr", "$v"),
}

# Keys whose number may name a tunable instead: `every: tunable(X)`. The
# slot then holds `@tuned X`, which `__bt_decider_literal` reads. The arm
# comes before the key's `$v:expr` arm, which would take `tunable(X)` as a
# call.
TUNED = ("every", "gate", "cooldown")

out = []
for key, pat, store in [
    (key, pat, store)
    for key in SLOTS
    for pat, store in (
        [("tunable($t:path)", "@tuned $t")] if key in TUNED else []
    ) + [KEYS[key]]
]:
    idx = SLOTS.index(key)
    before = [f"$s{i}:tt" for i in range(idx)]
    after = [f"$s{i}:tt" for i in range(idx + 1, len(SLOTS))]
    slots_in = " ".join(before + ["[]"] + after)
    slots_out = " ".join([f"$s{i}" for i in range(idx)] + [f"[{store}]"] + [f"$s{i}" for i in range(idx + 1, len(SLOTS))])
    mode = "full" if key in ("name", "id") else "$mode:tt"
    mode_out = "full" if key in ("name", "id") else "$mode"
    kind = "group" if key == "behavior" else "$kind:tt"
    kind_out = "group" if key == "behavior" else "$kind"
    form = " tunable(…)" if pat.startswith("tunable") else ""
    out.append(f"    // Middle: `{key}:{form}`.")
    out.append(f"    (@keys $k:tt {mode} {kind} $head:tt [{slots_in}] {key}: {pat} $(, $($rest:tt)*)?) => {{")
    out.append(f"        $crate::__bt_decider_impl! {{ @keys $k {mode_out} {kind_out} $head [{slots_out}] $($($rest)*)? }}")
    out.append("    };")
BEGIN = "    // BEGIN GENERATED KEY ARMS (scripts/gen_decider_keys.py)\n"
END = "    // END GENERATED KEY ARMS\n"
path = "bt-macros/src/decider.rs"
text = open(path).read()
head, rest = text.split(BEGIN)
_, tail = rest.split(END)
open(path, "w").write(head + BEGIN + "\n".join(out) + "\n" + END + tail)
