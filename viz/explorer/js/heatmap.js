// The heatmap view, and mapView, which makes a view of one map drawn as a heatmap (mean.js and
// rollout.js are two more): queries as rows and keys as columns, masked cells hatched. Over it, the
// hovered cell's row and column and the selection. What a view is and does: view.js.

import { BIG_MAP, mapMax } from "./data.js";
import { el, sizeCanvas } from "./dom.js";
import { cellsSvg } from "./svgdoc.js";
import { svgNode, svgToken } from "./svgnodes.js";
import { fitText, font, labelWidths, mapImage, rgba } from "./theme.js";
import { defineView, marked, outsideWindow, ownState } from "./view.js";

const LONG = 240;  // tokens past which a cell may be one pixel (at 1,024 tokens the map is 1,024 px wide)
const KEPT_IMAGES = 6;
const KEPT_PATHS = 8;
const bigImages = ownState(() => new Map());  // a long run's last few map images (bigImage)
const hatchPaths = new WeakMap();  // a kind -> its last few paths of hidden cells (hatchPath)

// A view of one map as a heatmap: `spec` says at least its key, its map (map(ex, head)) and mapKey(s),
// the map's name among the colour-mapped images
export function mapView(spec) {
  return defineView({ pane: "heat", draw: drawHeat, overlay: overlayHeat, hit: hitHeat, svg: heatSvg, ...spec });
}

export const heatmapView = mapView({ key: "heatmap", mapKey: (s) => `h${s.layer}.${s.head}` });

function drawHeat(ex) {
  const k = ex.kind, s = ex.state, { fs } = ex.theme, sc = ex.theme.s, lw = labelWidths(ex, k);
  const v = ex.view, key = v.mapKey(s), values = v.map(ex);
  const img = k.size > BIG_MAP ? bigImage(ex, k, key, values) : mapImage(ex, k, key, values);
  const x0 = Math.ceil(Math.min(lw.q + 10, 200 * sc)), y0 = Math.ceil(Math.min(lw.k + 10, 200 * sc));
  const avail = Math.max(60, ex.width - x0 - 12), least = Math.max(k.nq, k.nk) > LONG ? 1 : 3;
  const c = Math.max(least, Math.min(Math.floor(36 * sc), Math.floor(avail / k.nk), Math.floor((720 * sc) / k.nq)));
  const W = x0 + k.nk * c + 12, H = y0 + k.nq * c + 12;
  const ctx = sizeCanvas(ex.base, W, H);
  sizeCanvas(ex.over, W, H);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(img, x0, y0, k.nk * c, k.nq * c);
  const layer = v.cellLayer(s);
  if (k.masked || windowed(k, layer)) {
    ctx.fillStyle = ctx.createPattern(ex.hatch, "repeat");
    ctx.fill(hatchPath(k, layer, x0, y0, c));
  }
  const stride = c < fs + 2 ? Math.ceil((fs + 2) / c) : 1;
  ctx.font = font(ex.theme);
  ctx.textBaseline = "middle";
  ctx.textAlign = "right";
  for (let q = 0; q < k.nq; q += stride) {
    ctx.fillStyle = ex.theme.text;
    ctx.fillText(fitText(ctx, k.shortQ[q], x0 - 7), x0 - 5, y0 + q * c + c / 2);  // cut only past 200 px
  }
  ctx.save();
  ctx.rotate(-Math.PI / 2);  // key labels read upwards; x' = -y, y' = x
  ctx.textAlign = "left";
  for (let j = 0; j < k.nk; j += stride) {
    ctx.fillStyle = k.special[j] ? rgba(ex.theme.textRgb, 0.55) : ex.theme.text;
    ctx.fillText(fitText(ctx, k.shortK[j], y0 - 7), -(y0 - 5), x0 + j * c + c / 2);
  }
  ctx.restore();
  return { type: "heat", x0, y0, c, W, H, stride };
}

function overlayHeat(ex, ctx, lay) {
  const k = ex.kind, s = ex.state, { x0, y0, c } = lay, tint = rgba(ex.theme.primaryRgb, 0.3);
  const { rows, cols } = marked(ex);
  ctx.lineWidth = 1;
  ctx.strokeStyle = rgba(ex.theme.textRgb, 0.85);
  for (const q of rows) {
    ctx.fillStyle = tint;
    ctx.fillRect(0, y0 + q * c, x0 - 2, c);
    ctx.strokeRect(x0 + 0.5, y0 + q * c + 0.5, k.nk * c - 1, c - 1);
  }
  for (const j of cols) {
    ctx.fillStyle = tint;
    ctx.fillRect(x0 + j * c, 0, c, y0 - 2);
    ctx.strokeRect(x0 + j * c + 0.5, y0 + 0.5, c - 1, k.nq * c - 1);
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
  const k = ex.kind, q = Math.floor((y - lay.y0) / lay.c), j = Math.floor((x - lay.x0) / lay.c);
  const inQ = q >= 0 && q < k.nq, inK = j >= 0 && j < k.nk;
  if (inQ && inK) return { cell: { q, k: j } };
  if (inQ && x < lay.x0) return { token: { side: "q", i: q } };
  if (inK && y < lay.y0) return { token: { side: "k", i: j } };
  return {};
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
  g.append(cellsSvg(ex, ex.view.map(ex), ex.view.mapKey(ex.state), { x: x0, y: y0, w: k.nk * c, h: k.nq * c, hatch: true }));
  const rows = svgNode(d, "g", { "text-anchor": "end", "data-axis": "query" });
  for (let q = 0; q < k.nq; q += stride) rows.append(svgToken(d, k.shortQ[q], k.queries[q], x0 - 5, y0 + q * c + c / 2));
  const cols = svgNode(d, "g", { "text-anchor": "start", "data-axis": "key" });
  for (let j = 0; j < k.nk; j += stride) {
    const t = svgToken(d, k.shortK[j], k.keys[j], 0, 0);
    t.setAttribute("transform", `translate(${x0 + j * c + c / 2},${y0 - 5}) rotate(-90)`);
    if (k.special[j]) t.setAttribute("fill", rgba(th.textRgb, 0.55));
    cols.append(t);
  }
  g.append(rows, cols);
}
