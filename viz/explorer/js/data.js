// The data: the packed payload from Streamlit (or the exported file's JSON with base64 weights) decoded
// into each kind's maps, ready to draw. viz/explorer/payload.py writes what this reads.
//
// A kind comes as float32 ("f4", every weight exact) or, past a few million weights, as one byte a
// weight ("q8": code · row's largest / 255, within a fifth of a percent of the row's largest). A q8
// kind stays bytes in the browser (151 MB for 12 × 12 heads at 1,024 tokens, not 604 MB of floats):
// a map is decoded when it is shown, and the last few decoded are kept. Every view, the tooltip and the
// SVG export read weights through the same accessors: k.head(l, h) (a map as floats, row by row),
// k.mean(l), k.weight(l, h, q, j) and mapMax.

const MAX_LABEL = 14;  // characters of a token on an axis; the tooltip shows all of it
const LEVELS = 255;  // q8: a code is 0..255 of its row's largest weight
const KEPT_MAPS = 8;  // decoded maps a q8 kind keeps (4 MB each at 1,024 tokens)
// cells past which a map is "big": its image is kept only among the last few (heatmap.js), its
// thumbnail is drawn from the map shrunk to blocks (grid.js)
export const BIG_MAP = 65536;

export function decode(data) {
  let header, bytes;
  if (data instanceof ArrayBuffer) data = new Uint8Array(data);
  if (data instanceof Uint8Array) {  // AEX1, uint32 header length, header JSON, the weights blob
    if (String.fromCharCode(data[0], data[1], data[2], data[3]) !== "AEX1") throw new Error("attention explorer: unknown data");
    const n = (data[4] | (data[5] << 8) | (data[6] << 16) | (data[7] << 24)) >>> 0;
    header = JSON.parse(new TextDecoder().decode(data.subarray(8, 8 + n)));
    // the floats must start on a 4-byte boundary: a view where they do, else a copy
    bytes = (data.byteOffset + 8 + n) % 4 === 0 ? data.subarray(8 + n) : data.slice(8 + n);
  } else if (data && typeof data.weights_b64 === "string") {
    header = data;
    const bin = atob(data.weights_b64);
    bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  } else {
    throw new Error("attention explorer: no data");
  }
  // little-endian float32, which is every platform a browser runs on; q8 codes are read as bytes from
  // the same buffer (prepareKind)
  return { header, weights: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2) };
}

// One kind of attention: its header entry, its mask, each head's map (head(l, h)), one weight
// (weight(l, h, q, j)) and the mean of a layer's heads (mean(l), computed once).
export function prepareKind(meta, weights) {
  const nq = meta.queries.length, nk = meta.keys.length, size = nq * nk, maps = meta.layers * meta.heads;
  const mask = new Uint8Array(size);
  let masked = 0;
  for (let i = 0; i < size; i++) {
    mask[i] = meta.mask.charCodeAt(i) === 49;
    masked += !mask[i];
  }
  const sameTokens = !meta.cross && nq === nk && meta.queries.every((t, i) => t === meta.keys[i]);
  const { rows: scaleRows, trivial: trivialRows } = scaleRowsOf(mask, nq, nk);
  const k = {
    ...meta, nq, nk, size, mask, masked, sameTokens, scaleRows, trivialRows, means: new Map(), blockMasks: new Map(),
    quantised: meta.encoding === "q8",
    shortQ: meta.queries.map(shorten), shortK: meta.keys.map(shorten),
    // a group of query heads that share one key/value head (grouped-query attention), else 1
    group: meta.kv_heads > 0 && meta.heads % meta.kv_heads === 0 ? meta.heads / meta.kv_heads : 1,
    mean(l) {
      let m = this.means.get(l);
      if (!m) {
        m = new Float32Array(size);
        for (let h = 0; h < this.heads; h++) this.addHead(m, l, h);
        for (let i = 0; i < size; i++) m[i] /= this.heads;
        this.means.set(l, m);
      }
      return m;
    },
  };
  Object.assign(k, k.quantised ? q8Maps(k, meta, weights, maps) : f4Maps(k, meta, weights, maps));
  k.weightless = !k.quantised && weightless(k.w, mask, maps);
  return k;
}

// Whether a kind came without its weights: every weight the model may attend to is NaN (not sent; a
// classroom question before its reveal sends its row so). Its cells are drawn alike (theme.js) and no
// number is written anywhere: the legend says so, the tooltip and the status line name the cell only.
// A run with weights answers at its first visible cell. float32 only: q8 has no NaN.
function weightless(w, mask, maps) {
  const size = mask.length;
  for (let m = 0; m < maps; m++) for (let i = 0; i < size; i++) if (mask[i] && !Number.isNaN(w[m * size + i])) return false;
  return true;
}

// float32 maps: one array for the kind, a head is a view into it
function f4Maps(k, meta, weights, maps) {
  const size = k.size;
  const w = meta.packed ? unpack(weights, meta.offset, maps, k.mask) : weights.subarray(meta.offset, meta.offset + maps * size);
  return {
    w,
    head(l, h) { const o = (l * this.heads + h) * size; return w.subarray(o, o + size); },
    weight(l, h, q, j) { return w[(l * this.heads + h) * size + q * this.nk + j]; },
    addHead(acc, l, h) { const hw = this.head(l, h); for (let i = 0; i < size; i++) acc[i] += hw[i]; },
    blockMax(l, h, by) {
      const hw = this.head(l, h);
      return blocks(this, by, (fn) => { for (let i = 0; i < size; i++) fn(i, hw[i]); });
    },
  };
}

// q8 maps: the bits, codes and row scales stay as sent (payload.py's sparse_codes: a bit a visible cell,
// set where its code is not 0, then those codes); a map is decoded on demand, the last KEPT_MAPS kept
function q8Maps(k, meta, weights, maps) {
  const { nq, nk, size, mask } = k, bytes = new Uint8Array(weights.buffer, weights.byteOffset, weights.byteLength);
  const count = meta.packed ? size - k.masked : size;  // codes a map has
  const bits = bytes.subarray(meta.bits, meta.bits + ((maps * count + 7) >> 3));
  const starts = meta.starts, nonzero = bytes.subarray(meta.nonzero, meta.nonzero + starts[maps]);
  const scales = weights.subarray(meta.scales, meta.scales + maps * nq);
  const cellAt = new Int32Array(count);  // the map cell of each code, row by row
  for (let i = 0, c = 0; i < size; i++) if (mask[i] || !meta.packed) cellAt[c++] = i;
  const kept = new Map();  // map number -> decoded floats, oldest first
  // every non-zero code of map m as (cell, weight): a zero byte of bits skips eight codes at once
  const each = (m, fn) => {
    const base = m * count, s0 = m * nq;
    let src = starts[m];
    for (let c = 0; c < count;) {
      const bit = base + c, byte = bits[bit >> 3];
      if (byte === 0 && (bit & 7) === 0 && c + 8 <= count) { c += 8; continue; }
      if ((byte >> (bit & 7)) & 1) {
        const cell = cellAt[c];
        fn(cell, (nonzero[src++] * scales[s0 + ((cell / nk) | 0)]) / LEVELS);
      }
      c++;
    }
  };
  return {
    scales,
    head(l, h) {
      const m = l * this.heads + h;
      let out = kept.get(m);
      if (out) { kept.delete(m); kept.set(m, out); return out; }  // now the newest
      out = new Float32Array(size);
      each(m, (i, v) => { out[i] = v; });
      let top = 0;  // a map's largest weight is the largest of its rows' (each row's is exact)
      for (let q = 0; q < nq; q++) if (!k.scaleRows || k.scaleRows[q]) top = Math.max(top, scales[m * nq + q]);
      maxes.set(out, top || 1);
      if (kept.size >= KEPT_MAPS) kept.delete(kept.keys().next().value);
      kept.set(m, out);
      return out;
    },
    weight(l, h, q, j) { return this.head(l, h)[q * nk + j]; },
    addHead(acc, l, h) { each(l * this.heads + h, (i, v) => { acc[i] += v; }); },
    // zeros never raise a block's largest: only the non-zero codes are visited
    blockMax(l, h, by) { return blocks(this, by, (fn) => each(l * this.heads + h, fn)); },
  };
}

// A map shrunk to blocks of by × by cells, each the largest weight in it (so a sharp peak stays
// visible in a thumbnail), with the kind's mask shrunk the same way (a block is visible when any of
// its cells is): {nq, nk, size, mask, values, name}, shaped like a kind for theme.js's mapImage.
// visit(fn) calls fn(cell, weight) for every cell that may hold a weight above 0.
function blocks(k, by, visit) {
  const R = Math.ceil(k.nq / by), C = Math.ceil(k.nk / by), values = new Float32Array(R * C);
  let mask = k.blockMasks.get(by);
  if (!mask) {
    mask = new Uint8Array(R * C);
    for (let q = 0; q < k.nq; q++) for (let j = 0; j < k.nk; j++) if (k.mask[q * k.nk + j]) mask[((q / by) | 0) * C + ((j / by) | 0)] = 1;
    k.blockMasks.set(by, mask);
  }
  const nk = k.nk;
  visit((i, v) => {
    const t = ((((i / nk) | 0) / by) | 0) * C + (((i % nk) / by) | 0);
    if (v > values[t]) values[t] = v;
  });
  return { name: k.name, nq: R, nk: C, size: R * C, mask, values };
}

// A packed kind sends each head's unmasked cells only, row by row; the masked cells are 0.
function unpack(weights, offset, maps, mask) {
  const size = mask.length, out = new Float32Array(maps * size);
  for (let m = 0, src = offset; m < maps; m++) {
    const base = m * size;
    for (let i = 0; i < size; i++) if (mask[i]) out[base + i] = weights[src++];
  }
  return out;
}

function shorten(label) {
  const chars = Array.from(label);
  return chars.length > MAX_LABEL ? chars.slice(0, MAX_LABEL - 1).join("") + "…" : label;
}

const maxes = new WeakMap();  // a decoded q8 map -> its largest weight, known without a pass over it
const topCells = new WeakMap();  // a kind's mask -> the cells its colour scale's top is read from

// A row with one key to attend to (a causal map's first row: a token can only see itself) always holds
// 1; as the colour scale's top it would wash every other cell out. The rows that count toward the top
// (null: all of them) and how many are left out; the mask's cells of the counted rows are registered for
// mapMax. A map whose every row has one key keeps them all.
export function scaleRowsOf(mask, nq, nk) {
  const rows = new Uint8Array(nq);
  let trivial = 0;
  for (let q = 0; q < nq; q++) {
    let n = 0;
    for (let j = 0; j < nk && n < 2; j++) n += mask[q * nk + j];
    rows[q] = n > 1 ? 1 : 0;
    trivial += n === 1 ? 1 : 0;
  }
  if (!trivial || trivial === nq) return { rows: null, trivial: 0 };
  const cells = new Uint8Array(mask.length);
  for (let i = 0; i < mask.length; i++) cells[i] = mask[i] && rows[(i / nk) | 0];
  topCells.set(mask, cells);
  return { rows, trivial };
}

// The largest weight of a map among the cells the model may attend to, rows with one such cell left out
// (scaleRowsOf); 1 when all are 0. A cell above it (in a row left out) is drawn in the top colour.
export function mapMax(values, mask) {
  const known = maxes.get(values);
  if (known !== undefined) return known;
  const cells = topCells.get(mask) || mask;
  let m = 0;
  for (let i = 0; i < values.length; i++) if (cells[i] && values[i] > m) m = values[i];
  return m || 1;
}

// The keys of one row that carry `mass` of its weight, largest first, at most `most` of them and none
// under `floor`, and the weight of the rest: {keys: [j...], weights: [w...], rest, more} (more: how many
// visible keys are not kept). The lines view and a long run's token strip show these (a 1,024-token row
// has 1,024 weights, most too small to see); kept + rest is the row's whole weight.
export function topKeys(row, mask, offset, mass, most, floor = 0) {
  const order = [];
  let total = 0;
  for (let j = 0; j < row.length; j++) {
    if (!mask[offset + j] || !(row[j] > 0)) continue;
    total += row[j];
    if (row[j] >= floor) order.push(j);
  }
  order.sort((a, b) => row[b] - row[a]);
  const keys = [], weights = [];
  let kept = 0, seen = 0;
  for (let j = 0; j < row.length; j++) seen += mask[offset + j] ? 1 : 0;
  for (const j of order) {
    if (keys.length >= most || kept >= mass * total) break;
    keys.push(j);
    weights.push(row[j]);
    kept += row[j];
  }
  return { keys, weights, rest: total - kept, more: seen - keys.length };
}
