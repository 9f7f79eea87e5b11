// The matrix view: one matrix as a table of coloured cells with its numbers printed.
//
// Streamlit (components v2) sends a small JSON payload (viz/matrixview/payload.py); this script
// builds a <table> from it. Labels and titles are written with textContent only, never parsed as
// markup. Hovering a cell highlights its row and column and writes "row → column: value" under the
// title; the root's data-state attribute holds the payload's digest and the hovered cell, for tests
// and benchmarks. Hovering never talks to the server.

const views = new WeakMap();  // parent element -> its view: a rerun with new data reuses the element

export default function (component) {
  const { parentElement, data } = component;
  let view = views.get(parentElement);
  if (!view) {
    view = new MatrixView(parentElement);
    views.set(parentElement, view);
  }
  const generation = ++view.generation;
  view.setData(typeof data === "string" ? JSON.parse(data) : data);
  return () => {
    if (view.generation === generation) {
      view.root.remove();
      views.delete(parentElement);
    }
  };
}

function el(doc, tag, cls, text) {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function hexRgb(h) {
  return [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
}

// A colour for t in [0, 1] along the stops, as [r, g, b], rounded as the explorer's colour table is
// (viz/explorer/js/theme.js), so a weight is the same colour in both.
function along(stops, t) {
  const x = Math.min(Math.max(t, 0), 1) * (stops.length - 1);
  const j = Math.min(Math.floor(x), stops.length - 2), f = x - j;
  return stops[j].map((c, i) => Math.round(c + f * (stops[j + 1][i] - c)));
}

const SVG_NS = "http://www.w3.org/2000/svg";
const XML_BAD = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;  // not allowed in XML 1.0

// Dark text on light cells, light text on dark ones (relative luminance).
function ink([r, g, b]) {
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 140 ? "#1a1a1a" : "#ffffff";
}

// "-0.0000" never shows: a tiny negative prints as zero.
function fmt(x, decimals) {
  const s = x.toFixed(decimals);
  return Number(s) === 0 ? (0).toFixed(decimals) : s;
}

class MatrixView {
  constructor(parent) {
    this.generation = 0;
    this.doc = parent.ownerDocument;
    const d = this.doc;
    this.root = el(d, "div", "mv-root");
    this.root.setAttribute("data-testid", "matrix-view");
    this.head = el(d, "div", "mv-heading");
    this.note = el(d, "div", "mv-note");
    this.tabs = el(d, "div", "mv-tabs");
    this.tabs.setAttribute("role", "tablist");
    this.panel = 0;
    const top = el(d, "div", "mv-top");
    this.title = el(d, "div", "mv-title");
    this.readout = el(d, "div", "mv-readout");
    this.readout.setAttribute("aria-live", "polite");
    this.svgButton = el(d, "button", "mv-svg", "SVG");
    this.svgButton.type = "button";
    this.svgButton.title = "Save this matrix as an SVG file (vector: for slides and papers)";
    this.svgButton.setAttribute("aria-label", "Download this matrix as SVG");
    this.svgButton.addEventListener("click", () => this.saveSvg());
    top.append(this.title, this.readout, this.svgButton);
    this.legend = el(d, "div", "mv-legend");
    this.scroll = el(d, "div", "mv-scroll");
    this.root.append(this.head, this.note, this.tabs, top, this.legend, this.scroll);
    parent.append(this.root);
    this.hover = null;
    this.scroll.addEventListener("mouseover", (e) => this.onHover(e.target.closest("td")));
    this.scroll.addEventListener("mouseleave", () => this.onHover(null));
  }

  // data: one matrix, or {panels: [matrix, ...]} shown one at a time under tabs
  setData(data) {
    this.root.classList.toggle("mv-projector", Boolean(data.projector));
    if (this.data && this.data.digest === data.digest) return;  // a rerun with the same matrices: nothing to draw
    this.data = data;
    this.panels = data.panels || [data];
    this.drawHeading(data);
    this.drawTabs();
    this.show(Math.min(this.panel, this.panels.length - 1));
  }

  drawHeading(data) {
    const d = this.doc, parts = [];
    if (data.heading) parts.push(el(d, "strong", "", data.heading));
    if (data.code) parts.push(d.createTextNode(" — "), el(d, "code", "", data.code));
    this.head.replaceChildren(...parts);
    this.note.textContent = data.note || "";
    this.root.classList.toggle("mv-boxed", Boolean(data.heading));
  }

  drawTabs() {
    const d = this.doc;
    this.tabs.replaceChildren();
    if (this.panels.length < 2) return;
    this.panels.forEach((p, i) => {
      const tab = el(d, "button", "mv-tab", p.label);
      tab.type = "button";
      tab.setAttribute("role", "tab");
      tab.addEventListener("click", () => this.show(i));
      this.tabs.append(tab);
    });
  }

  show(i) {
    this.panel = i;
    [...this.tabs.children].forEach((tab, j) => tab.setAttribute("aria-selected", String(j === i)));
    const p = (this.p = this.panels[i]);
    this.hover = null;
    this.title.textContent = p.title;
    this.drawLegend();
    this.drawTable();
    this.onHover(null);
  }

  cellColour(i, j) {
    const p = this.p, c = p.colour, v = p.values[i * p.shape[1] + j];
    if (c.mode === "head") {
      const h = c.heads[i * p.shape[1] + j];
      return hexRgb(h < 0 ? c.none : c.palette[h]);
    }
    if (v === null) return null;  // no value: a blank cell
    const [lo, hi] = c.ranges.length > 1 ? c.ranges[i] : c.ranges[0];
    return along(this.stops, hi > lo ? (v - lo) / (hi - lo) : 0);
  }

  drawTable() {
    const d = this.doc, p = this.p, [n, m] = p.shape;
    this.stops = p.colour.stops ? p.colour.stops.map(hexRgb) : null;
    const table = el(d, "table", "mv-table");
    const axes = [p.row_title && `rows: ${p.row_title}`, p.col_title && `columns: ${p.col_title}`];
    const caption = el(d, "caption", "mv-axes", axes.filter(Boolean).join(" · "));
    const head = el(d, "thead"), top = el(d, "tr");
    top.append(el(d, "th", "mv-corner", ""));
    this.colHeads = p.cols.map((label, j) => {
      const th = el(d, "th", "mv-col", label);
      th.scope = "col";
      th.title = label;
      top.append(th);
      return th;
    });
    head.append(top);
    const body = el(d, "tbody");
    this.rowHeads = [];
    const marked = new Set((p.marks || []).map(([i, j]) => i * m + j));
    for (let i = 0; i < n; i++) {
      const tr = el(d, "tr"), th = el(d, "th", "mv-row", p.rows[i]);
      th.scope = "row";
      th.title = p.rows[i];
      tr.append(th);
      this.rowHeads.push(th);
      for (let j = 0; j < m; j++) {
        const v = p.values[i * m + j];
        const td = el(d, "td", v === null ? "mv-cell mv-blank" : "mv-cell", v === null ? "" : fmt(v, p.decimals));
        td.dataset.i = i;
        td.dataset.j = j;
        if (marked.has(i * m + j)) td.classList.add("mv-marked");
        const rgb = p.colour.mode === "none" ? null : this.cellColour(i, j);
        if (rgb) {
          td.style.background = `rgb(${rgb.join(",")})`;
          td.style.color = ink(rgb);
        }
        tr.append(td);
      }
      body.append(tr);
    }
    table.append(caption, head, body);
    this.scroll.replaceChildren(table);
  }

  drawLegend() {
    const d = this.doc, p = this.p, c = p.colour;
    this.legend.replaceChildren();
    const key = (swatch, name) => {
      const item = el(d, "span", "mv-key");
      item.append(swatch, el(d, "span", "", name));
      this.legend.append(item);
    };
    if (c.mode === "head") {
      const used = new Set(c.heads);
      const items = [...c.palette.map((colour, h) => [colour, `head ${h}`, h]), [c.none, "no single head", -1]];
      for (const [colour, name, h] of items) {
        if (!used.has(h)) continue;
        const swatch = el(d, "span", "mv-swatch");
        swatch.style.background = colour;
        key(swatch, name);
      }
    }
    if (p.marks && p.marks.length && p.mark_label) key(el(d, "span", "mv-swatch mv-marked"), p.mark_label);
  }

  onHover(td) {
    const p = this.p;
    if (!p) return;
    const at = td && td.dataset.i !== undefined ? [Number(td.dataset.i), Number(td.dataset.j)] : null;
    if (this.hover) {
      this.rowHeads[this.hover[0]].classList.remove("mv-on");
      this.colHeads[this.hover[1]].classList.remove("mv-on");
    }
    this.hover = at;
    const state = { digest: this.data.digest, panel: p.label || null, title: p.title, shape: p.shape, hover: null };
    if (at) {
      const [i, j] = at, value = p.values[i * p.shape[1] + j];
      this.rowHeads[i].classList.add("mv-on");
      this.colHeads[j].classList.add("mv-on");
      const head = p.colour.mode === "head" ? p.colour.heads[i * p.shape[1] + j] : null;
      const which = head === null ? "" : head < 0 ? " (no single head)" : ` (head ${head})`;
      this.readout.textContent = `${p.rows[i]} → ${p.cols[j]}: ${value === null ? "no value" : fmt(value, 4)}${which}`;
      const marked = (p.marks || []).some(([r, c]) => r === i && c === j);
      if (marked && p.mark_label) this.readout.textContent += ` (${p.mark_label})`;
      state.hover = { row: i, col: j, row_label: p.rows[i], col_label: p.cols[j], value, marked };
    } else {
      this.readout.textContent = p.colour.mode === "none" ? "" : "hover a cell for its value to 4 decimals";
    }
    this.root.dataset.state = JSON.stringify(state);
  }

  // The shown matrix as an SVG file: a download named after its title.
  saveSvg() {
    if (!this.p) return;
    const win = this.doc.defaultView, text = this.svg();
    const url = win.URL.createObjectURL(new win.Blob([text], { type: "image/svg+xml" }));
    const a = el(this.doc, "a");
    a.href = url;
    a.download = `${slug(this.p.title).slice(0, 60) || "matrix"}.svg`;
    a.hidden = true;
    this.root.append(a);
    a.click();
    a.remove();
    win.setTimeout(() => win.URL.revokeObjectURL(url), 30000);
  }

  // The shown matrix as one standalone SVG document (text), laid out as the table is: the heading,
  // the title, a <rect> and its printed number per cell in the cell's colour and ink, the column
  // labels above and the row labels on the left (cut with "…" past 12em as the table cuts them, the
  // whole label in a <title>), marked cells dashed, blank cells hatched, the axes under it, and the
  // legend: the head colours, the marked cells, and the colour scale with its range. Built with
  // createElementNS and textContent, written by XMLSerializer: labels are text, never markup.
  svg() {
    const d = this.doc, p = this.p, data = this.data, [n, m] = p.shape, win = d.defaultView;
    const cs = win.getComputedStyle(this.root), fs = parseFloat(cs.fontSize) || 13, font = cs.fontFamily;
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
    if (p.label && this.panels.length > 1) line(`tab: ${p.label}`, { opacity: 0.7 });
    line(p.title, { weight: 600 });
    const table = svgNode(d, "g", { transform: `translate(${fs},${y - rowH / 2})`, "data-table": "" });
    const xs = [rowW];
    colW.forEach((w, j) => xs.push(xs[j] + w + 1));  // border-spacing: 1px
    const heads = svgNode(d, "g", { "data-axis": "columns", "text-anchor": "middle" });
    colLabels.forEach((c, j) => heads.append(svgLabel(d, c, p.cols[j], xs[j] + colW[j] / 2, rowH / 2)));
    const rows = svgNode(d, "g", { "data-axis": "rows", "text-anchor": "end" });
    rowLabels.forEach((r, i) => rows.append(svgLabel(d, r, p.rows[i], rowW - pad, rowH * (i + 1.5) + i)));
    const cells = svgNode(d, "g", { "data-cells": "" }), numbers = svgNode(d, "g", { "text-anchor": "end", "data-numbers": "" });
    const marked = new Set((p.marks || []).map(([i, j]) => i * m + j)), marks = svgNode(d, "g", { fill: "none", stroke: ink0, "stroke-width": 2, "stroke-dasharray": "4 2" });
    for (let i = 0; i < n; i++) {
      const top = rowH * (i + 1) + i + 1;
      for (let j = 0; j < m; j++) {
        const v = p.values[i * m + j], rgb = p.colour.mode === "none" ? null : this.cellColour(i, j);  // as drawTable
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
    const right = this.svgLegend(d, defs, body, fs, y, width);
    if (right) y += rowH;
    const W = Math.ceil(Math.max(tableW, right, width(p.title, true), width(axes)) + 2 * fs), H = Math.ceil(y);
    for (const [k, v] of Object.entries({ width: W, height: H, viewBox: `0 0 ${W} ${H}`, "font-family": font, "font-size": fs, fill: ink0 })) svg.setAttribute(k, String(v));
    const title = svgNode(d, "title");
    title.textContent = xmlText(p.title);
    svg.append(title, defs, svgNode(d, "rect", { width: W, height: H, fill: bg }), body);
    return `<?xml version="1.0" encoding="UTF-8"?>\n${new win.XMLSerializer().serializeToString(svg)}\n`;
  }

  // the legend's keys in a row at height y: head colours, marked cells, the colour scale; its right end
  svgLegend(d, defs, body, fs, y, width) {
    const p = this.p, c = p.colour, g = svgNode(d, "g", { "data-legend": "" }), box = fs * 0.9;
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
}

function slug(text) {
  return String(text).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
}

function xmlText(text) {
  return String(text).replace(XML_BAD, "\uFFFD");
}

function svgNode(d, tag, attrs) {
  const e = d.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

// a line of text centred on y; o: weight, opacity
function svgText(d, text, x, y, o = {}) {
  const t = svgNode(d, "text", { x: Math.round(x * 100) / 100, y: Math.round(y * 100) / 100, "dominant-baseline": "central" });
  if (o.weight) t.setAttribute("font-weight", o.weight);
  if (o.opacity) t.setAttribute("fill-opacity", o.opacity);
  t.setAttributeNS("http://www.w3.org/XML/1998/namespace", "xml:space", "preserve");
  t.textContent = xmlText(text);  // text, never markup: the serializer escapes < & >
  return t;
}

// a row or column label as shown, with the whole label in a <title> when the shown one is cut
function svgLabel(d, shown, full, x, y) {
  const t = svgText(d, shown, x, y);
  if (shown !== full) {
    const title = svgNode(d, "title");
    title.textContent = xmlText(full);
    t.append(title);
  }
  return t;
}
