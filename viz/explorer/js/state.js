// The view state (ex.state): the kind, view, layer and head shown, the hovered and selected cells, the
// focused token, the peeked grid head, the heads shown as lines, the colour scale. Everything here reads
// the explorer `ex` (its run: ex.kinds, ex.byName, ex.rollout) and changes nothing but ex.state. The
// root's data-state attribute is stateJson(ex), which the tests and benchmarks read.

export const VIEWS = ["heatmap", "lines", "grid", "mean", "rollout"];
// what a change makes the next frame redraw: the view's map, the hover marks over it, the chrome
export const BASE = 1, OVER = 2, CHROME = 4, ALL = 7;

// `s` (kind, view, layer, head; any of them missing or out of range) as the nearest view this run has
export function clampView(ex, s) {
  const kind = ex.byName.has(s.kind) ? s.kind : ex.kinds[0].name, k = ex.byName.get(kind);
  let view = VIEWS.includes(s.view) ? s.view : "heatmap";
  if (view === "rollout" && !(ex.rollout && ex.rollout.kind === kind)) view = ex.rollout ? "mean" : "heatmap";
  return { kind, view, layer: clampInt(s.layer, k.layers), head: clampInt(s.head, k.heads) };
}

function clampInt(raw, n) {
  const v = parseInt(raw, 10);
  return Number.isFinite(v) ? Math.min(Math.max(v, 0), n - 1) : 0;
}

// the state a new run starts in: `wanted`'s view clamped, nothing hovered or selected, `prev`'s colour scale
export function freshState(ex, wanted, prev) {
  return {
    ...clampView(ex, wanted), hover: null, sel: null, token: null, peek: null, clicked: null,
    scale: prev ? prev.scale : "max", shown: new Map(), note: "",
  };
}

// switching kind, layer, head or view: the selection survives within a kind, the hover never
export function moveTo(ex, change) {
  const s = ex.state, next = clampView(ex, { ...s, ...change });
  if (next.kind !== s.kind) { s.sel = null; s.token = null; }
  const oldHead = s.head;
  Object.assign(s, next, { hover: null, peek: null });
  const shown = s.shown.get(s.kind);
  if (shown && shown.size === 1 && shown.has(oldHead)) s.shown.set(s.kind, new Set([s.head]));
  if (s.sel) s.sel.head = undefined;
}

// the heads the lines view draws for the shown kind (at first the current head)
export function shownHeads(ex) {
  const k = ex.kind, s = ex.state;
  let set = s.shown.get(k.name);
  if (!set) s.shown.set(k.name, (set = new Set([s.head])));
  return [...set].filter((h) => h < k.heads).sort((a, b) => a - b);
}

// the map a cell is read from: one head, the mean of the layer's heads, or the rollout
export function mapOf(ex, head) {
  const { view, layer } = ex.state, k = ex.kind;
  if (view === "mean") return k.mean(layer);
  if (view === "rollout") return ex.rollout.values;
  return k.head(layer, head ?? ex.state.head);
}

// a cell {q, k, head?} as the tests, the tooltip and Python read it
export function cellInfo(ex, c) {
  if (!c) return null;
  const k = ex.kind, i = c.q * k.nk + c.k, { view } = ex.state;
  const head = view === "mean" || view === "rollout" ? null : (c.head ?? ex.state.head);
  const weight = head === null ? mapOf(ex)[i] : k.weight(ex.state.layer, head, c.q, c.k);
  // approx: the weight came as one byte (q8, within a fifth of a percent of its row's largest)
  return {
    query: c.q, key: c.k, query_token: k.queries[c.q], key_token: k.keys[c.k],
    weight, masked: view === "rollout" ? !k.mask[i] : hiddenAt(k, ex.state.layer, c.q, c.k), head,
    approx: k.quantised && view !== "rollout",
  };
}

// The weight of cell (q, j) of head `head` in layer `layer` of kind `kind` (a name), as every view
// shows it: what an export or a test reads without knowing how the data came (f4 or q8).
export function weightAt(ex, kind, layer, head, q, j) {
  return ex.byName.get(kind).weight(layer, head, q, j);
}

// Whether the cell (q, j) of layer `layer` is hidden: by the kind's mask (causal, padding), or because
// the layer attends within a sliding window (Mistral, Gemma 2's local layers) that leaves key j out.
export function hiddenAt(k, layer, q, j) {
  return !k.mask[q * k.nk + j] || outsideWindow(k, layer, q, j);
}

export function outsideWindow(k, layer, q, j) {
  const w = k.window;
  return !!w && w.layers.includes(layer) && q - j >= w.size;
}

// the rows and columns to mark: the hovered cell's and the focused token's, on both axes of self-attention
export function marked(ex) {
  const s = ex.state, k = ex.kind, rows = new Set(), cols = new Set(), t = s.token;
  if (s.hover) { rows.add(s.hover.q); cols.add(s.hover.k); }
  if (t) {
    (t.side === "q" ? rows : cols).add(t.i);
    if (k.sameTokens) (t.side === "q" ? cols : rows).add(t.i);
  }
  return { rows, cols };
}

export function stateJson(ex) {
  const s = ex.state, t = s.token, k = ex.kind;
  return JSON.stringify({
    view: s.view, kind: s.kind, layer: s.layer, head: s.head, scale: s.scale,
    hovered: cellInfo(ex, s.hover), selected: cellInfo(ex, s.sel),
    token: t ? { side: t.side === "q" ? "query" : "key", index: t.i, text: (t.side === "q" ? k.queries : k.keys)[t.i] } : null,
    peek: s.peek, heads_shown: s.view === "lines" ? shownHeads(ex) : [s.head],
    clicked: s.clicked, digest: ex.header.digest, queries: k.nq, keys: k.nk,
    encoding: k.quantised ? "q8" : "f4", kv_heads: k.kv_heads || k.heads,
  });
}
