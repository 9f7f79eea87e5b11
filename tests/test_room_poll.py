"""How often a room's pages redraw without news (issue 52, the lecture): each device redraws its whole
page now and then to heal elements a clash of runs took away (``pages.teach.room_parts.watch``). A
workshop keeps the 12-second heal; a lecture's 250 devices heal at a bounded rate, so the server is not
redrawing 21 pages a second while it must redraw all 250 at the reveal."""

from __future__ import annotations

import pytest

from pages.teach.room_parts import HEAL_POLLS, HEAL_RUNS_S, POLL_S, heal_every


@pytest.mark.parametrize("participants", [0, 1, 2, 12, 30, 48])
def test_a_workshop_heals_every_twelve_seconds(participants):
    assert heal_every(participants) == HEAL_POLLS and HEAL_POLLS * POLL_S == 12


@pytest.mark.parametrize("participants", [49, 60, 120, 200, 250])
def test_a_larger_room_heals_at_most_a_few_pages_a_second(participants):
    every = heal_every(participants)
    assert participants / (POLL_S * every) <= HEAL_RUNS_S  # heal redraws a second, the room's devices together
    assert every > HEAL_POLLS and participants / (POLL_S * (every - 1)) > HEAL_RUNS_S  # and no rarer than that


def test_a_lecture_heals_each_device_about_once_a_minute():
    assert 55 <= heal_every(250) * POLL_S <= 70
