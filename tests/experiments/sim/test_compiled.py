"""simulate's compiled game loops give the rows the Python engine gives, for every game and seat
count they cover; other agents and games fall back to the Python engine."""

from __future__ import annotations

import pytest

from envs.core.registry import make_game
from experiments.sim.compiled import play_columns
from experiments.sim.simulate import SimulationSpec, python_columns, run_simulation

CASES = [("cartographers", p) for p in range(1, 7)] + [("cascadia", p) for p in range(1, 5)] \
    + [("dorfromantik", p) for p in (1, 2, 4)]


@pytest.mark.parametrize(("game_name", "players"), CASES)
def test_compiled_random_rows_equal_the_python_engine(game_name, players):
    game = make_game(game_name, players=players)
    agents = ["random"] * players
    agents[-1] = "random:label=other"  # a label changes the name in the rows, not the play
    seeds = [0, 1, 2, 977]
    compiled = play_columns(game, agents, seeds, 3)
    assert compiled is not None
    assert compiled == python_columns(game, agents, seeds, 3)
    assert set(compiled["agent"]) == ({"random", "other"} if players > 1 else {"other"})


@pytest.mark.parametrize("players", range(1, 7))
def test_compiled_greedy_cartographers_rows_equal_the_python_engine(players):
    game = make_game("cartographers", players=players)
    agents = ["greedy", "random", "greedy:future=0.8,hole=1.5", "greedy", "random", "greedy"][:players]
    seeds = [0, 5, 31]
    compiled = play_columns(game, agents, seeds, 0)
    assert compiled is not None
    assert compiled == python_columns(game, agents, seeds, 0)


@pytest.mark.parametrize("players", range(1, 5))
def test_compiled_greedy_cascadia_rows_equal_the_python_engine(players):
    game = make_game("cascadia", players=players)
    agents = ["greedy", "random", "greedy:hawk_room=0.6,edge_match=0.5", "greedy"][:players]
    compiled = play_columns(game, agents, [0, 3], 0)
    assert compiled is not None and compiled == python_columns(game, agents, [0, 3], 0)


@pytest.mark.parametrize(("players", "window_radius"), [(1, 15), (2, 15), (3, 15), (4, 4), (6, 15)])
def test_compiled_dorfromantik_rows_equal_the_python_engine(players, window_radius):
    # window_radius 4: the board outgrows the window, so centring on the legal positions and
    # placements outside the window are exercised too
    game = make_game("dorfromantik", players=players, window_radius=window_radius)
    mixed = (["greedy", "random:label=r", "greedy:fail=1.2"] + ["greedy"] * 3)[:players]
    for agents in (["random"] * players, mixed):
        compiled = play_columns(game, agents, [0, 7], 1)
        assert compiled is not None and compiled == python_columns(game, agents, [0, 7], 1)


@pytest.mark.parametrize(("game_name", "agents"), [
    ("cartographers", ["mcts:simulations=4"]),
    ("dorfromantik", ["mcts:simulations=2"]),
])
def test_other_agents_and_games_fall_back_to_the_python_engine(game_name, agents):
    game = make_game(game_name, players=len(agents))
    assert play_columns(game, agents, [0], 0) is None


def test_simulate_files_are_the_same_with_either_engine(ray_session, tmp_path):
    spec = SimulationSpec(game="cartographers", agents=["random", "random"], games=12, seed=5, chunk=5,
                          options={"players": 2})
    run_simulation(spec, tmp_path / "auto", workers=2, progress=False)
    run_simulation(spec, tmp_path / "python", workers=2, progress=False, engine="python")
    files = [{p.name: p.read_bytes() for p in sorted((tmp_path / d).glob("chunk_*"))}
             for d in ("auto", "python")]
    assert len(files[0]) == 6 and files[0] == files[1]
