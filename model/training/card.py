"""A model card's first line: how a shipped checkpoint was trained, read from its own config.json.

``python -m model train ... --card "..."`` records the recipe in words (the data, the objective, where the
weights started); the settings and measured times the training loop records beside it fill in the rest,
so the line never states a number the run did not produce.
"""

from __future__ import annotations

from typing import Any


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


def card_line(training: dict[str, Any]) -> str:
    """One sentence: the recorded recipe, then steps, wall time, device and parameter count as recorded.
    Empty when ``training`` (config.json's ``training``) records nothing."""
    if not training:
        return ""
    history = [h for h in training.get("history") or [] if isinstance(h, dict)]
    last = history[-1] if history else {}
    recipe = str(training.get("card") or "").strip()
    if not recipe:
        start = f"fine-tuned from {training['init_from']}" if training.get("init_from") else "trained from scratch"
        recipe = start[0].upper() + start[1:]
    facts = []
    if "step" in last:
        facts.append(f"{int(last['step']):,} steps")
    if "seconds" in last:
        facts.append(
            _minutes(float(last["seconds"])) + (f" on {training['device_name']}" if training.get("device_name") else "")
        )
    if training.get("params"):
        facts.append(f"{int(training['params']):,} parameters")
    return recipe.rstrip(".") + (f" ({', '.join(facts)})." if facts else ".")
