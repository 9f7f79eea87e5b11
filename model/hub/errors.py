"""The one exception a Hugging Face model raises when it cannot be opened or run."""

from __future__ import annotations


class HubError(Exception):
    """A model id, folder or input that cannot be used; ``str(err)`` is the message to show the user,
    saying what happened and what to do instead."""
