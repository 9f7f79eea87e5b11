// What hovering reads out: the token strip (the keys, tinted by how much the hovered query attends to
// each) and the tooltip of the hovered cell. A view's own readouts (the grid's peek) are its module's.

import { el, tokenSpan } from "./dom.js";
import { kvGroup } from "./grid.js";
import { topKeys } from "./data.js";
import { cellInfo, mapOf } from "./state.js";
import { rgba } from "./theme.js";
import { headName } from "./view.js";

const LONG_STRIP = 256;  // keys past which the strip shows a row's largest weights, not every key
const STRIP_MASS = 0.8, STRIP_KEYS = 16;  // ... until they hold this much of the row, at most this many

export function buildReadouts(ex) {
  const d = ex.doc;
  ex.strip = el(d, "div", "ae-strip");
  ex.tip = el(d, "div", "ae-tip");
  ex.tipMain = el(d, "div", "ae-tip-main");
  ex.tipSub = el(d, "div", "ae-tip-sub");
  ex.tip.append(ex.tipMain, ex.tipSub);
}

export function drawStrip(ex) {
  const s = ex.state, k = ex.kind, d = ex.doc, t = s.token;
  const q = s.hover ? s.hover.q : t && t.side === "q" ? t.i : s.sel ? s.sel.q : null;
  const head = s.hover && s.hover.head !== undefined ? s.hover.head : undefined;
  const key = `${k.name}|${s.view}|${s.layer}|${s.head}|${head}|${q}|${t ? t.side + t.i : ""}|${s.hover ? s.hover.k : ""}|${ex.theme.primary}|${ex.touch}`;
  if (key === ex.stripKey) return;
  ex.stripKey = key;
  if (k.nk > LONG_STRIP) {  // hovering one of its keys keeps the row it belongs to
    const row = q === null && t && t.side === "k" && ex.stripRow ? ex.stripRow : { q, head };
    ex.stripRow = row.q === null ? null : row;
    drawTopStrip(ex, row.q, row.head);
    return;
  }
  if (ex.strip.dataset.kind !== k.name || !ex.stripLabel) {
    ex.strip.dataset.kind = k.name;
    ex.stripLabel = el(d, "span", "ae-strip-label");
    ex.strip.replaceChildren(ex.stripLabel, ...k.keys.map((label, i) => {
      const span = tokenSpan(d, k.special[i] ? "ae-tok ae-special" : "ae-tok", label);
      span.dataset.i = String(i);
      return span;
    }));
  }
  const spans = ex.strip.children;
  const row = q === null ? null : mapOf(ex, head).subarray(q * k.nk, (q + 1) * k.nk);
  let m = 0;
  if (row) for (let j = 0; j < k.nk; j++) if (k.mask[q * k.nk + j] && row[j] > m) m = row[j];
  for (let j = 0; j < k.nk; j++) {
    const span = spans[j + 1], visible = row && k.mask[q * k.nk + j];
    const known = visible && !Number.isNaN(row[j]);  // a kind sent without weights tints no key
    span.style.backgroundColor = known ? rgba(ex.theme.primaryRgb, ((0.85 * row[j]) / (m || 1)).toFixed(3)) : "";
    span.classList.toggle("ae-masked", !!row && !visible);
    span.classList.toggle("ae-on", (t && t.side === "k" && t.i === j) || (!!s.hover && s.hover.k === j) ||
      (!!t && t.side === "q" && k.sameTokens && t.i === j));
  }
  ex.stripLabel.textContent = q === null ? `${k.key_axis}: ${pointAt(ex)} to see what its query attends to`
    : `${k.query_axis}: `;
  if (q !== null) {
    const who = tokenSpan(d, "ae-tok ae-query", k.queries[q]);
    ex.stripLabel.append(who, d.createTextNode(" attends to"));
  }
}

// A long run's strip: not every key (1,024 tokens would be thirty lines of text, restyled on every
// hover) but the row's largest weights, in key order, and the weight of the rest (topKeys)
function drawTopStrip(ex, q, head) {
  const k = ex.kind, d = ex.doc;
  ex.strip.dataset.kind = "";  // a short run shown next rebuilds its full strip
  ex.stripLabel = el(d, "span", "ae-strip-label");
  if (q === null) {
    ex.stripLabel.textContent = `${k.key_axis}: ${pointAt(ex)} to see the keys its query attends to most`;
    ex.strip.replaceChildren(ex.stripLabel);
    return;
  }
  const row = mapOf(ex, head).subarray(q * k.nk, (q + 1) * k.nk);
  const top = topKeys(row, k.mask, q * k.nk, STRIP_MASS, STRIP_KEYS), m = top.weights[0] || 1;
  ex.stripLabel.append(d.createTextNode(`${k.query_axis}: `), tokenSpan(d, "ae-tok ae-query", k.queries[q]),
    d.createTextNode(` attends most to:`));
  const order = top.keys.map((j, n) => [j, top.weights[n]]).sort((a, b) => a[0] - b[0]);
  const spans = order.map(([j, w]) => {
    const span = tokenSpan(d, k.special[j] ? "ae-tok ae-special" : "ae-tok", k.keys[j]);
    span.dataset.i = String(j);
    span.dataset.w = String(w);
    span.title = `key ${j}: ${w.toFixed(4)}`;
    span.style.backgroundColor = rgba(ex.theme.primaryRgb, ((0.85 * w) / m).toFixed(3));
    span.classList.toggle("ae-on", !!ex.state.hover && ex.state.hover.k === j);
    return span;
  });
  const rest = el(d, "span", "ae-rest", `+ ${top.more} other keys: ${(100 * top.rest).toFixed(1)}% of the weight`);
  rest.dataset.rest = String(top.rest);
  ex.strip.replaceChildren(ex.stripLabel, ...spans, rest);
}

// how the reader points at a cell: a touch screen has nothing to hover (ex.touch)
function pointAt(ex) {
  return ex.touch ? "tap a cell" : "hover a cell or a token";
}

// the hovered cell's tooltip, unless a press or a click took it away (input.js)
export function drawTip(ex) {
  const s = ex.state, info = s.hover && !s.tipOff && cellInfo(ex, s.hover);
  if (!info) { ex.tip.hidden = true; return; }
  ex.tip.hidden = false;
  ex.tipMain.replaceChildren();
  const d = ex.doc;
  ex.tipMain.append(tokenSpan(d, "ae-tok", info.query_token), d.createTextNode(" → "),
    tokenSpan(d, "ae-tok", info.key_token), d.createTextNode(weightSuffix(info)));
  const k = ex.kind, kv = info.head !== null && k.group > 1 ? kvGroup(k, info.head) : null;
  const where = info.head === null ? ex.view.where
    : `${headName(ex.state.layer, info.head)}${kv ? ` (key/value head ${kv.g}, shared by heads ${kv.first}–${kv.last})` : ""}`;
  ex.tipSub.textContent = `query ${info.query} · key ${info.key} · ${where}${info.masked ? " · masked: the model cannot attend here" : ""}`;
  const [x, y] = ex.tipAt || [0, 0];
  const W = ex.stage.clientWidth;
  ex.tip.style.transform = `translate(${Math.min(x + 14, Math.max(0, W - ex.tip.offsetWidth - 4))}px, ${y + 16}px)`;
}

// what the tooltip and the status line write after "query → key": ": masked", or the weight to 4 decimals
// ("≈" where it came as one byte, q8), or nothing where the weight was not sent (NaN: data.js's weightless)
export function weightSuffix(info) {
  if (info.masked) return ": masked";
  if (Number.isNaN(info.weight)) return "";
  return `: ${info.approx ? "≈ " : ""}${info.weight.toFixed(4)}`;
}
