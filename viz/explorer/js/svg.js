// The shown view saved as SVG, for slides and papers: the heatmap (and mean, rollout), lines or grid
// as the screen draws it — the same layout (ex.layout, which the view's draw() returned), the same
// labels (the shortened ones, each full token in a <title> when cut), the same colour for every weight
// (the colour table theme.js builds from viz.common.WEIGHT_STOPS) and the same caption, axis names
// and colour legend (the chrome's own text). Everything is read from what the views read (mapOf, the
// kinds' maps, ex.lines, the layout), so it follows any change in how they get their data.
//
// The document is built with createElementNS and textContent and written by XMLSerializer: a token
// such as "<script>" or "&" becomes &lt;script&gt; / &amp;, never markup, and the file parses as XML.
// A map with more cells than MAX_SVG_CELLS goes in as an image (the pixels the screen drew for it)
// instead of one <rect> per cell, which would make a file viewers choke on; the labels, legend and
// text stay vector. PDF: print the SVG from a browser, or `rsvg-convert -f
// pdf` / Inkscape turn it into a PDF: no PDF library is bundled (its text would need embedded fonts).

import { el } from "./dom.js";
import { mapOf, shownHeads } from "./state.js";
import { rgba } from "./theme.js";
import { mapMax } from "./data.js";

const SVG_NS = "http://www.w3.org/2000/svg";
export const MAX_SVG_CELLS = 65536;  // one <rect> a cell up to a 256 × 256 map (or all of a grid's)
const XML_BAD = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;  // not allowed in XML 1.0

// The "SVG" button of the bar: saves the shown view as <title>-<kind>-<view>….svg.
export function svgButton(ex) {
  const b = el(ex.doc, "button", "ae-btn ae-svg", "SVG");
  b.type = "button";
  b.title = "Save this view as an SVG file (vector: for slides and papers)";
  b.setAttribute("aria-label", "Download this view as SVG");
  b.addEventListener("click", () => saveSvg(ex));
  return b;
}

export function saveSvg(ex) {
  if (!ex.state) return;
  const text = explorerSvg(ex), url = ex.win.URL.createObjectURL(new ex.win.Blob([text], { type: "image/svg+xml" }));
  const a = el(ex.doc, "a");
  a.href = url;
  a.download = svgName(ex);
  a.hidden = true;
  ex.root.append(a);
  a.click();
  a.remove();
  ex.win.setTimeout(() => ex.win.URL.revokeObjectURL(url), 30000);
}

function svgName(ex) {
  const s = ex.state, slug = (t) => String(t).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  const where = s.view === "grid" ? "" : s.view === "rollout" ? "" : s.view === "mean" ? `-layer${s.layer}` : `-layer${s.layer}-head${s.head}`;
  return `${(slug(ex.header.title || "").slice(0, 60) || "attention")}-${slug(s.kind)}-${s.view}${where}.svg`;
}

// The shown view as one standalone SVG document (text).
export function explorerSvg(ex) {
  if (ex.raf) { ex.win.cancelAnimationFrame(ex.raf); ex.flush(); }  // what a pending frame would draw
  const d = ex.doc, th = ex.theme, k = ex.kind, s = ex.state, lay = ex.layout, fs = th.fs, pad = Math.round(fs);
  const svg = d.createElementNS(SVG_NS, "svg"), defs = svgNode(d, "defs"), body = svgNode(d, "g");
  const measure = textWidth(ex);
  defineHatch(d, defs, th);
  defineScale(d, defs, ex.header.weight_stops);
  // the caption and the axis names, as above the map on the screen
  const caption = ex.caption.textContent, axes = ex.axes.textContent;
  body.append(svgText(d, caption, pad, pad + fs * 0.6, { weight: 600, size: fs * 1.1 }));
  body.append(svgText(d, axes, pad, pad + fs * 2.1, { opacity: 0.8 }));
  let y = Math.ceil(pad + fs * 3);
  if (s.view === "lines") y = drawSwatchesSvg(ex, body, pad, y);
  const view = svgNode(d, "g", { transform: `translate(${pad},${y})`, "data-view": s.view });
  if (lay.type === "heat") heatSvg(ex, view, lay);
  else if (lay.type === "lines") linesSvg(ex, view, lay);
  else gridSvg(ex, view, lay);
  body.append(view);
  y += lay.H + Math.round(fs * 0.5);
  // the colour legend: the scale as a gradient, and the chrome's words for its ends
  const barW = 8 * fs, barH = Math.round(fs * 0.8), legend = svgNode(d, "g", { transform: `translate(${pad},${y})`, "data-legend": "" });
  legend.append(svgNode(d, "rect", { width: barW, height: barH, fill: "url(#ae-scale)", stroke: rgba(th.textRgb, 0.3) }));
  const top = ex.legendText.textContent;
  legend.append(svgText(d, top, barW + fs * 0.6, barH / 2));
  let right = barW + fs * 0.6 + measure(top);
  if (!ex.maskNote.hidden) {
    const x = right + fs;
    legend.append(svgNode(d, "rect", { x, y: 0, width: barH, height: barH, fill: "url(#ae-hatch)", stroke: rgba(th.textRgb, 0.3) }));
    legend.append(svgText(d, ex.maskNote.textContent, x + barH + fs * 0.4, barH / 2));
    right = x + barH + fs * 0.4 + measure(ex.maskNote.textContent);
  }
  body.append(legend);
  y += barH + pad;
  const W = Math.ceil(Math.max(lay.W, measure(caption, true) * 1.1, measure(axes), right) + 2 * pad), H = Math.ceil(y);
  svgAttrs(svg, {
    xmlns: SVG_NS, width: W, height: H, viewBox: `0 0 ${W} ${H}`, "font-family": th.font, "font-size": fs,
    fill: th.text, "data-kind": s.kind, "data-view": s.view, "data-layer": s.layer, "data-head": s.head,
  });
  const title = svgNode(d, "title");
  title.textContent = xmlText(ex.header.title ? `${ex.header.title} · ${caption}` : caption);
  svg.append(title, defs, svgNode(d, "rect", { width: W, height: H, fill: th.bg }), body);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new ex.win.XMLSerializer().serializeToString(svg)}\n`;
}

// one <rect> per cell (or the screen's image of the map), the query labels on the left and the key
// labels reading upwards above, as heatmap.js draws them; masked cells hatched
function heatSvg(ex, g, lay) {
  const d = ex.doc, k = ex.kind, s = ex.state, { x0, y0, c } = lay, stride = lay.stride || 1, th = ex.theme;
  const values = mapOf(ex);
  const key = s.view === "mean" ? `m${s.layer}` : s.view === "rollout" ? "r" : `h${s.layer}.${s.head}`;
  g.append(cellsSvg(ex, values, key, { x: x0, y: y0, w: k.nk * c, h: k.nq * c, hatch: true }));
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

// the map `values` of the shown kind in the box {x, y, w, h}: a <rect> per cell, coloured as mapImage
// colours it (0 to 1 or to the map's largest weight, masked cells grey, hatched where `hatch`)
function cellsSvg(ex, values, key, box) {
  const d = ex.doc, k = ex.kind, lut = ex.colours, th = ex.theme;
  const g = svgNode(d, "g", { "data-map": key, "shape-rendering": "crispEdges" });
  if (k.size > MAX_SVG_CELLS) return imageSvg(ex, key, box);  // too many for vector cells
  const inv = 255 / (ex.state.scale === "max" ? mapMax(values, k.mask) : 1), sx = box.w / k.nk, sy = box.h / k.nq;
  const masked = box.hatch ? "url(#ae-hatch)" : hexOf(th.maskedRgb);
  for (let q = 0; q < k.nq; q++) {
    for (let j = 0; j < k.nk; j++) {
      const i = q * k.nk + j, l = Math.min(255, Math.max(0, Math.round(values[i] * inv))) * 3;
      const r = svgNode(d, "rect", {
        x: r2(box.x + j * sx), y: r2(box.y + q * sy), width: r2(sx), height: r2(sy),
        fill: k.mask[i] ? hexOf([lut[l], lut[l + 1], lut[l + 2]]) : masked, "data-q": q, "data-k": j,
      });
      if (k.mask[i]) r.setAttribute("data-w", values[i].toPrecision(6));
      g.append(r);
    }
  }
  return g;
}

// one <line> per line the screen draws (ex.lines, what lines.js drew), in its head's colour at the
// screen's opacity step; the query column on the left, the key column on the right
function linesSvg(ex, g, lay) {
  const d = ex.doc, k = ex.kind, th = ex.theme, fs = th.fs, stride = lay.stride || 1;
  const y = (i) => lay.top + i * lay.rowH + lay.rowH / 2;
  const names = svgNode(d, "g", { "font-weight": 600 });
  names.append(svgText(d, k.query_axis, lay.left - 6, fs * 0.8, { anchor: "end" }), svgText(d, k.key_axis, lay.right + 6, fs * 0.8));
  const rows = svgNode(d, "g", { "text-anchor": "end", "data-axis": "query" });
  for (let q = 0; q < k.nq; q += stride) rows.append(svgToken(d, k.shortQ[q], k.queries[q], lay.left - 6, y(q)));
  const cols = svgNode(d, "g", { "text-anchor": "start", "data-axis": "key" });
  for (let j = 0; j < k.nk; j += stride) {
    const t = svgToken(d, k.shortK[j], k.keys[j], lay.right + 6, y(j));
    if (k.special[j]) t.setAttribute("fill", rgba(th.textRgb, 0.55));
    cols.append(t);
  }
  const lines = svgNode(d, "g", { "stroke-width": 1, "data-lines": "" }), L = ex.lines || [];
  for (let i = 0; i < L.length; i += 4) {
    const head = L[i], a = L[i + 3];
    lines.append(svgNode(d, "line", {
      x1: lay.left + 2, y1: r2(y(L[i + 1])), x2: lay.right - 2, y2: r2(y(L[i + 2])),
      stroke: ex.headColours[head % ex.headColours.length], "stroke-opacity": (Math.min(15, Math.floor(a * 16)) + 1) / 16,
      "data-head": head, "data-q": L[i + 1], "data-k": L[i + 2],
    }));
  }
  g.append(names, rows, cols, lines);
}

// the heads shown as lines, each a dot in its colour and its name, as the swatches above the map
function drawSwatchesSvg(ex, body, x, y) {
  const d = ex.doc, fs = ex.theme.fs, measure = textWidth(ex), g = svgNode(d, "g", { "data-swatches": "" });
  for (const h of shownHeads(ex)) {
    g.append(svgNode(d, "circle", { cx: x + fs * 0.4, cy: y + fs * 0.5, r: fs * 0.4, fill: ex.headColours[h % ex.headColours.length] }));
    g.append(svgText(d, `head ${h}`, x + fs, y + fs * 0.5));
    x += fs * 2 + measure(`head ${h}`);
  }
  body.append(g);
  return y + Math.round(fs * 1.6);
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

// a map too large for a <rect> per cell: the pixels the screen drew for `box` (the shown pane's canvas,
// at its device resolution, masked cells hatched as there), as a PNG image — what the reader saw,
// whatever the view did to draw it
function imageSvg(ex, key, box) {
  const d = ex.doc, g = svgNode(d, "g", { "data-map": key }), scale = ex.base.width / ex.layout.W;
  const c = el(d, "canvas");
  c.width = Math.max(1, Math.round(box.w * scale));
  c.height = Math.max(1, Math.round(box.h * scale));
  c.getContext("2d").drawImage(ex.base, box.x * scale, box.y * scale, box.w * scale, box.h * scale, 0, 0, c.width, c.height);
  g.append(svgNode(d, "image", {
    x: box.x, y: box.y, width: box.w, height: box.h, preserveAspectRatio: "none", href: c.toDataURL("image/png"),
  }));
  return g;
}

// the hatch of masked cells (theme.js's, as an SVG pattern) and the colour scale as a gradient whose
// stops are the weight_stops, which the screen's colour table interpolates linearly
function defineHatch(d, defs, th) {
  const p = svgNode(d, "pattern", { id: "ae-hatch", width: 8, height: 8, patternUnits: "userSpaceOnUse" });
  p.append(svgNode(d, "rect", { width: 8, height: 8, fill: hexOf(th.maskedRgb) }));
  p.append(svgNode(d, "path", { d: "M0,8 L8,0 M-4,4 L4,-4 M4,12 L12,4", stroke: rgba(th.textRgb, 0.45), "stroke-width": 1.2 }));
  defs.append(p);
}

function defineScale(d, defs, stops) {
  const list = (Array.isArray(stops) ? stops : []).filter((c) => /^#[0-9a-f]{6}$/i.test(c));
  const grad = svgNode(d, "linearGradient", { id: "ae-scale", x1: 0, x2: 1, y1: 0, y2: 0 });
  list.forEach((c, i) => grad.append(svgNode(d, "stop", { offset: list.length > 1 ? i / (list.length - 1) : 0, "stop-color": c })));
  defs.append(grad);
}

// a token label: its shown text, and the whole token in a <title> when the label cuts it
function svgToken(d, shown, full, x, y) {
  const t = svgText(d, shown, x, y);
  if (full !== shown) {
    const title = svgNode(d, "title");
    title.textContent = xmlText(full);
    t.append(title);
  }
  return t;
}

function svgText(d, text, x, y, o = {}) {
  const t = svgNode(d, "text", { x: r2(x), y: r2(y), "dominant-baseline": "central" });
  if (o.anchor) t.setAttribute("text-anchor", o.anchor);
  if (o.weight) t.setAttribute("font-weight", o.weight);
  if (o.size) t.setAttribute("font-size", r2(o.size));
  if (o.opacity) t.setAttribute("fill-opacity", o.opacity);
  t.setAttributeNS("http://www.w3.org/XML/1998/namespace", "xml:space", "preserve");  // spaces as typed
  t.textContent = xmlText(text);  // text, never markup: the serializer escapes < & >
  return t;
}

function svgNode(d, tag, a) {
  const e = d.createElementNS(SVG_NS, tag);
  if (a) svgAttrs(e, a);
  return e;
}

function svgAttrs(e, a) {
  for (const [n, v] of Object.entries(a)) if (n !== "xmlns") e.setAttribute(n, String(v));
}

function textWidth(ex) {
  const ctx = ex.base.getContext("2d");
  return (text, bold) => {
    ctx.font = `${bold ? "600 " : ""}${ex.theme.fs}px ${ex.theme.font}`;
    return ctx.measureText(text).width;
  };
}

function xmlText(text) { return String(text).replace(XML_BAD, "\uFFFD"); }

function r2(v) { return Math.round(v * 100) / 100; }

function hexOf(rgb) { return `#${rgb.map((c) => c.toString(16).padStart(2, "0")).join("")}`; }
