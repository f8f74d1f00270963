"""Recorded Cascadia playthroughs must replay identically (actions, scores, final market and bag)."""

from __future__ import annotations

import json

import pytest

from envs.cascadia.game import CascadiaGame
from tests.paths import GOLDEN


@pytest.mark.parametrize("name", ["cascadia_3p.json", "cascadia_1p.json"])
def test_golden_playthrough_replays(name):
    rec = json.loads((GOLDEN / name).read_text())
    g = CascadiaGame(**rec["options"])
    s = g.new_game(rec["seed"])
    for a in rec["actions"]:
        assert not g.is_over(s)
        g.step(s, a)
    assert g.is_over(s)
    assert [sh.as_dict() for sh in g.scores(s)] == rec["scores"]
    assert g.winners(s) == rec["winners"]
    assert s.market.tolist() == rec["final_market"] and s.bag.tolist() == rec["final_bag"]
