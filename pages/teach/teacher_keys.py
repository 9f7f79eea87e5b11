"""The teacher's keys, kept in the teacher's own browser: one cookie per room it runs, named after the
room's code and holding the room's teacher secret. A reload, a second tab of the same browser (the
projector screen) or the app coming back after a restart opens a new session; that session reads the
cookies its browser sent (``st.context.cookies``), checks each against the store and takes control of
those rooms again. Students never see the secret: it is in no address, no QR code and on no projected
screen, and a cookie is only ever sent back to this app by the browser that holds it.

Streamlit cannot set a cookie from Python, so a tiny components v2 element sets them in the browser
(``document.cookie``); the page draws it wherever this session runs a room. A cookie lives
``KEEP_S`` seconds after the room was last shown, past the room's own expiry; a room gone from the store
is simply not taken back."""

from __future__ import annotations

import re
from collections.abc import Mapping

import streamlit as st

from rooms.rules import CODE_ALPHABET, CODE_LENGTH, ROOM_TTL_S

COOKIE_PREFIX = "attention_room_teacher_"
KEEP_S = ROOM_TTL_S + 3600  # a little past the room's own idle expiry
# What a cookie may hold: a code of the room alphabet, and a secret as secrets.token_urlsafe writes it.
# Anything else (a cookie edited by hand) is ignored, and never written back into a script.
_NAME = re.compile(f"^{COOKIE_PREFIX}([{CODE_ALPHABET}]{{{CODE_LENGTH}}})$")
_SECRET = re.compile(r"^[A-Za-z0-9_-]{16,128}$")

# One cookie per [name, value, max-age]; SameSite=Strict so no other site's page sends it, Secure where
# the app is served over https. Its values pass the patterns above, so nothing needs escaping.
_JS = """export default function ({ data }) {
  const secure = window.location.protocol === "https:" ? "; Secure" : "";
  for (const [name, value, age] of (data && data.cookies) || []) {
    document.cookie = `${name}=${value}; Max-Age=${age}; Path=/; SameSite=Strict${secure}`;
  }
}"""
_component = st.components.v2.component("room_teacher_keys", js=_JS)


def cookie_name(code: str) -> str:
    return COOKIE_PREFIX + code


def read_keys(cookies: Mapping[str, str]) -> dict[str, str]:
    """The rooms a browser holds keys for, from its cookies: code -> secret (unchecked)."""
    keys = {}
    for name, value in cookies.items():
        match = _NAME.match(name)
        if match and _SECRET.match(value or ""):
            keys[match.group(1)] = value
    return keys


def browser_cookies() -> Mapping[str, str]:
    """The cookies this session's browser sent when it connected (tests replace this)."""
    return st.context.cookies


def browser_keys() -> dict[str, str]:
    """The rooms this browser holds a teacher key for: code -> secret, as the browser sent them."""
    return read_keys(browser_cookies())


def keep_keys(keys: Mapping[str, str], *, forget: tuple[str, ...] = ()) -> None:
    """Have the browser keep ``keys`` (code -> secret) and drop the rooms in ``forget``; draws nothing."""
    cookies = [[cookie_name(code), secret, KEEP_S] for code, secret in sorted(keys.items()) if _SECRET.match(secret)]
    cookies += [[cookie_name(code), "", 0] for code in forget]
    if cookies:
        _component(key="cr_teacher_keys", data={"cookies": cookies}, height=0)
