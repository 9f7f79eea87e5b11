// The matrix view's SVG file: the shown matrix as one standalone SVG document (matrixSvg), laid out as the
// table is, and the file name its title gives (slug). matrixview.js's "SVG" button saves it.

import { fmt, ink } from "./cells.js";
import { svgNode, svgText, svgToken, xmlText } from "../explorer/js/svgnodes.js";

// The shown matrix as one standalone SVG document (text), laid out as the table is: the heading,
// the title, a <rect> and its printed number per cell in the cell's colour and ink, the column
// labels above and the row labels on the left (cut with "…" past 12em as the table cuts them, the
// whole label in a <title>), marked cells dashed, blank cells hatched, the axes under it, and the
// legend: the head colours, the marked cells, and the colour scale with its range. Built with
// createElementNS and textContent, written by XMLSerializer: labels are text, never markup.
export function matrixSvg(view) {
  const d = view.doc, p = view.p, data = view.data, [n, m] = p.shape, win = d.defaultView;
  const cs = win.getComputedStyle(view.root), fs = parseFloat(cs.fontSize) || 13, font = cs.fontFamily;
  const ink0 = cs.color, bg = cs.getPropertyValue("--st-background-color").trim() || "#ffffff";
  const ctx = d.createElement("canvas").getContext("2d");
  const width = (text, bold) => { ctx.font = `${bold ? "600 " : ""}${fs}px ${font}`; return ctx.measureText(text).width; };
  const cut = (text, max) => {  // as the table's th { max-width: 12em; text-overflow: ellipsis }
    if (width(text) <= max) return text;
    const chars = Array.from(text);
    while (chars.length > 1 && width(chars.join("") + "…") > max) chars.pop();
    return chars.join("") + "…";
  };
  const pad = fs * 0.4, rowH = Math.round(fs * 1.6), maxLabel = fs * 12;
  const texts = p.values.map((v) => (v === null ? "" : fmt(v, p.decimals)));
  const colLabels = p.cols.map((c) => cut(c, maxLabel)), rowLabels = p.rows.map((r) => cut(r, maxLabel));
  const rowW = Math.ceil(Math.max(0, ...rowLabels.map((r) => width(r))) + 2 * pad);
  const colW = colLabels.map((c, j) => {
    let w = width(c);
    for (let i = 0; i < n; i++) w = Math.max(w, width(texts[i * m + j]));
    return Math.ceil(w + 2 * pad);
  });
  const svg = svgNode(d, "svg"), defs = svgNode(d, "defs"), body = svgNode(d, "g");
  const hatch = svgNode(d, "pattern", { id: "mv-hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse" });
  hatch.append(svgNode(d, "path", { d: "M0,6 L6,0 M-3,3 L3,-3 M3,9 L9,3", stroke: ink0, "stroke-opacity": 0.3, "stroke-width": 1 }));
  defs.append(hatch);
  let y = fs;
  const line = (text, o) => { body.append(svgText(d, text, fs, y, o)); y += rowH; };
  if (data.heading) line(data.code ? `${data.heading} — ${data.code}` : data.heading, { weight: 600 });
  if (data.note) line(data.note, { opacity: 0.7 });
  if (p.label && view.panels.length > 1) line(`tab: ${p.label}`, { opacity: 0.7 });
  line(p.title, { weight: 600 });
  const table = svgNode(d, "g", { transform: `translate(${fs},${y - rowH / 2})`, "data-table": "" });
  const xs = [rowW];
  colW.forEach((w, j) => xs.push(xs[j] + w + 1));  // border-spacing: 1px
  const heads = svgNode(d, "g", { "data-axis": "columns", "text-anchor": "middle" });
  colLabels.forEach((c, j) => heads.append(svgToken(d, c, p.cols[j], xs[j] + colW[j] / 2, rowH / 2)));
  const rows = svgNode(d, "g", { "data-axis": "rows", "text-anchor": "end" });
  rowLabels.forEach((r, i) => rows.append(svgToken(d, r, p.rows[i], rowW - pad, rowH * (i + 1.5) + i)));
  const cells = svgNode(d, "g", { "data-cells": "" }), numbers = svgNode(d, "g", { "text-anchor": "end", "data-numbers": "" });
  const marked = new Set((p.marks || []).map(([i, j]) => i * m + j)), marks = svgNode(d, "g", { fill: "none", stroke: ink0, "stroke-width": 2, "stroke-dasharray": "4 2" });
  for (let i = 0; i < n; i++) {
    const top = rowH * (i + 1) + i + 1;
    for (let j = 0; j < m; j++) {
      const v = p.values[i * m + j], rgb = p.colour.mode === "none" ? null : view.cellColour(i, j);  // as drawTable
      cells.append(svgNode(d, "rect", {
        x: xs[j], y: top, width: colW[j], height: rowH, rx: 2, "data-i": i, "data-j": j,
        fill: rgb ? `rgb(${rgb.join(",")})` : v === null ? "url(#mv-hatch)" : "none",
      }));
      if (marked.has(i * m + j)) marks.append(svgNode(d, "rect", { x: xs[j] + 3, y: top + 3, width: colW[j] - 6, height: rowH - 6 }));
      if (v !== null) {
        const t = svgText(d, texts[i * m + j], xs[j] + colW[j] - pad, top + rowH / 2);
        if (rgb) t.setAttribute("fill", ink(rgb));
        numbers.append(t);
      }
    }
  }
  table.append(heads, rows, cells, numbers, marks);
  body.append(table);
  const tableW = xs[m] - 1, tableH = rowH * (n + 1) + n + 1;
  y += tableH + fs * 0.2;
  const axes = [p.row_title && `rows: ${p.row_title}`, p.col_title && `columns: ${p.col_title}`].filter(Boolean).join(" · ");
  if (axes) line(axes, { opacity: 0.75 });
  const right = svgLegend(view, d, defs, body, fs, y, width);
  if (right) y += rowH;
  const W = Math.ceil(Math.max(tableW, right, width(p.title, true), width(axes)) + 2 * fs), H = Math.ceil(y);
  for (const [k, v] of Object.entries({ width: W, height: H, viewBox: `0 0 ${W} ${H}`, "font-family": font, "font-size": fs, fill: ink0 })) svg.setAttribute(k, String(v));
  const title = svgNode(d, "title");
  title.textContent = xmlText(p.title);
  svg.append(title, defs, svgNode(d, "rect", { width: W, height: H, fill: bg }), body);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new win.XMLSerializer().serializeToString(svg)}\n`;
}

// the legend's keys in a row at height y: head colours, marked cells, the colour scale; its right end
function svgLegend(view, d, defs, body, fs, y, width) {
  const p = view.p, c = p.colour, g = svgNode(d, "g", { "data-legend": "" }), box = fs * 0.9;
  let x = fs;
  const key = (fill, text, extra = {}) => {
    g.append(svgNode(d, "rect", { x, y: y - box / 2, width: box, height: box, rx: 2, fill, ...extra }));
    g.append(svgText(d, text, x + box + fs * 0.3, y));
    x += box + fs * 1.3 + width(text);
  };
  if (c.mode === "head") {
    const used = new Set(c.heads);
    c.palette.forEach((colour, h) => { if (used.has(h)) key(colour, `head ${h}`); });
    if (used.has(-1)) key(c.none, "no single head");
  }
  if (c.mode === "value") {
    const grad = svgNode(d, "linearGradient", { id: "mv-scale", x1: 0, x2: 1, y1: 0, y2: 0 });
    c.stops.forEach((s, i) => grad.append(svgNode(d, "stop", { offset: i / (c.stops.length - 1), "stop-color": s })));
    defs.append(grad);
    const w = fs * 8, [lo, hi] = c.ranges[0];
    g.append(svgNode(d, "rect", { x, y: y - box / 2, width: w, height: box, fill: "url(#mv-scale)", "data-scale": "" }));
    const text = c.ranges.length > 1 ? "each row from its smallest to its largest value" : `${fmt(lo, p.decimals)} → ${fmt(hi, p.decimals)}`;
    g.append(svgText(d, text, x + w + fs * 0.4, y));
    x += w + fs * 1.4 + width(text);
  }
  if (p.marks && p.marks.length && p.mark_label) key("none", p.mark_label, { stroke: "currentColor", "stroke-dasharray": "3 2" });
  if (x === fs) return 0;
  body.append(g);
  return x;
}

export function slug(text) {
  return String(text).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
}
