// The view state (ex.state): the kind, view, layer and head shown, the hovered and selected cells, the
// focused token, the clicked cell, the colour scale, whether a press took the tooltip away (tipOff). What
// a view keeps of its own (the heads shown as lines, the peeked grid head) lives in its module; the
// functions here ask the shown view (views.js) what it reads and how. Everything here reads the explorer
// `ex` (its run: ex.kinds, ex.byName, ex.rollout) and changes nothing but ex.state and the views' own
// state. The root's data-state attribute is stateJson(ex), which the tests and benchmarks read.

import { VIEWS, viewFor } from "./views.js";
import { hiddenAt } from "./view.js";

// `s` (kind, view, layer, head; any of them missing or out of range) as the nearest view this run has
export function clampView(ex, s) {
  const kind = ex.byName.has(s.kind) ? s.kind : ex.kinds[0].name, k = ex.byName.get(kind);
  const view = viewFor(ex, s.view, kind).key;
  return { kind, view, layer: clampInt(s.layer, k.layers), head: clampInt(s.head, k.heads) };
}

function clampInt(raw, n) {
  const v = parseInt(raw, 10);
  return Number.isFinite(v) ? Math.min(Math.max(v, 0), n - 1) : 0;
}

// the state a new run starts in: `wanted`'s view clamped, nothing hovered or selected, `prev`'s colour scale
// (a first mount: header.scale, "abs" for 0 – 1 where maps of different runs are compared, else "max")
export function freshState(ex, wanted, prev) {
  for (const v of VIEWS) if (v.fresh) v.fresh(ex);
  return {
    ...clampView(ex, wanted), hover: null, sel: null, token: null, clicked: null, tipOff: false,
    scale: prev ? prev.scale : ex.header.scale === "abs" ? "abs" : "max", note: "",
  };
}

// switching kind, layer, head or view: the selection survives within a kind, the hover never
export function moveTo(ex, change) {
  const s = ex.state, next = clampView(ex, { ...s, ...change });
  if (next.kind !== s.kind) { s.sel = null; s.token = null; }
  const before = { kind: s.kind, view: s.view, layer: s.layer, head: s.head };
  Object.assign(s, next, { hover: null });
  for (const v of VIEWS) if (v.moved) v.moved(ex, before);
  if (s.sel) s.sel.head = undefined;
}

// the map a cell is read from: one head, the mean of the layer's heads, or the rollout
export function mapOf(ex, head) {
  return ex.view.map(ex, head);
}

// a cell {q, k, head?} as the tests, the tooltip and Python read it
export function cellInfo(ex, c) {
  if (!c) return null;
  const k = ex.kind, i = c.q * k.nk + c.k, v = ex.view, head = v.cellHead(ex, c);
  const weight = head === null ? v.map(ex)[i] : k.weight(ex.state.layer, head, c.q, c.k);
  // approx: the weight came as one byte (q8, within a fifth of a percent of its row's largest)
  return {
    query: c.q, key: c.k, query_token: k.queries[c.q], key_token: k.keys[c.k],
    weight, masked: hiddenAt(k, v.cellLayer(ex.state), c.q, c.k), head, approx: v.approx(k),
  };
}

// The weight of cell (q, j) of head `head` in layer `layer` of kind `kind` (a name), as every view
// shows it: what an export or a test reads without knowing how the data came (f4 or q8).
export function weightAt(ex, kind, layer, head, q, j) {
  return ex.byName.get(kind).weight(layer, head, q, j);
}

export function stateJson(ex) {
  const s = ex.state, t = s.token, k = ex.kind;
  return JSON.stringify({
    view: s.view, kind: s.kind, layer: s.layer, head: s.head, scale: s.scale,
    hovered: cellInfo(ex, s.hover), selected: cellInfo(ex, s.sel),
    token: t ? { side: t.side === "q" ? "query" : "key", index: t.i, text: (t.side === "q" ? k.queries : k.keys)[t.i] } : null,
    peek: ex.view.peeked(ex), heads_shown: ex.view.headsShown(ex),
    clicked: s.clicked, digest: ex.header.digest, queries: k.nq, keys: k.nk,
    encoding: k.quantised ? "q8" : "f4", kv_heads: k.kv_heads || k.heads,
  });
}
