// The heatmap view, and mapView, which makes a view of one map drawn as a heatmap (mean.js and
// rollout.js are two more): queries as rows and keys as columns, masked cells hatched. Over it, the
// hovered cell's row and column and the selection. On a touch screen whose cells are smaller than a
// finger can pick (TAP_LEAST), a tap zooms: the map shows the part around the tap at TAP_CELL a cell,
// the next tap picks a cell there, and a button shows the whole map again. What a view is and does:
// view.js.

import { BIG_MAP, mapMax } from "./data.js";
import { el, sizeCanvas } from "./dom.js";
import { MAX_SVG_CELLS, cellsSvg, imageSvg } from "./svgdoc.js";
import { svgNode, svgToken } from "./svgnodes.js";
import { fitText, font, labelWidths, mapImage, rgba } from "./theme.js";
import { ALL, defineView, marked, outsideWindow, ownState } from "./view.js";

const LONG = 240;  // tokens past which a cell may be one pixel (at 1,024 tokens the map is 1,024 px wide)
// WCAG 2.5.8: a target at least 24 px. A touch screen's cells smaller than that zoom on a tap to TAP_CELL
// (a margin over the least), the zoomed part ZOOM_ROWS rows tall at most.
const TAP_LEAST = 24, TAP_CELL = 28, ZOOM_ROWS = 12;
const KEPT_IMAGES = 6;
const KEPT_PATHS = 8;
const bigImages = ownState(() => new Map());  // a long run's last few map images (bigImage)
const hatchPaths = new WeakMap();  // a kind -> its last few paths of hidden cells (hatchPath)

// A view of one map as a heatmap: `spec` says at least its key, its map (map(ex, head)) and mapKey(s),
// the map's name among the colour-mapped images
export function mapView(spec) {
  return defineView({
    pane: "heat", draw: drawHeat, overlay: overlayHeat, hit: hitHeat, svg: heatSvg,
    depends: (ex) => `${ex.state.layer}|${ex.state.head}|${zoomKey(ex)}`,
    zoom: zoomAt, build: buildZoom, chrome: drawZoom, fresh: unzoom, moved: movedZoom, ...spec,
  });
}

export const heatmapView = mapView({ key: "heatmap", mapKey: (s) => `h${s.layer}.${s.head}` });

// Where the map goes: the label margins x0, y0, the cell size c, and the part of the map shown (rows q0 on,
// `rows` of them; columns j0 on, `cols`): the whole map, or the zoomed part around a tap (zoomOwn)
function heatGeometry(ex) {
  const k = ex.kind, sc = ex.theme.s, lw = labelWidths(ex, k);
  const x0 = Math.ceil(Math.min(lw.q + 10, 200 * sc)), y0 = Math.ceil(Math.min(lw.k + 10, 200 * sc));
  const avail = Math.max(60, ex.width - x0 - 12), least = Math.max(k.nq, k.nk) > LONG ? 1 : 3;
  const c = Math.max(least, Math.min(Math.floor(36 * sc), Math.floor(avail / k.nk), Math.floor((720 * sc) / k.nq)));
  const at = zoomOwn(ex).at;
  if (!at || at.kind !== k.name || c >= TAP_LEAST) return { x0, y0, c, q0: 0, j0: 0, rows: k.nq, cols: k.nk };
  const cols = Math.min(k.nk, Math.max(1, Math.floor(avail / TAP_CELL))), rows = Math.min(k.nq, Math.max(cols, ZOOM_ROWS));
  const from = (i, n, shown) => Math.min(Math.max(0, i - Math.floor(shown / 2)), n - shown);  // the tap in the middle
  return { x0, y0, c: TAP_CELL, q0: from(at.q, k.nq, rows), j0: from(at.k, k.nk, cols), rows, cols, zoomed: true };
}

function drawHeat(ex) {
  const k = ex.kind, s = ex.state, { fs } = ex.theme;
  const v = ex.view, key = v.mapKey(s), values = v.map(ex);
  const img = k.size > BIG_MAP ? bigImage(ex, k, key, values) : mapImage(ex, k, key, values);
  const g = heatGeometry(ex), { x0, y0, c, q0, j0, rows, cols } = g;
  const W = x0 + cols * c + 12, H = y0 + rows * c + 12;
  const ctx = sizeCanvas(ex.base, W, H);
  sizeCanvas(ex.over, W, H);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(img, j0, q0, cols, rows, x0, y0, cols * c, rows * c);  // one image pixel a cell
  const layer = v.cellLayer(s);
  if (k.masked || windowed(k, layer)) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(x0, y0, cols * c, rows * c);
    ctx.clip();
    ctx.translate(-j0 * c, -q0 * c);  // the whole map's path, moved so the shown part lies in place
    ctx.fillStyle = ctx.createPattern(ex.hatch, "repeat");
    ctx.fill(hatchPath(k, layer, x0, y0, c));
    ctx.restore();
  }
  const stride = c < fs + 2 ? Math.ceil((fs + 2) / c) : 1;
  ctx.font = font(ex.theme);
  ctx.textBaseline = "middle";
  ctx.textAlign = "right";
  for (let q = q0; q < q0 + rows; q += stride) {
    ctx.fillStyle = ex.theme.text;
    ctx.fillText(fitText(ctx, k.shortQ[q], x0 - 7), x0 - 5, y0 + (q - q0) * c + c / 2);  // cut only past 200 px
  }
  ctx.save();
  ctx.rotate(-Math.PI / 2);  // key labels read upwards; x' = -y, y' = x
  ctx.textAlign = "left";
  for (let j = j0; j < j0 + cols; j += stride) {
    ctx.fillStyle = k.special[j] ? rgba(ex.theme.textRgb, 0.55) : ex.theme.text;
    ctx.fillText(fitText(ctx, k.shortK[j], y0 - 7), -(y0 - 5), x0 + (j - j0) * c + c / 2);
  }
  ctx.restore();
  return { type: "heat", x0, y0, c, W, H, stride, q0, j0, rows, cols, zoomed: !!g.zoomed };
}

function overlayHeat(ex, ctx, lay) {
  const s = ex.state, { c } = lay, tint = rgba(ex.theme.primaryRgb, 0.3), { rows, cols } = marked(ex);
  const x0 = lay.x0 - (lay.j0 || 0) * c, y0 = lay.y0 - (lay.q0 || 0) * c;  // where cell (0, 0) is (off the map when zoomed)
  const w = (lay.cols ?? ex.kind.nk) * c, h = (lay.rows ?? ex.kind.nq) * c;
  ctx.lineWidth = 1;
  ctx.strokeStyle = rgba(ex.theme.textRgb, 0.85);
  for (const q of rows) {
    ctx.fillStyle = tint;
    ctx.fillRect(0, y0 + q * c, lay.x0 - 2, c);
    ctx.strokeRect(lay.x0 + 0.5, y0 + q * c + 0.5, w - 1, c - 1);
  }
  for (const j of cols) {
    ctx.fillStyle = tint;
    ctx.fillRect(x0 + j * c, 0, c, lay.y0 - 2);
    ctx.strokeRect(x0 + j * c + 0.5, lay.y0 + 0.5, c - 1, h - 1);
  }
  const box = (cell, colour, width, dash) => {
    ctx.setLineDash(dash);
    ctx.lineWidth = width;
    ctx.strokeStyle = colour;
    ctx.strokeRect(x0 + cell.k * c - 0.5, y0 + cell.q * c - 0.5, c + 1, c + 1);
    ctx.setLineDash([]);
  };
  if (s.sel) { box(s.sel, ex.theme.bg, 4, []); box(s.sel, ex.theme.primary, 2, [4, 2]); }
  if (s.hover) { box(s.hover, ex.theme.bg, 3, []); box(s.hover, ex.theme.text, 1.5, []); }
}

// a cell, or a token when the point is on an axis's labels
function hitHeat(ex, x, y, lay) {
  const q0 = lay.q0 || 0, j0 = lay.j0 || 0, q = q0 + Math.floor((y - lay.y0) / lay.c), j = j0 + Math.floor((x - lay.x0) / lay.c);
  const inQ = q >= q0 && q < q0 + (lay.rows ?? ex.kind.nq), inK = j >= j0 && j < j0 + (lay.cols ?? ex.kind.nk);
  if (inQ && inK) return { cell: { q, k: j } };
  if (inQ && x < lay.x0) return { token: { side: "q", i: q } };
  if (inK && y < lay.y0) return { token: { side: "k", i: j } };
  return {};
}

// The zoom, one for the map views of an explorer: the tapped cell of which kind (null: the whole map), and
// the button that shows the whole map again
const zoomOwn = ownState(() => ({ at: null, button: null }));

function zoomKey(ex) {
  const at = zoomOwn(ex).at;
  return at ? `${at.kind}:${at.q}:${at.k}` : "";
}

// a tap on a cell (view.js: zoom): where the cells are too small for a finger, the map zooms around it and
// the tap picks nothing (true); else the tap is a pick (false)
function zoomAt(ex, cell) {
  const o = zoomOwn(ex), lay = ex.layout;
  if (!ex.touch || !lay || lay.c >= TAP_LEAST || lay.zoomed) return false;
  o.at = { kind: ex.kind.name, q: cell.q, k: cell.k };
  ex.state.hover = null;
  ex.changed(ALL);
  return true;
}

function unzoom(ex) { zoomOwn(ex).at = null; }

function movedZoom(ex, before) { if (before.kind !== ex.state.kind) unzoom(ex); }

// the "whole map" button over the map, built once for all the map views
function buildZoom(ex) {
  const o = zoomOwn(ex);
  if (o.button) return {};
  const b = (o.button = el(ex.doc, "button", "ae-btn ae-unzoom", "Show the whole map"));
  b.type = "button";
  b.hidden = true;
  b.addEventListener("click", () => { unzoom(ex); ex.changed(ALL); });
  return { above: b };
}

// the button shows while a map view is zoomed; on a touch screen with cells too small to tap, the help says a
// first tap zooms
function drawZoom(ex, shownView) {
  const o = zoomOwn(ex), k = ex.kind;
  o.button.hidden = !(ex.view.pane === "heat" && o.at && o.at.kind === k.name);
  if (!shownView) return;
  const g = heatGeometry(ex);
  if (ex.touch && !ex.header.compact && g.c < TAP_LEAST) ex.statusHelp.textContent = "Tap the map to zoom in, then tap a weight to explain it";
}

function windowed(k, layer) {
  return !!(k.window && k.window.layers.includes(layer));
}

// The hidden cells as one path, a rectangle per run of them in a row. Every head of a layer hides the
// same cells (the kind's mask, the layer's window), so a head switch reuses the path: at 1,024 tokens
// building it visits a million cells. Kept per kind, window and geometry, the last KEPT_PATHS.
function hatchPath(k, layer, x0, y0, c) {
  const win = windowed(k, layer), id = `${win ? layer : "all"}|${x0}|${y0}|${c}`;
  let kept = hatchPaths.get(k);
  if (!kept) hatchPaths.set(k, (kept = new Map()));
  let path = kept.get(id);
  if (path) return path;
  path = new Path2D();
  const hidden = (q, j) => !k.mask[q * k.nk + j] || (win && outsideWindow(k, layer, q, j));
  for (let q = 0; q < k.nq; q++) {
    for (let j = 0; j < k.nk; j++) {
      if (!hidden(q, j)) continue;
      let e = j;
      while (e + 1 < k.nk && hidden(q, e + 1)) e++;
      path.rect(x0 + j * c, y0 + q * c, (e - j + 1) * c, c);
      j = e;
    }
  }
  if (kept.size >= KEPT_PATHS) kept.delete(kept.keys().next().value);
  kept.set(id, path);
  return path;
}

// A long run's map as an image, one pixel per cell: like theme.js's mapImage, but only the last
// KEPT_IMAGES are kept (a 1,024-token map is a 4 MB image; theme.js keeps hundreds of small ones).
function bigImage(ex, k, key, values) {
  const id = `${ex.header.digest}|${k.name}|${key}|${ex.state.scale}`, kept = bigImages(ex);
  let c = kept.get(id);
  if (c && c.theme === ex.theme && c.colours === ex.colours) { kept.delete(id); kept.set(id, c); return c; }
  kept.delete(id);
  if (kept.size >= KEPT_IMAGES) {  // reuse the oldest image's canvas
    const oldest = kept.keys().next().value;
    c = kept.get(oldest);
    kept.delete(oldest);
  } else c = el(ex.doc, "canvas");
  c.width = k.nk;
  c.height = k.nq;
  const ctx = c.getContext("2d"), img = ctx.createImageData(k.nk, k.nq), px = new Uint32Array(img.data.buffer);
  const lut = ex.colours, [r, g, b] = ex.theme.maskedRgb, grey = (255 << 24) | (b << 16) | (g << 8) | r;
  const table = new Uint32Array(256);  // the colour scale as little-endian RGBA words: one store per pixel
  for (let i = 0; i < 256; i++) table[i] = (255 << 24) | (lut[i * 3 + 2] << 16) | (lut[i * 3 + 1] << 8) | lut[i * 3];
  const inv = 255 / (ex.state.scale === "max" ? mapMax(values, k.mask) : 1), mask = k.mask;
  for (let i = 0; i < k.size; i++) {
    const v = values[i] * inv + 0.5;
    px[i] = mask[i] ? table[v >= 255 ? 255 : v | 0] : grey;
  }
  ctx.putImageData(img, 0, 0);
  c.colours = ex.colours;
  c.theme = ex.theme;
  kept.set(id, c);
  return c;
}

// one <rect> per cell (or the screen's image of the map), the query labels on the left and the key
// labels reading upwards above, as drawHeat draws them; masked cells hatched
function heatSvg(ex, g, lay) {
  const d = ex.doc, k = ex.kind, { x0, y0, c } = lay, stride = lay.stride || 1, th = ex.theme;
  const q0 = lay.q0 || 0, j0 = lay.j0 || 0, nq = lay.rows ?? k.nq, nk = lay.cols ?? k.nk, key = ex.view.mapKey(ex.state);
  if (!lay.zoomed) g.append(cellsSvg(ex, ex.view.map(ex), key, { x: x0, y: y0, w: nk * c, h: nq * c, hatch: true }));
  else if (k.size > MAX_SVG_CELLS) g.append(imageSvg(ex, key, { x: x0, y: y0, w: nk * c, h: nq * c }));  // the screen's pixels
  else {  // zoomed: the whole map's cells, placed as the screen has them and clipped to the part shown
    const clip = svgNode(d, "clipPath", { id: "ae-zoomed" });
    clip.append(svgNode(d, "rect", { x: x0, y: y0, width: nk * c, height: nq * c }));
    const cells = svgNode(d, "g", { "clip-path": "url(#ae-zoomed)" });
    cells.append(cellsSvg(ex, ex.view.map(ex), key, { x: x0 - j0 * c, y: y0 - q0 * c, w: k.nk * c, h: k.nq * c, hatch: true }));
    g.append(clip, cells);
  }
  const rows = svgNode(d, "g", { "text-anchor": "end", "data-axis": "query" });
  for (let q = q0; q < q0 + nq; q += stride) rows.append(svgToken(d, k.shortQ[q], k.queries[q], x0 - 5, y0 + (q - q0) * c + c / 2));
  const cols = svgNode(d, "g", { "text-anchor": "start", "data-axis": "key" });
  for (let j = j0; j < j0 + nk; j += stride) {
    const t = svgToken(d, k.shortK[j], k.keys[j], 0, 0);
    t.setAttribute("transform", `translate(${x0 + (j - j0) * c + c / 2},${y0 - 5}) rotate(-90)`);
    if (k.special[j]) t.setAttribute("fill", rgba(th.textRgb, 0.55));
    cols.append(t);
  }
  g.append(rows, cols);
}
