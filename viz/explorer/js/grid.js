// The grid view: every layer and head of the kind as a thumbnail, the current one outlined; hovering a
// thumbnail peeks at it (the peek beside the map is the view's own), a click or Enter opens it as a
// heatmap, the arrow keys move the current layer and head. Under grouped-query attention (several query
// heads sharing one key/value head) a bracket over the head labels marks each group. A long run's
// thumbnails are its maps shrunk to blocks (thumbnail()). What a view is and does: view.js.

import { BIG_MAP } from "./data.js";
import { el, sizeCanvas } from "./dom.js";
import { heatmapView } from "./heatmap.js";
import { MAX_SVG_CELLS, cellsSvg, imageSvg } from "./svgdoc.js";
import { svgNode, svgText } from "./svgnodes.js";
import { font, mapImage } from "./theme.js";
import { OVER, defineView, headName, ownState } from "./view.js";

const THUMB_CELLS = 160;  // rows and columns a shrunk thumbnail has at most

// the view's own state for each explorer: the shrunk thumbnails of a long run, the thumbnail peeked at
// ({layer, head} or null) and the peek's elements
const gridOwn = ownState(() => ({ thumbs: new Map(), at: null, peek: null, canvas: null, caption: null }));
// the image of head (l, h) for a thumbnail or the peek: the map itself when small, else its block maxima
export function thumbnail(ex, k, l, h) {
  if (k.size <= BIG_MAP) return mapImage(ex, k, `h${l}.${h}`, k.head(l, h));
  const by = Math.ceil(Math.max(k.nq, k.nk) / THUMB_CELLS), key = `t${by}.${l}.${h}`;
  const kept = gridOwn(ex).thumbs, id = `${ex.header.digest}|${k.name}|${key}`;
  let blk = kept.get(id);
  if (!blk) {
    if (kept.size > 4 * k.layers * k.heads) kept.clear();
    kept.set(id, (blk = k.blockMax(l, h, by)));
  }
  return mapImage(ex, blk, key, blk.values);
}

// the query heads of key/value head g: [first, last]
export function kvGroup(k, h) {
  const g = Math.floor(h / k.group);
  return { g, first: g * k.group, last: (g + 1) * k.group - 1 };
}

export const gridView = defineView({
  key: "grid",
  pane: "grid",
  depends: () => "",  // the current layer and head are marked on the overlay
  oneMap: false,  // each thumbnail on its own scale
  svgName: () => "",
  peeked: (ex) => gridOwn(ex).at,
  names: (ex) => `every head, ${headName(ex.state.layer, ex.state.head)} outlined · grid`,
  build: buildPeek,
  readout: drawPeek,
  svg: gridSvg,
  fresh: (ex) => { gridOwn(ex).at = null; },
  moved: (ex) => { gridOwn(ex).at = null; },

  onMove(ex, h) {
    const o = gridOwn(ex), p = h.peek || null;
    if (JSON.stringify(p) !== JSON.stringify(o.at)) { o.at = p; ex.changed(OVER); }
  },
  onLeave(ex) {
    const o = gridOwn(ex), had = !!o.at;
    o.at = null;
    return had;
  },
  onClick(ex, h) {
    if (h.peek) ex.go({ layer: h.peek.layer, head: h.peek.head, view: heatmapView.key });
  },
  onArrow(ex, dq, dk) {
    const s = ex.state, k = ex.kind, within = (v, n) => Math.min(n - 1, Math.max(0, v));
    ex.go({ layer: within(s.layer + dq, k.layers), head: within(s.head + dk, k.heads) });
  },
  onEnter(ex) { ex.go({ view: heatmapView.key }); },

  draw(ex) {
    const k = ex.kind, { fs, s: sc } = ex.theme, ctx0 = ex.base.getContext("2d");
    ctx0.font = font(ex.theme);
    const grouped = k.group > 1, x0 = Math.ceil(ctx0.measureText(`layer ${k.layers - 1}`).width + 12), gap = 6;
    const y0 = Math.ceil(fs + 10) * (grouped ? 2 : 1);
    const thumb = Math.max(28, Math.min(Math.floor(150 * sc), Math.floor((ex.width - x0 - 8) / k.heads) - gap));
    const W = x0 + k.heads * (thumb + gap), H = y0 + k.layers * (thumb + gap);
    const ctx = sizeCanvas(ex.base, W, H);
    sizeCanvas(ex.over, W, H);
    ctx.font = font(ex.theme);
    ctx.fillStyle = ex.theme.text;
    ctx.textBaseline = "middle";
    ctx.textAlign = "center";
    const headY = grouped ? y0 * 0.75 : y0 / 2;
    for (let h = 0; h < k.heads; h++) ctx.fillText(`head ${h}`, x0 + h * (thumb + gap) + thumb / 2, headY);
    if (grouped) {  // one bracket per key/value head over the query heads that share it
      ctx.strokeStyle = ex.theme.text;
      ctx.lineWidth = 1;
      for (let g = 0; g < k.heads / k.group; g++) {
        const a = x0 + g * k.group * (thumb + gap), b = a + k.group * (thumb + gap) - gap, y = y0 * 0.5;
        ctx.beginPath();
        ctx.moveTo(a, y + 4); ctx.lineTo(a, y); ctx.lineTo(b, y); ctx.lineTo(b, y + 4);
        ctx.stroke();
        const label = ctx.measureText(`key/value head ${g}`).width < b - a ? `key/value head ${g}` : `kv ${g}`;
        ctx.fillText(label, (a + b) / 2, y0 * 0.25);
      }
    }
    ctx.textAlign = "right";
    for (let l = 0; l < k.layers; l++) {
      ctx.fillStyle = ex.theme.text;
      ctx.fillText(`layer ${l}`, x0 - 6, y0 + l * (thumb + gap) + thumb / 2);
      for (let h = 0; h < k.heads; h++) {
        const img = thumbnail(ex, k, l, h);
        ctx.imageSmoothingEnabled = img.width > thumb;
        ctx.drawImage(img, x0 + h * (thumb + gap), y0 + l * (thumb + gap), thumb, thumb);
      }
    }
    return { type: gridView.pane, x0, y0, thumb, gap, W, H, group: k.group };
  },

  overlay(ex, ctx, lay) {
    const s = ex.state, peek = gridOwn(ex).at, at = (l, h) => [lay.x0 + h * (lay.thumb + lay.gap) - 2, lay.y0 + l * (lay.thumb + lay.gap) - 2];
    ctx.lineWidth = 2.5;
    ctx.strokeStyle = ex.theme.primary;
    ctx.strokeRect(...at(s.layer, s.head), lay.thumb + 4, lay.thumb + 4);
    if (peek) {
      ctx.strokeStyle = ex.theme.text;
      ctx.setLineDash([3, 2]);
      ctx.strokeRect(...at(peek.layer, peek.head), lay.thumb + 4, lay.thumb + 4);
      ctx.setLineDash([]);
    }
  },

  // the thumbnail under the point, as {peek: {layer, head}}
  hit(ex, x, y, lay) {
    const k = ex.kind, step = lay.thumb + lay.gap, h = Math.floor((x - lay.x0) / step), l = Math.floor((y - lay.y0) / step);
    const inside = (x - lay.x0) % step < lay.thumb && (y - lay.y0) % step < lay.thumb;
    return h >= 0 && h < k.heads && l >= 0 && l < k.layers && inside ? { peek: { layer: l, head: h } } : {};
  },
});

// the peek: the hovered thumbnail, larger, beside it
function buildPeek(ex) {
  const d = ex.doc, o = gridOwn(ex);
  o.peek = el(d, "div", "ae-peek");
  o.canvas = el(d, "canvas");
  o.caption = el(d, "div", "ae-peek-caption");
  o.peek.append(o.canvas, o.caption);
  return { stage: o.peek };
}

function drawPeek(ex, shownView) {
  const o = gridOwn(ex), p = o.at, lay = ex.layout;
  o.peek.hidden = !shownView || !p || !lay || lay.type !== gridView.pane;
  if (o.peek.hidden) return;
  const k = ex.kind, size = Math.round(200 * ex.theme.s);
  const ctx = sizeCanvas(o.canvas, size, size);
  const img = thumbnail(ex, k, p.layer, p.head);
  ctx.imageSmoothingEnabled = img.width > size;
  ctx.drawImage(img, 0, 0, size, size);
  o.caption.textContent = `${headName(p.layer, p.head)} · ${ex.touch ? "tap" : "click"} to open`;
  const x = lay.x0 + (p.head + 1) * (lay.thumb + lay.gap), y = lay.y0 + p.layer * (lay.thumb + lay.gap);
  const W = ex.stage.clientWidth, left = x + size + 12 < W ? x + 4 : Math.max(0, x - lay.thumb - size - 16);
  o.peek.style.transform = `translate(${left}px, ${y}px)`;
}

// every layer and head as a thumbnail (each map on its own scale, as on the screen), the current one
// outlined in the primary colour
function gridSvg(ex, g, lay) {
  const d = ex.doc, k = ex.kind, s = ex.state, th = ex.theme, { x0, y0, thumb, gap } = lay, step = thumb + gap;
  const heads = svgNode(d, "g", { "text-anchor": "middle" }), layers = svgNode(d, "g", { "text-anchor": "end" });
  for (let h = 0; h < k.heads; h++) heads.append(svgText(d, `head ${h}`, x0 + h * step + thumb / 2, y0 / 2, { anchor: "middle" }));
  for (let l = 0; l < k.layers; l++) layers.append(svgText(d, `layer ${l}`, x0 - 6, y0 + l * step + thumb / 2, { anchor: "end" }));
  g.append(heads, layers);
  const big = k.size * k.layers * k.heads > MAX_SVG_CELLS;
  for (let l = 0; l < k.layers; l++) {
    for (let h = 0; h < k.heads; h++) {
      const box = { x: x0 + h * step, y: y0 + l * step, w: thumb, h: thumb, hatch: false };
      const m = big ? imageSvg(ex, `h${l}.${h}`, box) : cellsSvg(ex, k.head(l, h), `h${l}.${h}`, box);
      m.setAttribute("data-layer", l);
      m.setAttribute("data-head", h);
      g.append(m);
    }
  }
  g.append(svgNode(d, "rect", {
    x: x0 + s.head * step - 2, y: y0 + s.layer * step - 2, width: thumb + 4, height: thumb + 4,
    fill: "none", stroke: th.primary, "stroke-width": 2.5, "data-current": "",
  }));
}
