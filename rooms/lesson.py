"""Lesson links: a page's state (its URL keys: the input, the model, the explorer's view) pinned into one
signed token, with an optional expiry. No Streamlit, no torch: ``pages/router/lesson.py`` reads the secret
and puts the token on a page.

The token is ``v1.<payload>.<signature>``: the payload is the JSON ``{"p": page, "q": {key: value},
"e": expiry}`` in base64url, the signature HMAC-SHA256 over ``"v1." + payload`` under the server's
secret, in base64url. Why these choices:

* **Signed, not encrypted.** The state in a lesson link is what the page's own URL shows anyway; the
  signature only makes sure that what a student opens is what the teacher pinned, and that the expiry
  cannot be pushed back by editing the link. HMAC-SHA256 from the standard library needs no package.
* **The whole state in the token**, no server-side store: a link keeps working across processes and
  restarts as long as the secret does (several app processes share it through the environment or
  Streamlit's secrets), and a room store is not needed for a lesson.
* **Expiry as a Unix time in the signed payload**, checked after the signature, so a changed expiry
  reads as a changed link; ``None`` means the link never expires. A small leeway (:data:`LEEWAY_S`)
  forgives clocks of several processes that differ by a little.
* **Bounded**: a token longer than :data:`MAX_TOKEN` characters (browsers and proxies cut long URLs)
  is refused when it is made, so a link that works for the teacher works for the students.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

VERSION = "v1"
MAX_TOKEN = 6000  # characters: the URL stays well under the 8 KB that proxies commonly allow
LEEWAY_S = 30  # seconds an expired link still opens: clocks of several app processes differ a little


class LessonError(ValueError):
    """A token that does not open: ``reason`` is "malformed", "tampered" or "expired" (then ``expired_at``
    is when)."""

    def __init__(self, reason: str, message: str, expired_at: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.expired_at = expired_at


@dataclass(frozen=True)
class Lesson:
    """One pinned page: its URL path (``page``), its URL keys and values (``params``), and when the
    link stops working (Unix seconds, or None for never)."""

    page: str
    params: Mapping[str, str] = field(default_factory=dict)
    expires: int | None = None


def sign(lesson: Lesson, secret: bytes) -> str:
    """The token for ``lesson`` under ``secret``. Raises ValueError when it would be too long for a URL
    (:data:`MAX_TOKEN`) or the secret is empty."""
    if not secret:
        raise ValueError("a lesson link needs a non-empty secret")
    body = {"p": str(lesson.page), "q": {str(k): str(v) for k, v in lesson.params.items()}, "e": lesson.expires}
    payload = _b64(json.dumps(body, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8"))
    token = f"{VERSION}.{payload}.{_b64(_mac(secret, payload))}"
    if len(token) > MAX_TOKEN:
        raise ValueError(
            f"this page's state makes a link of {len(token):,} characters (at most {MAX_TOKEN:,}): use a shorter input"
        )
    return token


def verify(token: str, secret: bytes, now: float | None = None) -> Lesson:
    """The lesson ``token`` pins, if it was signed with ``secret`` and has not expired at ``now`` (default:
    the current time). Raises :class:`LessonError` saying which of the three it is not."""
    parts = token.split(".") if isinstance(token, str) and len(token) <= MAX_TOKEN else []
    if len(parts) != 3 or parts[0] != VERSION:
        raise LessonError("malformed", "This is not a lesson link (it may have been cut when it was copied).")
    _, payload, signature = parts
    try:
        given = _unb64(signature)
    except ValueError:
        given = b""
    if not hmac.compare_digest(given, _mac(secret, payload)):
        raise LessonError(
            "tampered",
            "This lesson link is not valid: it was changed after it was made, or made by another server "
            "(or before this one restarted).",
        )
    try:
        body = json.loads(_unb64(payload).decode("utf-8"))
        lesson = Lesson(page=body["p"], params=dict(body["q"]), expires=body["e"])
    except (ValueError, KeyError, TypeError) as err:  # signed by us, so only a bug gets here
        raise LessonError("malformed", "This lesson link could not be read.") from err
    if not isinstance(lesson.page, str) or not all(isinstance(v, str) for v in lesson.params.values()):
        raise LessonError("malformed", "This lesson link could not be read.")
    now = time.time() if now is None else now
    if lesson.expires is not None and now > lesson.expires + LEEWAY_S:
        raise LessonError("expired", "This lesson link has expired.", expired_at=int(lesson.expires))
    return lesson


def _mac(secret: bytes, payload: str) -> bytes:
    return hmac.new(secret, f"{VERSION}.{payload}".encode("ascii", "replace"), hashlib.sha256).digest()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as err:
        raise ValueError("not base64url") from err
