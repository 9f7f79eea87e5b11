// The lines view: queries on the left, keys on the right, one line per weight worth seeing, in its
// head's colour, as wide and as opaque as the weight is large; several heads at once, which the head
// swatches above the map pick (the view's own: built, drawn and clicked here). A focused token keeps
// only its lines. A long run's rows keep their largest weights only (topKeys). What a view is and does:
// view.js.

import { mapMax, topKeys } from "./data.js";
import { el, sizeCanvas } from "./dom.js";
import { textWidth } from "./svgdoc.js";
import { svgNode, svgText, svgToken, r2 } from "./svgnodes.js";
import { fitText, font, labelWidths, legible, rgba } from "./theme.js";
import { ALL, defineView, headName, marked, ownState } from "./view.js";

const MIN_LINE = 0.02;  // weights (after scaling) under this draw no line: too faint to see, and many
// Past THIN_KEYS keys a row draws only its largest weights, until they hold LINE_MASS of the row's
// weight or LINE_KEYS lines: 1,024 rows of 1,024 faint lines would be a grey wall (and slow)
const THIN_KEYS = 128, LINE_MASS = 0.9, LINE_KEYS = 12;
// the lines' room between the columns: at most, and at least where the screen is narrow (a phone's 390 px:
// the label columns give up width first, their labels cut with "…", so nothing runs past the stage)
const MAX_GAP = 420, MIN_GAP = 96, MIN_COL = 40;
// The columns stand SLOPE rows apart, so a line from a token to the one before it drops one row in SLOPE
// (11°): a previous-token head reads as a band of parallel slanted lines. 420 px apart, as the lines stood
// before, that line fell 20 px in 420 and looked level, like a token attending to itself.
const SLOPE = 5;
// A weight's line: 1 px wide at the faintest, WIDEST px at the map's top, its opacity from FAINTEST to 1, in
// STEPS steps (one path per head and step: few strokes). Where rows are thin (a long run) no line is wider
// than half a row.
const WIDEST = 6, FAINTEST = 0.3, STEPS = 16;

function stepOf(a) { return Math.min(STEPS - 1, Math.floor(a * STEPS)); }

// a step's line: its width in CSS pixels (before the theme's scale) and its opacity
function strokeOf(step, rowH) {
  const f = (step + 1) / STEPS, widest = Math.max(1, Math.min(WIDEST, rowH / 2));
  return { width: 1 + (widest - 1) * f, alpha: FAINTEST + (1 - FAINTEST) * f };
}

// the head's colour as a line on this background can be seen (theme.js's legible: 3:1, WCAG 1.4.11)
function lineColour(ex, head) {
  const o = linesOwn(ex);
  if (o.theme !== ex.theme) { o.theme = ex.theme; o.colours = new Map(); }
  let c = o.colours.get(head);
  if (!c) o.colours.set(head, (c = legible(ex.theme, ex.headColours[head % ex.headColours.length])));
  return c;
}

function linesLayout(ex) {
  const k = ex.kind, { fs, s: sc } = ex.theme, lw = labelWidths(ex, k), n = Math.max(k.nq, k.nk);
  const rowH = Math.max(n > THIN_KEYS ? 1 : 4, Math.min(fs * 1.7, (760 * sc) / n));  // a long run: 1 px a token
  const room = ex.width - 8, least = Math.round(MIN_GAP * sc);
  const ctx = ex.base.getContext("2d");  // the columns' names over them ("query character"), in bold, fit too
  ctx.font = font(ex.theme, true);
  const names = Math.max(ctx.measureText(k.query_axis).width, ctx.measureText(k.key_axis).width);
  const widest = Math.max(lw.q, lw.k, names);
  const colW = Math.max(MIN_COL, Math.min(Math.ceil(Math.min(widest + 14, 200 * sc)), Math.floor((room - least) / 2)));
  const gap = Math.max(least, Math.min(MAX_GAP * sc, Math.round(SLOPE * rowH), room - 2 * colW));
  const top = Math.ceil(fs * 2);
  return { type: linesView.pane, colW, gap, left: colW, right: colW + gap, top, rowH, W: 2 * colW + gap, H: top + n * rowH + 8,
    stride: rowH < fs + 1 ? Math.ceil((fs + 1) / rowH) : 1 };
}

// a label as its column has room for it: the column's width less the 6 px it stands off the lines and a margin
function colLabel(ctx, lay, label) {
  return fitText(ctx, label, lay.colW - 10);
}

// every line of the shown heads that is worth drawing, filtered to one token when one is focused:
// a flat list of (head, query, key, scaled weight)
function lineSet(ex) {
  const k = ex.kind, s = ex.state, t = s.token, out = [];
  for (const h of shownHeads(ex)) {
    const w = k.head(s.layer, h), inv = 1 / (s.scale === "max" ? mapMax(w, k.mask) : 1);
    const q0 = t && t.side === "q" ? t.i : 0, q1 = t && t.side === "q" ? t.i + 1 : k.nq;
    const thin = k.nk > THIN_KEYS && !(t && t.side === "k");
    for (let q = q0; q < q1; q++) {
      if (thin) {
        const top = topKeys(w.subarray(q * k.nk, (q + 1) * k.nk), k.mask, q * k.nk, LINE_MASS, LINE_KEYS, MIN_LINE / inv);
        for (let n = 0; n < top.keys.length; n++) out.push(h, q, top.keys[n], Math.min(1, top.weights[n] * inv));
        continue;
      }
      for (let j = 0; j < k.nk; j++) {
        if (t && t.side === "k" && j !== t.i) continue;
        const i = q * k.nk + j, a = Math.min(1, w[i] * inv);  // a row left out of the scale's top (data.js) may pass 1
        if (k.mask[i] && a >= MIN_LINE) out.push(h, q, j, a);
      }
    }
  }
  return out;
}

// the line nearest to a point between the columns (within 6 px), the stronger one on a tie
function nearestLine(ex, x, y, lay) {
  const L = linesOwn(ex).lines, t = (x - lay.left) / (lay.right - lay.left), span = lay.right - lay.left;
  const yAt = (i) => lay.top + i * lay.rowH + lay.rowH / 2;
  let best = null, bestD = 6 * ex.theme.s;
  for (let i = 0; i < L.length; i += 4) {
    const y0 = yAt(L[i + 1]), y1 = yAt(L[i + 2]), dy = y1 - y0;
    const d = Math.abs(y - (y0 + t * dy)) / Math.sqrt(1 + (dy / span) ** 2);
    if (d < bestD || (best && d === bestD && L[i + 3] > best.a)) {
      bestD = d;
      best = { head: L[i], q: L[i + 1], k: L[i + 2], a: L[i + 3] };
    }
  }
  return best && { q: best.q, k: best.k, head: best.head };
}

export const linesView = defineView({
  key: "lines",
  pane: "lines",
  depends: (ex) => `${ex.state.layer}|${shownHeads(ex)}|${ex.state.token ? ex.state.token.side + ex.state.token.i : ""}`,
  axes: (k) => `left: ${k.query_axis} · right: ${k.key_axis}`,
  oneMap: false,
  showsMask: false,
  headsShown: (ex) => shownHeads(ex),
  names: (ex) => `${shownHeads(ex).map((h) => headName(ex.state.layer, h)).join(", ")} · lines`,
  tokenRedraws: true,
  build: buildSwatches,
  fresh: freshLines,
  moved: movedLines,
  chrome: drawSwatches,
  svg: linesSvg,
  svgAbove: swatchesSvg,

  draw(ex) {
    const k = ex.kind, lay = linesLayout(ex), { fs } = ex.theme;
    const ctx = sizeCanvas(ex.base, lay.W, lay.H);
    sizeCanvas(ex.over, lay.W, lay.H);
    const y = (i) => lay.top + i * lay.rowH + lay.rowH / 2;
    ctx.font = font(ex.theme, true);
    ctx.fillStyle = ex.theme.text;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    ctx.fillText(fitText(ctx, k.query_axis, lay.left - 8), lay.left - 6, fs * 0.8);
    ctx.textAlign = "left";
    ctx.fillText(fitText(ctx, k.key_axis, lay.W - lay.right - 8), lay.right + 6, fs * 0.8);
    ctx.font = font(ex.theme);
    ctx.textAlign = "right";
    for (let q = 0; q < k.nq; q += lay.stride) ctx.fillText(colLabel(ctx, lay, k.shortQ[q]), lay.left - 6, y(q));
    ctx.textAlign = "left";
    for (let j = 0; j < k.nk; j += lay.stride) {
      ctx.fillStyle = k.special[j] ? rgba(ex.theme.textRgb, 0.55) : ex.theme.text;
      ctx.fillText(colLabel(ctx, lay, k.shortK[j]), lay.right + 6, y(j));
    }
    const lines = (linesOwn(ex).lines = lineSet(ex)), buckets = new Map();
    for (let i = 0; i < lines.length; i += 4) {  // one path per head and step: few strokes
      const id = lines[i] * STEPS + stepOf(lines[i + 3]);
      let p = buckets.get(id);
      if (!p) buckets.set(id, (p = new Path2D()));
      p.moveTo(lay.left + 2, y(lines[i + 1]));
      p.lineTo(lay.right - 2, y(lines[i + 2]));
    }
    // a long run's 1-px rows keep one device pixel a line: Skia draws those as fast hairlines
    const hair = lay.rowH < 2 ? 1 / (ex.win.devicePixelRatio || 1) : 0, sc = ex.theme.s;
    for (const [id, p] of buckets) {
      const { width, alpha } = strokeOf(id % STEPS, lay.rowH);
      ctx.lineWidth = hair || width * sc;
      ctx.globalAlpha = alpha;
      ctx.strokeStyle = lineColour(ex, Math.floor(id / STEPS));
      ctx.stroke(p);
    }
    ctx.globalAlpha = 1;
    return lay;
  },

  overlay(ex, ctx, lay) {
    const k = ex.kind, s = ex.state, { fs } = ex.theme, y = (i) => lay.top + i * lay.rowH + lay.rowH / 2;
    const tint = rgba(ex.theme.primaryRgb, 0.3), { rows, cols } = marked(ex);
    const h = Math.max(lay.rowH, fs + 2);
    if (s.sel) { rows.add(s.sel.q); cols.add(s.sel.k); }
    ctx.fillStyle = tint;
    for (const q of rows) ctx.fillRect(0, y(q) - h / 2, lay.left - 2, h);
    for (const j of cols) ctx.fillRect(lay.right + 2, y(j) - h / 2, lay.colW - 2, h);
    ctx.font = font(ex.theme, true);
    ctx.textBaseline = "middle";
    ctx.fillStyle = ex.theme.text;
    ctx.textAlign = "right";
    for (const q of rows) ctx.fillText(colLabel(ctx, lay, k.shortQ[q]), lay.left - 6, y(q));  // legible at any stride
    ctx.textAlign = "left";
    for (const j of cols) ctx.fillText(colLabel(ctx, lay, k.shortK[j]), lay.right + 6, y(j));
    const line = (cell, colour, width) => {
      ctx.beginPath();
      ctx.moveTo(lay.left + 2, y(cell.q));
      ctx.lineTo(lay.right - 2, y(cell.k));
      ctx.lineWidth = width;
      ctx.strokeStyle = colour;
      ctx.stroke();
    };
    const headOf = (cell) => lineColour(ex, cell.head ?? s.head);
    const sc = ex.theme.s;
    const w = Math.max(2.5, Math.min(WIDEST, lay.rowH / 2)) * sc;  // over the widest line, as wide as it
    if (s.sel) { line(s.sel, ex.theme.bg, w + 3 * sc); line(s.sel, headOf(s.sel), w); }
    if (s.hover) { line(s.hover, ex.theme.text, w + 2 * sc); line(s.hover, headOf(s.hover), w); }
  },

  // a token on either column, or the line nearest the point between them (the focused token stays)
  hit(ex, x, y, lay) {
    const k = ex.kind, row = Math.floor((y - lay.top) / lay.rowH);
    if (x < lay.left) return row >= 0 && row < k.nq ? { token: { side: "q", i: row } } : {};
    if (x > lay.right) return row >= 0 && row < k.nk ? { token: { side: "k", i: row } } : {};
    return { cell: nearestLine(ex, x, y, lay), keepToken: true };
  },
});

// the view's own state for each explorer: the heads shown as lines for each kind (name -> Set; at
// first the current head), the lines drawn (lineSet's list, which hit() and the SVG read), the swatches
const linesOwn = ownState(() => ({ shown: new Map(), lines: [], swatches: null, theme: null, colours: new Map() }));

// the heads drawn for the shown kind, in order
function shownHeads(ex) {
  const k = ex.kind, o = linesOwn(ex);
  let set = o.shown.get(k.name);
  if (!set) o.shown.set(k.name, (set = new Set([ex.state.head])));
  return [...set].filter((h) => h < k.heads).sort((a, b) => a - b);
}

// a new run: no head picked, the swatches rebuilt for its kinds
function freshLines(ex) {
  const o = linesOwn(ex);
  o.shown = new Map();
  o.lines = [];
  if (o.swatches) o.swatches.dataset.kind = "";
}

// a move to another head keeps one head shown as that head
function movedLines(ex, before) {
  const s = ex.state, o = linesOwn(ex), shown = o.shown.get(s.kind);
  if (shown && shown.size === 1 && shown.has(before.head)) o.shown.set(s.kind, new Set([s.head]));
}

// the head swatches over the map: a button per head, a click shows or hides its lines (the last stays)
function buildSwatches(ex) {
  const swatches = (linesOwn(ex).swatches = el(ex.doc, "div", "ae-swatches"));
  swatches.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-head]");
    if (!b) return;
    const k = ex.kind, h = Number(b.dataset.head), set = new Set(shownHeads(ex));
    if (set.has(h) && set.size > 1) set.delete(h);
    else set.add(h);
    linesOwn(ex).shown.set(k.name, set);
    ex.state.hover = null;
    ex.changed(ALL);
  });
  return { above: swatches };
}

function drawSwatches(ex, shownView) {
  const swatches = linesOwn(ex).swatches;
  swatches.hidden = !shownView;
  if (!shownView) return;
  const k = ex.kind, shown = new Set(shownHeads(ex)), d = ex.doc;
  if (swatches.dataset.kind !== k.name) {
    swatches.dataset.kind = k.name;
    swatches.replaceChildren(...Array.from({ length: k.heads }, (_, h) => {
      const b = el(d, "button", "ae-swatch");
      b.type = "button";
      b.dataset.head = String(h);
      const dot = el(d, "span", "ae-dot");
      b.append(dot, el(d, "span", "", `head ${h}`));
      return b;
    }));
  }
  for (const b of swatches.children) {
    b.setAttribute("aria-pressed", String(shown.has(Number(b.dataset.head))));
    b.firstChild.style.background = lineColour(ex, Number(b.dataset.head));  // the theme may have changed
  }
}

// one <line> per line the screen draws (lineSet's, as draw() drew them), in its head's colour at the
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
  const lines = svgNode(d, "g", { "data-lines": "" }), L = linesOwn(ex).lines, sc = th.s;
  for (let i = 0; i < L.length; i += 4) {
    const head = L[i], { width, alpha } = strokeOf(stepOf(L[i + 3]), lay.rowH);
    lines.append(svgNode(d, "line", {
      x1: lay.left + 2, y1: r2(y(L[i + 1])), x2: lay.right - 2, y2: r2(y(L[i + 2])),
      stroke: lineColour(ex, head), "stroke-opacity": r2(alpha), "stroke-width": r2(lay.rowH < 2 ? 1 : width * sc),
      "data-head": head, "data-q": L[i + 1], "data-k": L[i + 2],
    }));
  }
  g.append(names, rows, cols, lines);
}

// the heads shown as lines, each a dot in its colour and its name, as the swatches above the map;
// returns where the map goes below them
function swatchesSvg(ex, body, x, y) {
  const d = ex.doc, fs = ex.theme.fs, measure = textWidth(ex), g = svgNode(d, "g", { "data-swatches": "" });
  for (const h of shownHeads(ex)) {
    g.append(svgNode(d, "circle", { cx: x + fs * 0.4, cy: y + fs * 0.5, r: fs * 0.4, fill: lineColour(ex, h) }));
    g.append(svgText(d, `head ${h}`, x + fs, y + fs * 0.5));
    x += fs * 2 + measure(`head ${h}`);
  }
  body.append(g);
  return y + Math.round(fs * 1.6);
}
