"""Pretrained Hugging Face transformers (from the Hub or a folder) in the attention explorer:
load (:mod:`model.hub.load`, fetching through :mod:`model.hub.download`), run and generate (:mod:`model.hub.run`), explain one weight
(:mod:`model.hub.explain`) and readable tokens (:mod:`model.hub.tokens`). Errors are
:class:`HubError` with a message for the user. Nothing here imports streamlit."""

from model.hub.errors import HubError

__all__ = ["HubError"]
