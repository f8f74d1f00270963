"""The data file's coin track length caps the coins in the Python engine and the compiled loops."""

from __future__ import annotations

import re

import numpy as np
import pytest

from envs.cartographers import kernels as K
from envs.cartographers.data import DEFAULT_PATH
from envs.cartographers.game import CartographersGame
from envs.core.errors import ConfigError
from tests.envs.cartographers.test_engine_rules import at_card


def game_with_track(tmp_path, spaces: int, **options) -> CartographersGame:
    text = DEFAULT_PATH.read_text(encoding="utf-8")
    text, found = re.subn(r"(?m)^(coin_track:\n  spaces:) 14$", rf"\1 {spaces}", text)
    assert found == 1
    path = tmp_path / "cartographers.yaml"
    path.write_text(text, encoding="utf-8")
    return CartographersGame(data_path=str(path), cards=(0, 4, 8, 12), **options)


def coins_after_farmlands(g: CartographersGame, n: int) -> int:
    """Coins after drawing ``n`` Farmland dominoes with the coin option, one per free spot."""
    s = g.new_game(0)
    for i in range(n):
        at_card(g, s, "Farmland")
        g.step(s, g.encode_action("place", (3 + 3 * (i // 11), i % 11), terrain=0, shape=0, orientation=0))
    return int(s.coins[0])


def test_coin_track_spaces_cap_the_coins(tmp_path):
    g = game_with_track(tmp_path, 5)
    assert g.coin_cap == 5 and g.data.coin_spaces == 5
    assert coins_after_farmlands(g, 8) == 5
    assert coins_after_farmlands(game_with_track(tmp_path, 5, coin_cap=7), 8) == 7   # explicit cap wins
    assert coins_after_farmlands(game_with_track(tmp_path, 5, coin_cap=None), 8) == 8
    assert CartographersGame().coin_cap == 14


def test_the_compiled_loop_keeps_the_track_cap(tmp_path):
    capped, free = game_with_track(tmp_path, 2), CartographersGame(cards=(0, 4, 8, 12), coin_cap=None)
    most = {"capped": 0, "free": 0}
    for seed in range(20):
        for name, g in (("capped", capped), ("free", free)):
            s = g.new_game(seed)
            K.play_random(s.arrays(), g.tb, np.array([seed + 1], np.uint64), np.zeros(0, np.int32))
            most[name] = max(most[name], int(s.coins[0]))
    assert most["capped"] == 2 < most["free"]


def test_a_bad_coin_cap_is_refused():
    with pytest.raises(ConfigError, match="coin_cap must be 'track', None or an integer"):
        CartographersGame(coin_cap="tracks")
