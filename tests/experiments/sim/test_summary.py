"""The simulation summary lists a game's score categories in the game's own order."""

from __future__ import annotations

import numpy as np

from envs.core.registry import make_game
from experiments.eval.stats import Moments
from experiments.sim.summary import merge_records


def _record(categories: dict[str, float]) -> dict:
    return {"games": 2, "seats": [{"total": Moments.of(np.array([1.0, 3.0])).__dict__,
                                   "categories": categories, "win": None}]}


def test_categories_follow_the_given_order_then_names():
    records = [_record({"winter_total": 4.0, "autumn_total": 2.0, "spring_total": 6.0, "extra": 1.0})]
    order = ["spring_total", "summer_total", "autumn_total", "winter_total"]
    summary = merge_records(records, ["random"], order)
    names = list(summary["seats"][0]["categories"])
    assert names == ["spring_total", "autumn_total", "winter_total", "extra"]
    assert summary["seats"][0]["categories"]["spring_total"] == 3.0  # a mean over the 2 games
    assert list(merge_records(records, ["random"])["seats"][0]["categories"])[:2] == ["autumn_total", "extra"]


def test_cartographers_seasons_come_in_game_order():
    game = make_game("cartographers")
    order = list(game.scores(game.new_game(0))[0].categories)
    seasons = [name.split("_")[0] for name in order if name.endswith("_total")]
    assert seasons == ["spring", "summer", "autumn", "winter"]
