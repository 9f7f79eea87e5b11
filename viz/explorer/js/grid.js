// The grid view: every layer and head of the kind as a thumbnail, the current one outlined; hovering a
// thumbnail peeks at it (readouts.js), a click opens it as a heatmap. The same interface as heatmap.js.

import { sizeCanvas } from "./dom.js";
import { font, mapImage } from "./theme.js";

export const gridView = {
  draw(ex) {
    const k = ex.kind, { fs, s: sc } = ex.theme, ctx0 = ex.base.getContext("2d");
    ctx0.font = font(ex.theme);
    const x0 = Math.ceil(ctx0.measureText(`layer ${k.layers - 1}`).width + 12), y0 = Math.ceil(fs + 10), gap = 6;
    const thumb = Math.max(28, Math.min(Math.floor(150 * sc), Math.floor((ex.width - x0 - 8) / k.heads) - gap));
    const W = x0 + k.heads * (thumb + gap), H = y0 + k.layers * (thumb + gap);
    const ctx = sizeCanvas(ex.base, W, H);
    sizeCanvas(ex.over, W, H);
    ctx.font = font(ex.theme);
    ctx.fillStyle = ex.theme.text;
    ctx.textBaseline = "middle";
    ctx.textAlign = "center";
    for (let h = 0; h < k.heads; h++) ctx.fillText(`head ${h}`, x0 + h * (thumb + gap) + thumb / 2, y0 / 2);
    ctx.textAlign = "right";
    for (let l = 0; l < k.layers; l++) {
      ctx.fillStyle = ex.theme.text;
      ctx.fillText(`layer ${l}`, x0 - 6, y0 + l * (thumb + gap) + thumb / 2);
      for (let h = 0; h < k.heads; h++) {
        ctx.imageSmoothingEnabled = k.nk > thumb;
        ctx.drawImage(mapImage(ex, k, `h${l}.${h}`, k.head(l, h)), x0 + h * (thumb + gap), y0 + l * (thumb + gap), thumb, thumb);
      }
    }
    return { type: "grid", x0, y0, thumb, gap, W, H };
  },

  overlay(ex, ctx, lay) {
    const s = ex.state, at = (l, h) => [lay.x0 + h * (lay.thumb + lay.gap) - 2, lay.y0 + l * (lay.thumb + lay.gap) - 2];
    ctx.lineWidth = 2.5;
    ctx.strokeStyle = ex.theme.primary;
    ctx.strokeRect(...at(s.layer, s.head), lay.thumb + 4, lay.thumb + 4);
    if (s.peek) {
      ctx.strokeStyle = ex.theme.text;
      ctx.setLineDash([3, 2]);
      ctx.strokeRect(...at(s.peek.layer, s.peek.head), lay.thumb + 4, lay.thumb + 4);
      ctx.setLineDash([]);
    }
  },

  // the thumbnail under the point, as {peek: {layer, head}}
  hit(ex, x, y, lay) {
    const k = ex.kind, step = lay.thumb + lay.gap, h = Math.floor((x - lay.x0) / step), l = Math.floor((y - lay.y0) / step);
    const inside = (x - lay.x0) % step < lay.thumb && (y - lay.y0) % step < lay.thumb;
    return h >= 0 && h < k.heads && l >= 0 && l < k.layers && inside ? { peek: { layer: l, head: h } } : {};
  },
};
