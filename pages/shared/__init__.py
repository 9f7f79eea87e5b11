"""What the pages share, one module per concern (models, URL state, text, display, projector, explorer)."""
