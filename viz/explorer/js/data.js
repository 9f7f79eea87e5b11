// The data: the packed payload from Streamlit (or the exported file's JSON with base64 weights) decoded
// into each kind's maps, ready to draw. viz/explorer/payload.py writes what this reads.

const MAX_LABEL = 14;  // characters of a token on an axis; the tooltip shows all of it

export function decode(data) {
  let header, bytes;
  if (data instanceof ArrayBuffer) data = new Uint8Array(data);
  if (data instanceof Uint8Array) {  // AEX1, uint32 header length, header JSON, float32 weights
    if (String.fromCharCode(data[0], data[1], data[2], data[3]) !== "AEX1") throw new Error("attention explorer: unknown data");
    const n = (data[4] | (data[5] << 8) | (data[6] << 16) | (data[7] << 24)) >>> 0;
    header = JSON.parse(new TextDecoder().decode(data.subarray(8, 8 + n)));
    bytes = data.slice(8 + n);  // a copy, so the floats start on a 4-byte boundary
  } else if (data && typeof data.weights_b64 === "string") {
    header = data;
    const bin = atob(data.weights_b64);
    bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  } else {
    throw new Error("attention explorer: no data");
  }
  // little-endian float32, which is every platform a browser runs on
  return { header, weights: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2) };
}

// One kind of attention: its header entry, its mask, each head's map (head(l, h)) and the mean of a
// layer's heads (mean(l), computed once).
export function prepareKind(meta, weights) {
  const nq = meta.queries.length, nk = meta.keys.length, size = nq * nk, maps = meta.layers * meta.heads;
  const mask = new Uint8Array(size);
  let masked = 0;
  for (let i = 0; i < size; i++) {
    mask[i] = meta.mask.charCodeAt(i) === 49;
    masked += !mask[i];
  }
  const w = meta.packed ? unpack(weights, meta.offset, maps, mask)
    : weights.subarray(meta.offset, meta.offset + maps * size);
  const sameTokens = !meta.cross && nq === nk && meta.queries.every((t, i) => t === meta.keys[i]);
  return {
    ...meta, nq, nk, size, w, mask, masked, sameTokens, means: new Map(),
    shortQ: meta.queries.map(shorten), shortK: meta.keys.map(shorten),
    head(l, h) { const o = (l * this.heads + h) * size; return w.subarray(o, o + size); },
    mean(l) {
      let m = this.means.get(l);
      if (!m) {
        m = new Float32Array(size);
        for (let h = 0; h < this.heads; h++) {
          const hw = this.head(l, h);
          for (let i = 0; i < size; i++) m[i] += hw[i];
        }
        for (let i = 0; i < size; i++) m[i] /= this.heads;
        this.means.set(l, m);
      }
      return m;
    },
  };
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

// The largest weight of a map among the cells the model may attend to (1 when all are 0).
export function mapMax(values, mask) {
  let m = 0;
  for (let i = 0; i < values.length; i++) if (mask[i] && values[i] > m) m = values[i];
  return m || 1;
}
