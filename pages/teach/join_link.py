"""The Classroom's join link as the students' devices can open it. The teacher's browser may show the
app at ``127.0.0.1`` or ``localhost`` (``make run`` serves on loopback by default), an address that
names each phone itself; the link is then built from this machine's address on the local network, and
when the server listens on loopback only, no other device can reach it at all: the teacher is told
what to run instead (before a room is made), and no link or QR code is shown until it can be opened. No streamlit here but :func:`listen_address`."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

RESTART = "make run HOST=0.0.0.0"  # what the teacher runs so that other devices can reach the app
ALL_INTERFACES = {"", "0.0.0.0", "::", "[::]"}


@dataclass(frozen=True)
class JoinLink:
    url: str  # what the QR code and the shown link carry
    reachable: bool  # whether a student's device can open it as the app runs now
    problem: str = ""  # when not reachable: what the teacher should do, as Markdown


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (a name or an address) names the device it is typed on: a loopback name or address,
    or an unspecified one (``http://0.0.0.0:8501`` opens this machine in a browser, a phone's own elsewhere)."""
    host = (host or "").strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def lan_address() -> str | None:
    """This machine's address on its local network (the interface its default route leaves by), or None.
    A UDP socket's connect sends nothing; it only picks the interface."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere, but it selects a route
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if is_loopback(address) else address


def listen_address() -> str:
    """The address the Streamlit server listens on ("" when unset: every interface)."""
    import streamlit as st

    return str(st.get_option("server.address") or "")


def _with_host(url: str, host: str) -> str:
    parts = urlsplit(url)
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def join_link(url: str, listen: str, lan: str | None) -> JoinLink:
    """The link students should open for ``url`` (the page as the teacher's browser shows it), given the
    address the server ``listen``s on and this machine's ``lan`` address."""
    host = urlsplit(url).hostname
    if not is_loopback(host):  # the teacher opened the app by a name or address others can use too
        return JoinLink(url, True)
    everywhere = listen in ALL_INTERFACES
    if not everywhere and not is_loopback(listen):  # one network address only: that one
        return JoinLink(_with_host(url, listen), True)
    shared = _with_host(url, lan) if lan else url
    # The problems name no address to share: a link or QR code is shown only once other devices can open it.
    if not everywhere:  # loopback only
        return JoinLink(
            shared,
            False,
            f"**Students cannot join yet.** The app listens on {listen} (this computer only), so no phone or "
            f"laptop can reach it. Stop it and start it again with `{RESTART}`: this page then shows the link "
            "to share and its QR code. Every device must be on the same network as this computer.",
        )
    if lan is None:
        return JoinLink(
            url,
            False,
            f"**Students cannot join yet.** This page's address names {host}, which every device reads as itself, "
            "and this computer has no address on a local network. Connect it to the room's network (Wi-Fi), then "
            "reload this page: it then shows the link to share and its QR code.",
        )
    return JoinLink(shared, True)
