"""Connected components, union-find, the game and agent registries."""

import numpy as np
import pytest

from agents.base import make_agent, parse_agent_spec
from envs.core.components import label_components, square_neighbors, uf_find, uf_union
from envs.core.errors import ConfigError
from envs.core.hexgrid import HEX_DIRECTIONS, opposite, window_index, window_neighbors
from envs.core.registry import make_game


def test_label_components_on_a_square_grid():
    values = np.array([1, 1, -1,
                       -1, 1, 2,
                       2, -1, 2], dtype=np.int8)
    labels = np.empty(9, dtype=np.int32)
    count = label_components(values, square_neighbors(3, 3), labels, np.empty(9, dtype=np.int32))
    assert count == 3  # the 1s, the right 2s, the lone 2 at the bottom left
    assert labels[0] == labels[1] == labels[4]
    assert labels[5] == labels[8] != labels[6]
    assert labels[2] == -1


def test_union_find_merges_and_tracks_size():
    parent = np.arange(5)
    size = np.ones(5, dtype=np.int64)
    uf_union(parent, size, 0, 1)
    root = uf_union(parent, size, 3, 1)
    assert uf_find(parent, 0) == uf_find(parent, 3) == root
    assert size[root] == 3
    assert uf_find(parent, 4) == 4


def test_hex_window_neighbours_are_symmetric():
    table = window_neighbors(2)
    for cell in range(table.shape[0]):
        for k in range(6):
            nb = table[cell, k]
            if nb >= 0:
                assert table[nb, opposite(k)] == cell
    centre = window_index(0, 0, 2)
    assert (table[centre] >= 0).all() and len(HEX_DIRECTIONS) == 6


def test_unknown_game_and_agent_give_clear_errors():
    with pytest.raises(ConfigError, match="unknown game 'chess'"):
        make_game("chess")
    with pytest.raises(ConfigError, match="unknown agent 'alphazero'"):
        make_agent("alphazero", game=None)


def test_agent_spec_parsing():
    assert parse_agent_spec("mcts:simulations=400,rollout=greedy,c=1.5,prior=true") == (
        "mcts", {"simulations": 400, "rollout": "greedy", "c": 1.5, "prior": True})
    with pytest.raises(ConfigError, match="key=value"):
        parse_agent_spec("mcts:simulations")
