  // ---------- the recording inside the page ----------
  // page.rs writes an embedded recording compressed (raw deflate, in
  // base64): `#recording` holds its text, without the agents' values when
  // they could be cut out, and then `#recording-values` each agent's
  // values entry on its own, unpacked when the page first shows that
  // agent (see LazyValues). The browser reads a quarter of the bytes.

  // The recording held by the script element `id` (and `id`-values): its
  // text, and the values cut out of it as `parse` takes them (or null).
  function embedded(id) {
    const el = $(id), vals = $(id + "-values");
    const t0 = performance.now();
    const packed = el.textContent, more = vals ? vals.textContent : "";
    S.readMs = performance.now() - t0;
    const t1 = performance.now();
    const text = unpack(packed, "The recording in this page is", Number(el.dataset.size), el.dataset.sum);
    S.unpackMs = performance.now() - t1;
    if (!vals) return { text, cut: null };
    const nums = (vals.dataset.agents || "").split(",").filter(x => x !== "").map(Number), at = new Map();
    const sums = (vals.dataset.sums || "").split(",").filter(x => x !== "");
    const cutAt = Number(vals.dataset.at);
    let off = 0;
    for (let i = 0; i + 1 < nums.length; i += 2) { at.set(nums[i], [off, nums[i + 1], sums[i >> 1]]); off += nums[i + 1]; }
    if (nums.length % 2 || sums.length !== nums.length >> 1 || off !== more.length || !(cutAt >= 0 && cutAt <= text.length) || nums.some(x => !Number.isInteger(x)))
      fail("The recording in this page is damaged (its agents' values do not add up).");
    // An entry is unpacked with the character after it (a comma, or the
    // array's end), which `read` leaves out.
    const piece = (id, r) => unpack(more.slice(r[0], r[0] + r[1]), "The values of agent " + id + " in this page are", undefined, r[2]);
    const read = (r, id) => piece(id, r).slice(0, -1);
    // The text as it was, to say where a broken one breaks.
    const whole = () => {
      let mid = "";
      for (const [id, r] of at) mid += piece(id, r);
      return text.slice(0, cutAt) + ',"values":[' + (at.size ? mid : "]") + text.slice(cutAt);
    };
    return { text, cut: { rest: text, at, read, whole } };
  }

  // The text `b64` holds (raw deflate in base64, `size` bytes unpacked if
  // known, `sum` their Adler-32); `what` ("The … is") begins the message
  // when it cannot be unpacked or is not what was packed.
  function unpack(b64, what, size, sum) {
    let bytes;
    try {
      if (Uint8Array.fromBase64) bytes = Uint8Array.fromBase64(b64);
      else {
        const s = atob(b64);
        bytes = new Uint8Array(s.length);
        for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
      }
    } catch (e) { fail(what + " damaged (not base64: " + e.message + ")."); }
    const out = inflate(bytes, size);
    if (typeof out === "string") fail(what + " damaged (" + out + ").");
    if (String(adler32(out)) !== sum) fail(what + " damaged (what it unpacks to is not what was packed: its checksum differs).");
    if (typeof TextDecoder !== "function") fail("This browser cannot read the recording in this page (it has no TextDecoder); open the page in a current browser.");
    return new TextDecoder().decode(out);
  }

  // The Adler-32 checksum of `b` (RFC 1950), as page.rs writes it.
  function adler32(b) {
    let a = 1, c = 0;
    for (let i = 0, n = b.length; i < n;) {
      const end = Math.min(n, i + 5552);
      for (; i < end; i++) { a += b[i]; c += a; }
      a %= 65521; c %= 65521;
    }
    return (c * 65536 + a);
  }

  // ---------- inflate (RFC 1951) ----------
  // Raw deflate data `src` (a Uint8Array) unpacked, or a string saying
  // what is wrong with it. Each step reads at least one bit, and reading
  // past the end fails, so it always ends.
  const LBASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
  const LEXT = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
  const DBASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
  const DEXT = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
  const CLORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
  class Damaged extends Error {}
  let FIXED = null;

  // The decoding table of a code of lengths `lens`: indexed by the next
  // `bits` bits, each entry is symbol << 4 | length, 0 for no code.
  function huffTable(lens) {
    const count = new Uint16Array(16);
    let max = 0;
    for (const l of lens) { count[l]++; if (l > max) max = l; }
    if (max === 0) return { bits: 0, t: null };
    count[0] = 0;
    let left = 1;
    for (let l = 1; l <= 15; l++) { left = (left << 1) - count[l]; if (left < 0) throw new Damaged("an oversubscribed code"); }
    const next = new Uint16Array(16);
    for (let l = 1, code = 0; l <= 15; l++) { code = (code + count[l - 1]) << 1; next[l] = code; }
    const size = 1 << max, t = new Int32Array(size);
    for (let s = 0; s < lens.length; s++) {
      const l = lens[s];
      if (!l) continue;
      let c = next[l]++, r = 0;
      for (let k = 0; k < l; k++) { r = (r << 1) | (c & 1); c >>= 1; }
      for (let j = r; j < size; j += 1 << l) t[j] = (s << 4) | l;
    }
    return { bits: max, t };
  }

  // `size`: how many bytes it unpacks to, if known.
  function inflate(src, size) {
    const n = src.length, z = { p: 0, b: 0, c: 0 };
    const bits = k => {
      while (z.c < k) { if (z.p >= n + 4) throw new Damaged("it ends too soon"); z.b |= (z.p < n ? src[z.p] : 0) << z.c; z.p++; z.c += 8; }
      const v = z.b & ((1 << k) - 1);
      z.b >>>= k; z.c -= k;
      return v;
    };
    const sym = T => {
      if (!T.t) throw new Damaged("a symbol of an empty code");
      while (z.c < T.bits) { if (z.p >= n + 4) throw new Damaged("it ends too soon"); z.b |= (z.p < n ? src[z.p] : 0) << z.c; z.p++; z.c += 8; }
      const e = T.t[z.b & ((1 << T.bits) - 1)];
      if (!e) throw new Damaged("an unknown code");
      z.b >>>= e & 15; z.c -= e & 15;
      return e >> 4;
    };
    let out = new Uint8Array(size > 0 && size <= n * 1032 + 64 ? size : n * 5 + 1024), o = 0, last = 0;
    try {
      do {
        last = bits(1);
        const type = bits(2);
        if (type === 0) {
          z.b >>>= z.c & 7; z.c -= z.c & 7;
          const len = bits(16);
          if ((bits(16) ^ 0xffff) !== len) throw new Damaged("a stored block of a wrong length");
          if (o + len > out.length) { const w = new Uint8Array(Math.max(out.length * 2, o + len)); w.set(out.subarray(0, o)); out = w; }
          for (let i = 0; i < len; i++) out[o++] = bits(8);
          continue;
        }
        if (type === 3) throw new Damaged("a block of an unknown type");
        let L, D;
        if (type === 1) {
          if (!FIXED) {
            const l = new Uint8Array(288).fill(8, 0, 144).fill(9, 144, 256).fill(7, 256, 280).fill(8, 280);
            FIXED = [huffTable(l), huffTable(new Uint8Array(30).fill(5))];
          }
          [L, D] = FIXED;
        } else {
          const hlit = bits(5) + 257, hdist = bits(5) + 1, hclen = bits(4) + 4;
          const cl = new Uint8Array(19);
          for (let i = 0; i < hclen; i++) cl[CLORDER[i]] = bits(3);
          const C = huffTable(cl), lens = new Uint8Array(hlit + hdist);
          for (let i = 0; i < lens.length;) {
            const s = sym(C);
            if (s < 16) { lens[i++] = s; continue; }
            if (s === 16 && i === 0) throw new Damaged("a repeat with nothing before");
            const v = s === 16 ? lens[i - 1] : 0, rep = s === 16 ? 3 + bits(2) : s === 17 ? 3 + bits(3) : 11 + bits(7);
            if (i + rep > lens.length) throw new Damaged("code lengths that overrun");
            lens.fill(v, i, i + rep); i += rep;
          }
          if (!lens[256]) throw new Damaged("a block with no end");
          L = huffTable(lens.subarray(0, hlit)); D = huffTable(lens.subarray(hlit));
        }
        // The hot loop, on local copies of the bit reader.
        const lt = L.t, lb = L.bits, lm = (1 << lb) - 1, dt = D.t, db = D.bits, dm = (1 << db) - 1;
        let p = z.p, b = z.b, c = z.c;
        for (;;) {
          while (c < lb) { if (p >= n + 4) throw new Damaged("it ends too soon"); b |= (p < n ? src[p] : 0) << c; p++; c += 8; }
          let e = lt[b & lm];
          if (!e) throw new Damaged("an unknown code");
          b >>>= e & 15; c -= e & 15;
          let s = e >> 4;
          if (s < 256) {
            if (o === out.length) { const w = new Uint8Array(out.length * 2); w.set(out); out = w; }
            out[o++] = s;
            continue;
          }
          if (s === 256) break;
          s -= 257;
          if (s >= 29) throw new Damaged("an unknown length");
          let len = LBASE[s], x = LEXT[s];
          if (x) { while (c < x) { b |= (p < n ? src[p] : 0) << c; p++; c += 8; } len += b & ((1 << x) - 1); b >>>= x; c -= x; }
          if (!dt) throw new Damaged("a copy with no distance code");
          while (c < db) { if (p >= n + 4) throw new Damaged("it ends too soon"); b |= (p < n ? src[p] : 0) << c; p++; c += 8; }
          e = dt[b & dm];
          if (!e) throw new Damaged("an unknown code");
          b >>>= e & 15; c -= e & 15;
          s = e >> 4;
          if (s >= 30) throw new Damaged("an unknown distance");
          let dist = DBASE[s];
          x = DEXT[s];
          if (x) { while (c < x) { b |= (p < n ? src[p] : 0) << c; p++; c += 8; } dist += b & ((1 << x) - 1); b >>>= x; c -= x; }
          if (dist > o) throw new Damaged("a copy from before the start");
          if (o + len > out.length) { const w = new Uint8Array(out.length * 2 + len); w.set(out.subarray(0, o)); out = w; }
          if (dist >= len && len > 8) { out.copyWithin(o, o - dist, o - dist + len); o += len; }
          else for (let i = 0; i < len; i++, o++) out[o] = out[o - dist];
        }
        z.p = p; z.b = b; z.c = c;
      } while (!last);
      if (z.p * 8 - z.c > n * 8) throw new Damaged("it ends too soon");
    } catch (e) {
      if (e instanceof Damaged) return e.message;
      throw e;
    }
    return out.subarray(0, o);
  }
