// The grid view: every layer and head of the kind as a thumbnail, the current one outlined; hovering a
// thumbnail peeks at it (readouts.js), a click opens it as a heatmap. The same interface as heatmap.js.
// Under grouped-query attention (several query heads sharing one key/value head) a bracket over the
// head labels marks each group. A long run's thumbnails are its maps shrunk to blocks (thumbnail()).

import { BIG_MAP } from "./data.js";
import { sizeCanvas } from "./dom.js";
import { font, mapImage } from "./theme.js";

const THUMB_CELLS = 160;  // rows and columns a shrunk thumbnail has at most

// the image of head (l, h) for a thumbnail or the peek: the map itself when small, else its block maxima
export function thumbnail(ex, k, l, h) {
  if (k.size <= BIG_MAP) return mapImage(ex, k, `h${l}.${h}`, k.head(l, h));
  const by = Math.ceil(Math.max(k.nq, k.nk) / THUMB_CELLS), key = `t${by}.${l}.${h}`;
  const kept = ex.thumbs || (ex.thumbs = new Map()), id = `${ex.header.digest}|${k.name}|${key}`;
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

export const gridView = {
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
    return { type: "grid", x0, y0, thumb, gap, W, H, group: k.group };
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
