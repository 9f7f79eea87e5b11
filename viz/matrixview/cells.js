// How a cell of the matrix view looks, on the page (matrixview.js) and in its SVG file (svg.js): its colour
// along the scale's stops, its ink and its printed number.

export function hexRgb(h) {
  return [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
}

// A colour for t in [0, 1] along the stops, as [r, g, b], rounded as the explorer's colour table is
// (viz/explorer/js/theme.js), so a weight is the same colour in both.
export function along(stops, t) {
  const x = Math.min(Math.max(t, 0), 1) * (stops.length - 1);
  const j = Math.min(Math.floor(x), stops.length - 2), f = x - j;
  return stops[j].map((c, i) => Math.round(c + f * (stops[j + 1][i] - c)));
}

// Dark text on light cells, light text on dark ones (relative luminance).
export function ink([r, g, b]) {
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 140 ? "#1a1a1a" : "#ffffff";
}

// "-0.0000" never shows: a tiny negative prints as zero.
export function fmt(x, decimals) {
  const s = x.toFixed(decimals);
  return Number(s) === 0 ? (0).toFixed(decimals) : s;
}
