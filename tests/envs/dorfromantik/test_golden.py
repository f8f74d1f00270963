"""Replay the recorded golden playthrough: same tiles drawn, same legal actions, same final score."""

from __future__ import annotations

import json

from envs.dorfromantik.game import DorfromantikGame
from tests.paths import GOLDEN

GOLDEN_GAME = GOLDEN / "dorfromantik_seed7.json"


def test_golden_playthrough_replays():
    record = json.loads(GOLDEN_GAME.read_text())
    game = DorfromantikGame(**record["options"])
    state = game.new_game(record["seed"])
    for action, tile_id in zip(record["actions"], record["drawn"], strict=True):
        assert game.drawn_tile(state)["id"] == tile_id
        game.step(state, action)
    assert game.is_over(state)
    assert game.breakdown(state) == record["final"]
    assert [[t["type"], t["target"], t["status"]] for t in game.tasks(state)] == record["tasks"]
