"""Serve the app (app.py) as Streamlit would, with one addition: a page opened by its own address
(a reload, a shared link, a bookmark) connects without Streamlit's base-path probe.

    streamlit run serve.py        # what `make run` does; `streamlit run app.py` also works, slower

Streamlit's front end does not know whether ``/<name>`` is a page of the app or the app's base path,
so it first asks ``/<name>/_stcore/health`` (a 404 here) and asks ``/`` only after a fixed 100 ms
retry delay: every page but the start page paid ~100-150 ms on each reload (docs/RESULTS.md). The
server knows its pages, so for the HTML of a page address it tells the front end where the app
lives (``window.__streamlit.BACKEND_BASE_URL``, the hook Streamlit reads for hosts that embed it):
the address minus its last part, which is exactly where the probe would have connected. Anything
else, the start page included, is passed through untouched.
"""

from __future__ import annotations

import logging
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware
from streamlit import config

from pages import PAGES

ROOT = Path(__file__).resolve().parent
# every page address of the registry (pages/__init__.py), which app.py routes
PAGE_PATHS = frozenset(p.address for p in PAGES)
# Runs before Streamlit's script: the base is the page address minus its last part, resolved in the
# browser (behind a proxy that adds a prefix, the server never sees that prefix).
BASE_SCRIPT = (
    "<script>(function(){var p=location.pathname.replace(/\\/+$/,'');"
    "window.__streamlit=Object.assign({},window.__streamlit,"
    "{BACKEND_BASE_URL:location.origin+p.slice(0,p.lastIndexOf('/')+1)});})();</script>"
)
MARKER = b'<script type="module"'


def page_of(path: str, base_url_path: str, pages: frozenset[str] = PAGE_PATHS) -> str | None:
    """The page a request path opens (``/classifier`` -> ``"classifier"``), or None for anything else
    (the start page ``/``, assets, ``_stcore`` endpoints, unknown names)."""
    base = "/" + base_url_path.strip("/") if base_url_path.strip("/") else ""
    if base and not path.startswith(base + "/"):
        return None
    name = path[len(base) :].strip("/")
    return name if name in pages else None


def with_base(html: bytes) -> bytes:
    """``html`` (Streamlit's index.html) with :data:`BASE_SCRIPT` before its first module script."""
    at = html.find(MARKER)
    return html if at < 0 else html[:at] + BASE_SCRIPT.encode() + html[at:]


class PageBase:
    """ASGI middleware: a GET of a page's address gets Streamlit's index.html with :data:`BASE_SCRIPT`."""

    def __init__(self, app, pages: frozenset[str] = PAGE_PATHS) -> None:
        self.app, self.pages = app, pages

    async def __call__(self, scope, receive, send) -> None:
        base_url_path = config.get_option("server.baseUrlPath") or ""
        if (
            scope["type"] != "http"
            or scope["method"] != "GET"
            or page_of(scope["path"], base_url_path, self.pages) is None
        ):
            await self.app(scope, receive, send)
            return
        # the plain file, never a 304 or a compressed body: the page's HTML is a few kilobytes
        drop = {b"accept-encoding", b"if-none-match", b"if-modified-since"}
        scope = dict(scope, headers=[(k, v) for k, v in scope["headers"] if k.lower() not in drop])
        start: dict = {}
        chunks: list[bytes] = []

        async def collect(message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = b"".join(chunks)
            headers = [
                (k, v)
                for k, v in start.get("headers", [])
                if k.lower() not in {b"content-length", b"etag", b"last-modified"}
            ]
            html = any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers)
            if start.get("status") == 200 and html:
                body = with_base(body)
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, collect)


def declare_router() -> None:
    """Tell Streamlit, before any session, that this app routes with ``st.navigation``.

    Streamlit decides once per process, when its first session starts, whether the entry script's
    sibling ``pages/`` folder is a legacy multipage app; the public rule is that an app calling
    ``st.navigation`` is not one, but app.py's call comes only after that first decision. So the first
    request of a fresh server (every Community Cloud wake) ran the legacy mode, which knows none of our
    pages: a page address got "Page not found. Running the app's main page." before the router took over
    (tests/browser/test_fresh_server.py). Calling ``st.navigation`` here, at start-up and outside any
    script run, applies that rule from the first request: no page runs and nothing is sent (with no
    session Streamlit only returns the default page). Its "missing ScriptRunContext" warnings, which say
    exactly that, are kept out of the log."""
    quiet = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        st.navigation([st.Page(ROOT / "app.py", default=True)], position="hidden")
    finally:
        quiet.setLevel(level)


declare_router()
app = st.App(ROOT / "app.py", middleware=[Middleware(PageBase)])
