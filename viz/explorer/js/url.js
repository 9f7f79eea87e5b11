// The view in the address bar, under the page's prefix (viz/explorer/state.py reads the same keys on
// the server): read when an explorer first mounts, written shortly after each change with
// history.replaceState, which sends nothing to the server, and never on a page the user has left.

const URL_FIELDS = ["kind", "layer", "head", "view"];
const URL_DELAY_MS = 120;  // a held key writes once

export function readUrl(win, prefix) {
  if (!prefix) return {};
  const params = new URLSearchParams(win.location.search), out = {};
  for (const f of URL_FIELDS) {
    const v = params.get(prefix + f);
    if (v !== null) out[f] = v;
  }
  return out;
}

export function scheduleUrl(ex) {
  if (!ex.prefix) return;
  if (ex.urlTimer) ex.win.clearTimeout(ex.urlTimer);
  ex.urlTimer = ex.win.setTimeout(() => writeUrl(ex), URL_DELAY_MS);
}

// a write still waiting, done now (before a rerun reads the URL, or the explorer goes away)
export function flushUrl(ex) {
  if (ex.urlTimer) { ex.win.clearTimeout(ex.urlTimer); writeUrl(ex); }
}

function writeUrl(ex) {
  ex.urlTimer = 0;
  if (!ex.prefix || !ex.state || !ex.root.isConnected) return;
  const loc = ex.win.location, params = new URLSearchParams(loc.search);
  if (loc.pathname !== ex.path) return;  // the user has moved to another page meanwhile
  for (const f of URL_FIELDS) params.set(ex.prefix + f, String(ex.state[f]));
  const search = `?${params.toString()}`;
  if (search === loc.search) return;
  try {  // replaceState changes the address bar only: no navigation, no message to the server
    ex.win.history.replaceState(ex.win.history.state, "", `${loc.pathname}${search}${loc.hash}`);
  } catch (err) { /* a file:// page may refuse; the view works without it */ }
}
