// What hovering reads out: the token strip (the keys, tinted by how much the hovered query attends to
// each), the tooltip of the hovered cell and, in the grid view, the peek at the hovered head.

import { el, sizeCanvas, tokenSpan } from "./dom.js";
import { cellInfo, mapOf } from "./state.js";
import { mapImage, rgba } from "./theme.js";

export function buildReadouts(ex) {
  const d = ex.doc;
  ex.strip = el(d, "div", "ae-strip");
  ex.tip = el(d, "div", "ae-tip");
  ex.tipMain = el(d, "div", "ae-tip-main");
  ex.tipSub = el(d, "div", "ae-tip-sub");
  ex.tip.append(ex.tipMain, ex.tipSub);
  ex.peek = el(d, "div", "ae-peek");
  ex.peekCanvas = el(d, "canvas");
  ex.peekCaption = el(d, "div", "ae-peek-caption");
  ex.peek.append(ex.peekCanvas, ex.peekCaption);
}

export function drawStrip(ex) {
  const s = ex.state, k = ex.kind, d = ex.doc, t = s.token;
  const q = s.hover ? s.hover.q : t && t.side === "q" ? t.i : s.sel ? s.sel.q : null;
  const head = s.hover && s.hover.head !== undefined ? s.hover.head : undefined;
  const key = `${k.name}|${s.view}|${s.layer}|${s.head}|${head}|${q}|${t ? t.side + t.i : ""}|${s.hover ? s.hover.k : ""}|${ex.theme.primary}`;
  if (key === ex.stripKey) return;
  ex.stripKey = key;
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
    span.style.backgroundColor = visible ? rgba(ex.theme.primaryRgb, ((0.85 * row[j]) / (m || 1)).toFixed(3)) : "";
    span.classList.toggle("ae-masked", !!row && !visible);
    span.classList.toggle("ae-on", (t && t.side === "k" && t.i === j) || (!!s.hover && s.hover.k === j) ||
      (!!t && t.side === "q" && k.sameTokens && t.i === j));
  }
  ex.stripLabel.textContent = q === null ? `${k.key_axis}: hover a cell or a token to see what its query attends to`
    : `${k.query_axis}: `;
  if (q !== null) {
    const who = tokenSpan(d, "ae-tok ae-query", k.queries[q]);
    ex.stripLabel.append(who, d.createTextNode(" attends to"));
  }
}

export function drawTip(ex) {
  const s = ex.state, info = s.hover && cellInfo(ex, s.hover);
  const p = s.peek, lay = ex.layout;
  ex.peek.hidden = !p || !lay || lay.type !== "grid";
  if (!ex.peek.hidden) drawPeek(ex, p);
  if (!info) { ex.tip.hidden = true; return; }
  ex.tip.hidden = false;
  ex.tipMain.replaceChildren();
  const d = ex.doc;
  ex.tipMain.append(tokenSpan(d, "ae-tok", info.query_token), d.createTextNode(" → "),
    tokenSpan(d, "ae-tok", info.key_token), d.createTextNode(info.masked ? ": masked" : `: ${info.weight.toFixed(4)}`));
  const where = info.head === null ? (s.view === "mean" ? "mean of the heads" : "rollout") : `head ${info.head}`;
  ex.tipSub.textContent = `query ${info.query} · key ${info.key} · ${where}${info.masked ? " · masked: the model cannot attend here" : ""}`;
  const [x, y] = ex.tipAt || [0, 0];
  const W = ex.stage.clientWidth;
  ex.tip.style.transform = `translate(${Math.min(x + 14, Math.max(0, W - ex.tip.offsetWidth - 4))}px, ${y + 16}px)`;
}

function drawPeek(ex, p) {
  const k = ex.kind, size = Math.round(200 * ex.theme.s);
  const ctx = sizeCanvas(ex.peekCanvas, size, size);
  ctx.imageSmoothingEnabled = k.nk > size;
  ctx.drawImage(mapImage(ex, k, `h${p.layer}.${p.head}`, k.head(p.layer, p.head)), 0, 0, size, size);
  ex.peekCaption.textContent = `layer ${p.layer} · head ${p.head} · click to open`;
  const lay = ex.layout, x = lay.x0 + (p.head + 1) * (lay.thumb + lay.gap), y = lay.y0 + p.layer * (lay.thumb + lay.gap);
  const W = ex.stage.clientWidth, left = x + size + 12 < W ? x + 4 : Math.max(0, x - lay.thumb - size - 16);
  ex.peek.style.transform = `translate(${left}px, ${y}px)`;
}
