// The views' registry: the one list of them, in the order of their tabs. A view says in its own module
// its key, when it is available, how it draws, hit-tests, handles the mouse and keys and exports to
// SVG (view.js lists what a view may say); adding one means writing its module and adding it here.
// Nothing outside this module and the views' own modules names a view: the rest asks the shown view.

import { gridView } from "./grid.js";
import { heatmapView } from "./heatmap.js";
import { linesView } from "./lines.js";
import { meanView } from "./mean.js";
import { rolloutView } from "./rollout.js";

export const VIEWS = [heatmapView, linesView, gridView, meanView, rolloutView];
const BY_KEY = new Map(VIEWS.map((v) => [v.key, v]));

// the view called `key` (the first view for an unknown key)
export function viewOf(key) {
  return BY_KEY.get(key) || VIEWS[0];
}

// the view that `key` names as kind `kind` (a name) of this run can show it: an unknown view, or one
// the run has no tab for, is the first view that can; one unavailable for the kind is the view it
// names instead
export function viewFor(ex, key, kind) {
  const v = BY_KEY.get(key), can = (w) => w.listed(ex) && w.available(ex, kind);
  if (v && v.listed(ex) && !v.available(ex, kind) && v.instead) return v.instead;
  return v && can(v) ? v : VIEWS.find(can) || VIEWS[0];
}

// the views this run has a tab for, in the registry's order
export function listedViews(ex) {
  return VIEWS.filter((v) => v.listed(ex));
}

// the panes: one pair of canvases per pane name the views draw on, in the order views first use them
export function paneNames() {
  return [...new Set(VIEWS.map((v) => v.pane))];
}

// every view's hook `name`, called with the explorer, whether that view is the shown one (none before
// the first run) and `args`; what the calls return, in the registry's order (a view without the hook
// is left out)
export function eachView(ex, name, ...args) {
  const shown = ex.state ? ex.view : null, out = [];
  for (const v of VIEWS) if (v[name]) out.push(v[name](ex, v === shown, ...args));
  return out;
}
