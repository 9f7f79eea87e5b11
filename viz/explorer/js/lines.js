// The lines view: queries on the left, keys on the right, one line per weight worth seeing, in its
// head's colour, as opaque as the weight is large; several heads at once (the swatches pick them). A
// focused token keeps only its lines. A long run's rows keep their largest weights only (topKeys). The same interface as heatmap.js (draw, overlay, hit).

import { mapMax, topKeys } from "./data.js";
import { sizeCanvas } from "./dom.js";
import { marked, shownHeads } from "./state.js";
import { font, labelWidths, rgba } from "./theme.js";

const MIN_LINE = 0.02;  // weights (after scaling) under this draw no line: too faint to see, and many
// Past THIN_KEYS keys a row draws only its largest weights, until they hold LINE_MASS of the row's
// weight or LINE_KEYS lines: 1,024 rows of 1,024 faint lines would be a grey wall (and slow)
const THIN_KEYS = 128, LINE_MASS = 0.9, LINE_KEYS = 12;

function linesLayout(ex) {
  const k = ex.kind, { fs, s: sc } = ex.theme, lw = labelWidths(ex, k), n = Math.max(k.nq, k.nk);
  const rowH = Math.max(n > THIN_KEYS ? 1 : 4, Math.min(fs * 1.7, (760 * sc) / n));  // a long run: 1 px a token
  const colW = Math.ceil(Math.min(Math.max(lw.q, lw.k) + 14, 200 * sc));
  const gap = Math.max(160, Math.min(420 * sc, ex.width - 2 * colW - 8));
  const top = Math.ceil(fs * 2);
  return { type: "lines", colW, gap, left: colW, right: colW + gap, top, rowH, W: 2 * colW + gap, H: top + n * rowH + 8,
    stride: rowH < fs + 1 ? Math.ceil((fs + 1) / rowH) : 1 };
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
        for (let n = 0; n < top.keys.length; n++) out.push(h, q, top.keys[n], top.weights[n] * inv);
        continue;
      }
      for (let j = 0; j < k.nk; j++) {
        if (t && t.side === "k" && j !== t.i) continue;
        const i = q * k.nk + j, a = w[i] * inv;
        if (k.mask[i] && a >= MIN_LINE) out.push(h, q, j, a);
      }
    }
  }
  return out;
}

// the line nearest to a point between the columns (within 6 px), the stronger one on a tie
function nearestLine(ex, x, y, lay) {
  const L = ex.lines || [], t = (x - lay.left) / (lay.right - lay.left), span = lay.right - lay.left;
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

export const linesView = {
  draw(ex) {
    const k = ex.kind, lay = linesLayout(ex), { fs } = ex.theme;
    const ctx = sizeCanvas(ex.base, lay.W, lay.H);
    sizeCanvas(ex.over, lay.W, lay.H);
    const y = (i) => lay.top + i * lay.rowH + lay.rowH / 2;
    ctx.font = font(ex.theme, true);
    ctx.fillStyle = ex.theme.text;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    ctx.fillText(k.query_axis, lay.left - 6, fs * 0.8);
    ctx.textAlign = "left";
    ctx.fillText(k.key_axis, lay.right + 6, fs * 0.8);
    ctx.font = font(ex.theme);
    ctx.textAlign = "right";
    for (let q = 0; q < k.nq; q += lay.stride) ctx.fillText(k.shortQ[q], lay.left - 6, y(q));
    ctx.textAlign = "left";
    for (let j = 0; j < k.nk; j += lay.stride) {
      ctx.fillStyle = k.special[j] ? rgba(ex.theme.textRgb, 0.55) : ex.theme.text;
      ctx.fillText(k.shortK[j], lay.right + 6, y(j));
    }
    const lines = (ex.lines = lineSet(ex)), buckets = new Map();
    for (let i = 0; i < lines.length; i += 4) {  // one path per head and opacity step: few strokes
      const id = lines[i] * 16 + Math.min(15, Math.floor(lines[i + 3] * 16));
      let p = buckets.get(id);
      if (!p) buckets.set(id, (p = new Path2D()));
      p.moveTo(lay.left + 2, y(lines[i + 1]));
      p.lineTo(lay.right - 2, y(lines[i + 2]));
    }
    ctx.lineWidth = 1 / (ex.win.devicePixelRatio || 1);  // at most one device pixel: Skia draws these as fast hairlines
    for (const [id, p] of buckets) {
      ctx.globalAlpha = ((id % 16) + 1) / 16;
      ctx.strokeStyle = ex.headColours[Math.floor(id / 16) % ex.headColours.length];
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
    for (const q of rows) ctx.fillText(k.shortQ[q], lay.left - 6, y(q));  // marked labels legible at any stride
    ctx.textAlign = "left";
    for (const j of cols) ctx.fillText(k.shortK[j], lay.right + 6, y(j));
    const line = (cell, colour, width) => {
      ctx.beginPath();
      ctx.moveTo(lay.left + 2, y(cell.q));
      ctx.lineTo(lay.right - 2, y(cell.k));
      ctx.lineWidth = width;
      ctx.strokeStyle = colour;
      ctx.stroke();
    };
    const headOf = (cell) => ex.headColours[(cell.head ?? s.head) % ex.headColours.length];
    const sc = ex.theme.s;
    if (s.sel) { line(s.sel, ex.theme.bg, 5 * sc); line(s.sel, headOf(s.sel), 2.5 * sc); }
    if (s.hover) { line(s.hover, ex.theme.text, 4 * sc); line(s.hover, headOf(s.hover), 2.5 * sc); }
  },

  // a token on either column, or the line nearest the point between them (the focused token stays)
  hit(ex, x, y, lay) {
    const k = ex.kind, row = Math.floor((y - lay.top) / lay.rowH);
    if (x < lay.left) return row >= 0 && row < k.nq ? { token: { side: "q", i: row } } : {};
    if (x > lay.right) return row >= 0 && row < k.nk ? { token: { side: "k", i: row } } : {};
    return { cell: nearestLine(ex, x, y, lay), keepToken: true };
  },
};
