// The SVG export's means beyond its nodes (svgnodes.js): a map as cells (or as the screen's image of
// it), the hatch and the colour scale. svg.js writes the document; each view's module draws itself
// with these (its svg()).

import { el } from "./dom.js";
import { mapMax } from "./data.js";
import { rgba } from "./theme.js";
import { r2, svgNode } from "./svgnodes.js";

export const MAX_SVG_CELLS = 65536;  // one <rect> a cell up to a 256 × 256 map (or all of a grid's)

// the map `values` of the shown kind in the box {x, y, w, h}: a <rect> per cell, coloured as mapImage
// colours it (0 to 1 or to the map's largest weight, masked cells grey, hatched where `hatch`)
export function cellsSvg(ex, values, key, box) {
  const d = ex.doc, k = ex.kind, lut = ex.colours, th = ex.theme;
  const g = svgNode(d, "g", { "data-map": key, "shape-rendering": "crispEdges" });
  if (k.size > MAX_SVG_CELLS) return imageSvg(ex, key, box);  // too many for vector cells
  const inv = 255 / (ex.state.scale === "max" ? mapMax(values, k.mask) : 1), sx = box.w / k.nk, sy = box.h / k.nq;
  const masked = box.hatch ? "url(#ae-hatch)" : hexOf(th.maskedRgb);
  for (let q = 0; q < k.nq; q++) {
    for (let j = 0; j < k.nk; j++) {
      const i = q * k.nk + j, l = Math.min(255, Math.max(0, Math.round(values[i] * inv))) * 3;
      const known = !Number.isNaN(values[i]);  // a weight not sent: theme.js's unknown colour, no data-w
      const fill = !k.mask[i] ? masked : known ? hexOf([lut[l], lut[l + 1], lut[l + 2]]) : hexOf(th.unknownRgb);
      const r = svgNode(d, "rect", {
        x: r2(box.x + j * sx), y: r2(box.y + q * sy), width: r2(sx), height: r2(sy), fill, "data-q": q, "data-k": j,
      });
      if (k.mask[i] && known) r.setAttribute("data-w", values[i].toPrecision(6));
      g.append(r);
    }
  }
  return g;
}

// a map too large for a <rect> per cell: the pixels the screen drew for `box` (the shown pane's canvas,
// at its device resolution, masked cells hatched as there), as a PNG image — what the reader saw,
// whatever the view did to draw it
export function imageSvg(ex, key, box) {
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
export function defineHatch(d, defs, th) {
  const p = svgNode(d, "pattern", { id: "ae-hatch", width: 8, height: 8, patternUnits: "userSpaceOnUse" });
  p.append(svgNode(d, "rect", { width: 8, height: 8, fill: hexOf(th.maskedRgb) }));
  p.append(svgNode(d, "path", { d: "M0,8 L8,0 M-4,4 L4,-4 M4,12 L12,4", stroke: rgba(th.textRgb, 0.45), "stroke-width": 1.2 }));
  defs.append(p);
}

export function defineScale(d, defs, stops) {
  const list = (Array.isArray(stops) ? stops : []).filter((c) => /^#[0-9a-f]{6}$/i.test(c));
  const grad = svgNode(d, "linearGradient", { id: "ae-scale", x1: 0, x2: 1, y1: 0, y2: 0 });
  list.forEach((c, i) => grad.append(svgNode(d, "stop", { offset: list.length > 1 ? i / (list.length - 1) : 0, "stop-color": c })));
  defs.append(grad);
}

export function textWidth(ex) {
  const ctx = ex.base.getContext("2d");
  return (text, bold) => {
    ctx.font = `${bold ? "600 " : ""}${ex.theme.fs}px ${ex.theme.font}`;
    return ctx.measureText(text).width;
  };
}

export function hexOf(rgb) { return `#${rgb.map((c) => c.toString(16).padStart(2, "0")).join("")}`; }
