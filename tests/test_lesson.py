"""Lesson tokens (rooms/lesson.py): a round trip gives back the pinned page, state and expiry; any
change to the payload, the signature or the secret is refused as tampered; an expired link is refused
as expired (after the signature, so a pushed-back expiry reads as tampered); and the link built from
a teacher's address keeps only the page's own keys."""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from rooms.lesson import LEEWAY_S, MAX_TOKEN, Lesson, LessonError, sign, verify

SECRET = b"a secret for the tests"
LESSON = Lesson(
    page="classifier",
    params={"cls_text": "<script>alert(1)</script> & ü", "cls_kind": "encoder", "cls_layer": "1", "cls_view": "lines"},
    expires=2_000_000_000,
)


def payload_of(token: str) -> dict:
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def with_payload(token: str, body: dict) -> str:
    """``token`` with its payload replaced by ``body`` and its old signature kept."""
    v, _, sig = token.split(".")
    raw = json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
    return f"{v}.{base64.urlsafe_b64encode(raw).rstrip(b'=').decode()}.{sig}"


@pytest.mark.parametrize("expires", [2_000_000_000, None])
def test_round_trip(expires):
    lesson = Lesson(page=LESSON.page, params=LESSON.params, expires=expires)
    token = sign(lesson, SECRET)
    assert re.fullmatch(r"v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", token)  # URL-safe as it is
    assert verify(token, SECRET, now=1_900_000_000) == lesson
    assert sign(lesson, SECRET) == token  # the same state, the same link


@pytest.mark.parametrize(
    "change",
    [
        {"q": {**LESSON.params, "cls_layer": "0"}},  # another view
        {"p": "translator"},  # another page
        {"e": 2_100_000_000},  # a later expiry
        {"e": None},  # no expiry
    ],
)
def test_a_changed_payload_is_tampered(change):
    token = sign(LESSON, SECRET)
    forged = with_payload(token, {**payload_of(token), **change})
    with pytest.raises(LessonError) as err:
        verify(forged, SECRET, now=1_900_000_000)
    assert err.value.reason == "tampered" and "changed" in str(err.value)


def test_another_secret_or_signature_is_tampered():
    token = sign(LESSON, SECRET)
    v, payload, sig = token.split(".")
    flipped = sig[:-2] + ("A" if sig[-2] != "A" else "B") + sig[-1]
    for bad, secret in [(token, b"another secret"), (f"{v}.{payload}.{flipped}", SECRET), (f"{v}.{payload}.", SECRET)]:
        with pytest.raises(LessonError) as err:
            verify(bad, secret, now=0)
        assert err.value.reason == "tampered"


@pytest.mark.parametrize("bad", ["", "nonsense", "v2.abc.def", "v1.abc", "v1.a.b.c", "x" * (MAX_TOKEN + 1), None, 12])
def test_malformed_tokens_say_so(bad):
    with pytest.raises(LessonError) as err:
        verify(bad, SECRET)
    assert err.value.reason == "malformed"


def test_expiry():
    token = sign(LESSON, SECRET)
    assert verify(token, SECRET, now=LESSON.expires).page == "classifier"
    assert verify(token, SECRET, now=LESSON.expires + LEEWAY_S).page == "classifier"  # a clock a little behind
    with pytest.raises(LessonError) as err:
        verify(token, SECRET, now=LESSON.expires + LEEWAY_S + 1)
    assert err.value.reason == "expired" and err.value.expired_at == LESSON.expires


def test_too_long_a_state_is_refused_when_pinned():
    with pytest.raises(ValueError, match="at most"):
        sign(Lesson(page="hand", params={"hand_sentence": "x" * MAX_TOKEN}), SECRET)
    with pytest.raises(ValueError, match="secret"):
        sign(LESSON, b"")


def test_the_link_keeps_the_page_keys_only(monkeypatch):
    from pages.router import lesson as ui_lesson

    monkeypatch.setenv(ui_lesson.SECRET_ENV, SECRET.decode())
    href = (
        "http://127.0.0.1:8501/classifier?cls_text=a+%3Cb%3E&cls_layer=1&cls_view=grid&projector=1"
        "&tr_text=other&lesson=old"
    )
    link = ui_lesson.lesson_link(href, "classifier", ("cls_",), 3600, now=1_000)
    url = urlsplit(link)
    assert (url.scheme, url.netloc, url.path) == ("http", "127.0.0.1:8501", "/classifier")
    token = parse_qs(url.query)["lesson"][0]
    lesson = verify(token, SECRET, now=1_000)
    assert lesson == Lesson("classifier", {"cls_text": "a <b>", "cls_layer": "1", "cls_view": "grid"}, 4_600)
    assert ui_lesson.lesson_secret() == (SECRET, True)
    with pytest.raises(ValueError, match="not this page"):
        ui_lesson.lesson_link("http://127.0.0.1:8501/translator?cls_text=a", "classifier", ("cls_",), None)
    with pytest.raises(ValueError, match="not this page"):
        ui_lesson.lesson_link("javascript:alert(1)//classifier", "classifier", ("cls_",), None)


def test_without_a_configured_secret_the_process_has_its_own(monkeypatch):
    from pages.router import lesson as ui_lesson

    monkeypatch.delenv(ui_lesson.SECRET_ENV, raising=False)
    secret, lasting = ui_lesson.lesson_secret()
    assert not lasting and len(secret) == 32 and ui_lesson.lesson_secret()[0] == secret


def test_the_stylesheet_hides_inputs_under_the_prefixes_only():
    from pages.router.lesson import hide_inputs_css

    css = hide_inputs_css(("cls_", 'bad prefix"]{}', ""))
    assert css.startswith("<style>") and css.endswith("</style>")
    assert '.stElementContainer[class*="st-key-cls_"]:not(' in css and ':has([data-testid="stTextInput"])' in css
    assert '[class*="st-key-ws_guess_"]' in css  # a workshop student's answer stays
    assert "bad" not in css and 'st-key-"' not in css
    assert hide_inputs_css(()) == ""
