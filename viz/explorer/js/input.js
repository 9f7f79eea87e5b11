// Input: the mouse over the map and the token strip, the bar's buttons and the keys. A view that
// handles the mouse or keys itself says so (view.js: onMove, onLeave, onClick, onArrow, onEnter; the
// grid does); the others hover, select and explain cells. None of it talks to the server except
// explain(): a click or Enter sends the selected cell to Python.

import { drawTip } from "./readouts.js";
import { cellInfo } from "./state.js";
import { flushUrl } from "./url.js";
import { ALL, BASE, CHROME, OVER } from "./view.js";

const FOLLOW_MS = 300;  // how long the arrow keys rest before the explanation follows the selection
const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

export function listen(ex) {
  const root = ex.root;
  root.addEventListener("keydown", (e) => onKey(ex, e));
  root.addEventListener("mousedown", (e) => { if (!e.target.closest("button")) root.focus({ preventScroll: true }); });
  ex.bar.addEventListener("click", (e) => onBar(ex, e));
  ex.stage.addEventListener("mousemove", (e) => onMove(ex, e));
  // a press or a click takes the tooltip away: after a tap it stayed over the map (a finger never
  // leaves as a mouse does), and the clicked cell is read in the strip and the explanation
  ex.stage.addEventListener("pointerdown", () => hideTip(ex));
  ex.stage.addEventListener("pointerleave", () => onLeave(ex));  // a pen's or a finger's too
  ex.stage.addEventListener("click", (e) => { onClick(ex, e); hideTip(ex); });
  ex.strip.addEventListener("mouseover", (e) => onStrip(ex, e));
  ex.strip.addEventListener("mouseleave", () => setToken(ex, null));
}

// what is under the mouse: {cell}, {token}, {peek} or nothing, as the shown view says
function hit(ex, e) {
  const r = ex.base.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top, lay = ex.layout;
  if (!lay || x < 0 || y < 0 || x > lay.W || y > lay.H) return {};
  return ex.pane.view.hit(ex, x, y, lay);
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function sameCell(a, b) { return a === b || (!!a && !!b && a.q === b.q && a.k === b.k && a.head === b.head); }

function onMove(ex, e) {
  const s = ex.state, h = hit(ex, e), v = ex.view;
  const r = ex.stage.getBoundingClientRect();
  ex.tipAt = [e.clientX - r.left + ex.stage.scrollLeft, e.clientY - r.top];
  labelTitle(ex, h.token);
  if (v.onMove) { v.onMove(ex, h); return; }
  const cell = h.cell || null, token = h.token || (h.keepToken ? s.token : null);
  const tokenChanged = !same(token, s.token);
  if (!tokenChanged && sameCell(cell, s.hover)) {
    if (cell) drawTip(ex);  // the tooltip follows the mouse (unless a click took it away)
    return;
  }
  if (!sameCell(cell, s.hover)) s.tipOff = false;  // another cell: its tooltip shows
  s.hover = cell;
  s.token = token;
  ex.changed(tokenChanged && v.tokenRedraws ? BASE | OVER : OVER);
}

// the axis label under the pointer: its whole token as the stage's title, which the browser shows on a long
// hover (a label past 14 characters, or cut to its column on a narrow screen, ends in "…")
function labelTitle(ex, token) {
  const title = token ? (token.side === "q" ? ex.kind.queries : ex.kind.keys)[token.i] : "";
  if (ex.stage.title !== title) ex.stage.title = title;
}

function onLeave(ex) {
  labelTitle(ex, null);
  const s = ex.state, v = ex.view, left = v.onLeave ? v.onLeave(ex) : false;
  if (!s.hover && !s.token && !left) return;
  const redraw = v.tokenRedraws && s.token;
  s.hover = s.token = null;
  ex.changed(redraw ? BASE | OVER : OVER);
}

// the tooltip goes until the pointer moves to another cell
function hideTip(ex) {
  if (!ex.state) return;  // no data yet
  ex.state.tipOff = true;
  drawTip(ex);
}

function setToken(ex, token) {
  const s = ex.state;
  if (same(token, s.token)) return;
  s.token = token;
  ex.changed(ex.view.tokenRedraws ? BASE | OVER : OVER);
}

function onStrip(ex, e) {
  const span = e.target.closest && e.target.closest(".ae-tok[data-i]");
  if (span) setToken(ex, { side: "k", i: Number(span.dataset.i) });
}

function onClick(ex, e) {
  const h = hit(ex, e), s = ex.state, v = ex.view;
  if (v.onClick) { v.onClick(ex, h); return; }
  if (!h.cell) return;
  if (v.zoom && v.zoom(ex, h.cell)) return;  // a tap on cells too small for a finger zooms the map first (heatmap.js)
  s.sel = { ...h.cell };
  explain(ex);
}

// a click or Enter: the selected cell goes to Python (the app explains it from the model's tensors)
function explain(ex) {
  const s = ex.state, info = cellInfo(ex, s.sel);
  if (!info) return;
  const cell = {
    kind: s.kind, layer: ex.view.cellLayer(s), head: info.head,
    query: info.query, key: info.key, weight: info.weight,
  };
  s.clicked = cell;
  s.note = ex.standalone ? "Explaining a weight needs the app: this file has the weights, not the model." : "";
  flushUrl(ex);  // before the rerun reads it
  ex.changed(ALL);
  if (!ex.standalone && ex.send) ex.send(cell);
}

function onBar(ex, e) {
  const b = e.target.closest("button");
  if (!b || b.disabled) return;
  const s = ex.state, k = ex.kind;
  if (b.dataset.kind) ex.go({ kind: b.dataset.kind });
  else if (b.dataset.view) ex.go({ view: b.dataset.view });
  else if (b.dataset.step) {
    const what = b.dataset.step, n = what === "layer" ? k.layers : k.heads;
    ex.go({ [what]: Math.min(n - 1, Math.max(0, s[what] + Number(b.dataset.delta))) });
  } else if (b.dataset.action === "scale") {
    s.scale = s.scale === "max" ? "abs" : "max";
    ex.changed(ALL);
  }
}

function onKey(ex, e) {
  if (e.altKey || e.ctrlKey || e.metaKey || !ex.state) return;
  if ((e.key === "Enter" || e.key === " ") && e.target.closest && e.target.closest("button")) return;  // a focused button's own
  const s = ex.state, k = ex.kind, v = ex.view, within = (x, n) => Math.min(n - 1, Math.max(0, x));
  if (e.key in MOVES) {
    const [dq, dk] = MOVES[e.key];
    if (v.onArrow) v.onArrow(ex, dq, dk);
    else {  // the first arrow selects the hovered cell (or the first), the next ones move it
      const from = s.sel || s.hover || { q: 0, k: 0 }, step = s.sel ? 1 : 0;
      s.sel = { q: within(from.q + step * dq, k.nq), k: within(from.k + step * dk, k.nk) };
      s.note = "";
      ex.changed(OVER | CHROME);
      // once a weight is being explained, the panel follows the selection (one message when the keys
      // rest, not one per press); before any click, moving sends nothing
      if (s.clicked && !ex.standalone) {
        ex.win.clearTimeout(ex.followTimer);
        ex.followTimer = ex.win.setTimeout(() => explain(ex), FOLLOW_MS);
      }
    }
  } else if (e.key === "[" || e.key === "]") {
    ex.go({ head: within(s.head + (e.key === "]" ? 1 : -1), k.heads) });
  } else if (e.key === "PageUp" || e.key === "PageDown") {
    ex.go({ layer: within(s.layer + (e.key === "PageDown" ? 1 : -1), k.layers) });
  } else if (e.key === "Enter") {
    if (v.onEnter) v.onEnter(ex);
    else explain(ex);
  } else if (e.key === "Escape") {
    s.sel = null;
    s.note = "";
    ex.changed(OVER | CHROME);
  } else return;
  e.preventDefault();
  e.stopPropagation();  // the app's own shortcuts stay out of it
}
