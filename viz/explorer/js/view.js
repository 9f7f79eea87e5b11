// What every view shares: the redraw flags, the cells a view marks and hides, and defineView, which
// gives a view the behaviour of a view of one head's cells wherever its module says nothing else.
// A view is declared in its own module (heatmap.js, lines.js, grid.js, mean.js, rollout.js) and
// listed once in views.js, the registry; nothing else names a view.

// what a change makes the next frame redraw: the view's map, the hover marks over it, the chrome
export const BASE = 1, OVER = 2, CHROME = 4, ALL = 7;

// A view: its key (the tab, the URL's and data-state's value) and pane (the pair of canvases it draws
// on, also its layout's type; views of one pane share it), then what it overrides of these defaults.
//   listed(ex)            whether the run has a tab for it
//   available(ex, kind)   whether it can show kind `kind` (a name); where it cannot, its tab is
//                         disabled with `unavailable` as the title and `instead` (a view) is shown
//   draw(ex)              paints ex.base and ex.over's size, returns the layout (where the cells are)
//   overlay(ex, ctx, lay) paints the hover marks; hit(ex, x, y, lay): {cell}, {token}, {peek} or {}
//   depends(ex)           what its drawing depends on besides the kind, width, scale and view
//   map(ex, head)         the map a cell is read from; cellHead(ex, c): a cell's head (null: none)
//   cellLayer(s)          the layer a cell belongs to (null: none); approx(k): weights came as bytes
//   where                 the tooltip's words for a cell of no head
//   names(ex)             what the caption says is shown, after the kind's title: the head ("L1 H2 · heatmap"),
//                         or what stands for heads ("mean of all 4 heads, layer 1")
//   axes(k), oneMap, showsMask, headsShown(ex): the chrome's axis names, whether the legend's top is
//                         this map's largest weight, whether the mask note shows, the heads drawn
//   peeked(ex)            the map hovered in a view of maps ({layer, head}; the grid's peek), else null
//   svg(ex, g, lay)       the view as SVG; svgAbove(ex, body, x, y): what goes over it (returns the
//                         map's y); svgName(s): the file name's part after the view's key
//   build(ex)             elements of its own: {above} (over the map), {stage} (beside it)
//   chrome(ex, shown), readout(ex, shown): draw those with the chrome, and each frame (shown: whether
//                         this view is the shown one; every view's are called)
//   fresh(ex), moved(ex, before): its own state for a new run, and after a move (before: the old state)
//   onMove(ex, h), onLeave(ex), onClick(ex, h), onArrow(ex, dq, dk), onEnter(ex): the mouse and keys,
//                         where the view handles them itself (else: hover, select and explain cells;
//                         onLeave returns whether it had something hovered)
//   tokenRedraws          whether a focused token changes its drawing (else only the marks)
//   zoom(ex, cell)        a click or tap on a cell: true where the view zoomed instead of picking it (the
//                         map views on a touch screen whose cells are under 24 px: heatmap.js)
// A head's one name, as every page, figure and table names it (viz.common.head_name): "L3 H2", layer 3,
// head 2, both counted from 0.
export function headName(layer, head) {
  return `L${layer} H${head}`;
}

export function defineView(spec) {
  return { ...CELL_VIEW, ...spec };
}

const CELL_VIEW = {
  listed: () => true,
  available: () => true,
  instead: null,
  unavailable: "",
  depends: (ex) => `${ex.state.layer}|${ex.state.head}`,
  map: (ex, head) => ex.kind.head(ex.state.layer, head ?? ex.state.head),
  cellHead: (ex, c) => c.head ?? ex.state.head,
  cellLayer: (s) => s.layer,
  approx: (k) => k.quantised,
  where: "",
  names: (ex) => `${headName(ex.state.layer, ex.state.head)} · ${ex.view.key}`,
  axes: (k) => `rows: ${k.query_axis} · columns: ${k.key_axis}`,
  oneMap: true,
  showsMask: true,
  headsShown: (ex) => [ex.state.head],
  peeked: () => null,
  svgName: (s) => `-layer${s.layer}-head${s.head}`,
  tokenRedraws: false,
};

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

// state a view keeps for each explorer, in the view's own module: own(ex) makes it (make()) once
export function ownState(make) {
  const kept = new WeakMap();
  return (ex) => {
    let o = kept.get(ex);
    if (!o) kept.set(ex, (o = make(ex)));
    return o;
  };
}
