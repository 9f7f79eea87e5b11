// The heatmap view, which also draws the "mean" and "rollout" views: one map, queries as rows and keys
// as columns, masked cells hatched. Over it, the hovered cell's row and column and the selection.
// Like every view: draw(ex) paints ex.base and returns the layout (where the cells are), overlay(ex,
// ctx, layout) paints the marks on ex.over, hit(ex, x, y, layout) says what is under a point.

import { sizeCanvas } from "./dom.js";
import { mapOf, marked } from "./state.js";
import { font, labelWidths, mapImage, rgba } from "./theme.js";

export const heatmapView = {
  draw(ex) {
    const k = ex.kind, s = ex.state, { fs } = ex.theme, sc = ex.theme.s, lw = labelWidths(ex, k);
    const key = s.view === "mean" ? `m${s.layer}` : s.view === "rollout" ? "r" : `h${s.layer}.${s.head}`;
    const img = mapImage(ex, k, key, mapOf(ex));
    const x0 = Math.ceil(Math.min(lw.q + 10, 200 * sc)), y0 = Math.ceil(Math.min(lw.k + 10, 200 * sc));
    const avail = Math.max(60, ex.width - x0 - 12);
    const c = Math.max(3, Math.min(Math.floor(36 * sc), Math.floor(avail / k.nk), Math.floor((720 * sc) / k.nq)));
    const W = x0 + k.nk * c + 12, H = y0 + k.nq * c + 12;
    const ctx = sizeCanvas(ex.base, W, H);
    sizeCanvas(ex.over, W, H);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(img, x0, y0, k.nk * c, k.nq * c);
    if (k.masked) {
      const path = new Path2D();
      for (let q = 0; q < k.nq; q++) {  // one rectangle per run of masked cells in a row
        for (let j = 0; j < k.nk; j++) {
          if (k.mask[q * k.nk + j]) continue;
          let e = j;
          while (e + 1 < k.nk && !k.mask[q * k.nk + e + 1]) e++;
          path.rect(x0 + j * c, y0 + q * c, (e - j + 1) * c, c);
          j = e;
        }
      }
      ctx.fillStyle = ctx.createPattern(ex.hatch, "repeat");
      ctx.fill(path);
    }
    const stride = c < fs + 2 ? Math.ceil((fs + 2) / c) : 1;
    ctx.font = font(ex.theme);
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    for (let q = 0; q < k.nq; q += stride) {
      ctx.fillStyle = ex.theme.text;
      ctx.fillText(k.shortQ[q], x0 - 5, y0 + q * c + c / 2);
    }
    ctx.save();
    ctx.rotate(-Math.PI / 2);  // key labels read upwards; x' = -y, y' = x
    ctx.textAlign = "left";
    for (let j = 0; j < k.nk; j += stride) {
      ctx.fillStyle = k.special[j] ? rgba(ex.theme.textRgb, 0.55) : ex.theme.text;
      ctx.fillText(k.shortK[j], -(y0 - 5), x0 + j * c + c / 2);
    }
    ctx.restore();
    return { type: "heat", x0, y0, c, W, H, stride };
  },

  overlay(ex, ctx, lay) {
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
  },

  // a cell, or a token when the point is on an axis's labels
  hit(ex, x, y, lay) {
    const k = ex.kind, q = Math.floor((y - lay.y0) / lay.c), j = Math.floor((x - lay.x0) / lay.c);
    const inQ = q >= 0 && q < k.nq, inK = j >= 0 && j < k.nk;
    if (inQ && inK) return { cell: { q, k: j } };
    if (inQ && x < lay.x0) return { token: { side: "q", i: q } };
    if (inK && y < lay.y0) return { token: { side: "k", i: j } };
    return {};
  },
};
