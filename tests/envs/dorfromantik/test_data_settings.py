"""The data file's setup numbers (set_aside_unseen, open_task_limit, forced_task_turns) drive the
Python engine, the kernels, the compiled loops and the reference; out-of-range or unknown keys are
refused with one line naming them."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from envs.core.errors import DataFileError
from envs.core.rng import new_stream
from envs.dorfromantik import kernels as K
from envs.dorfromantik.data import DEFAULT_PATH, NUM_LANDSCAPE, load_data
from envs.dorfromantik.game import DorfromantikGame
from envs.dorfromantik.reference import ReferenceGame


def data_file(tmp_path: Path, **settings: object) -> Path:
    """The bundled data file with the given top-level settings replaced (or added)."""
    text = DEFAULT_PATH.read_text(encoding="utf-8")
    for key, value in settings.items():
        line = f"{key}: {value}"
        text, found = re.subn(rf"(?m)^{key}:.*$", line, text)
        if not found:
            text = line + "\n" + text
    path = tmp_path / "dorfromantik.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def play_random(game: DorfromantikGame, seed: int) -> tuple[object, list[int]]:
    """A whole game through the Python engine with uniformly random legal placements; the tile
    placed at each turn."""
    state = game.new_game(seed)
    rng = np.random.default_rng(seed)
    tiles = []
    while not game.is_over(state):
        tiles.append(int(state.meta[K.M_DRAWN]))
        game.step(state, int(rng.choice(np.flatnonzero(game.legal_mask(state)))))
    return state, tiles


def test_set_aside_unseen_changes_how_many_landscape_tiles_are_played(tmp_path):
    game = DorfromantikGame(data_path=str(data_file(tmp_path, set_aside_unseen=30)))
    assert game.data.set_aside_unseen == 30
    for seed in range(3):
        state, tiles = play_random(game, seed)
        aside = set(state.deck[:30].tolist())
        landscape = [t for t in tiles if t < NUM_LANDSCAPE]
        assert state.meta[K.M_UNSEEN] == 30 and not aside & set(landscape)
        assert len(landscape) + int(state.meta[K.M_SET_ASIDE]) >= NUM_LANDSCAPE - 30 >= len(landscape)
        assert game.stack_counts(game.new_game(seed))["landscape"] == NUM_LANDSCAPE - 30


def test_open_task_limit_and_forced_turns_drive_the_draw_rule(tmp_path):
    game = DorfromantikGame(data_path=str(data_file(tmp_path, open_task_limit=1, forced_task_turns=2)))
    for seed in range(4):
        state = game.new_game(seed)
        rng = np.random.default_rng(seed)
        turn = 0
        while not game.is_over(state):
            is_task = game.data.task_type[int(state.meta[K.M_DRAWN])] > 0
            if turn < 2:
                assert is_task, f"seed {seed}: turn {turn} must draw a task tile"
            elif state.meta[K.M_TASK_POS] < K.NUM_TASK:
                # the open count before this draw decides: after the forced turns only below 1
                assert is_task == (state.meta[K.M_OPEN_TASKS] < 1), f"seed {seed}, turn {turn}"
            game.step(state, int(rng.choice(np.flatnonzero(game.legal_mask(state)))))
            turn += 1
            if turn >= 2:
                assert state.meta[K.M_OPEN_TASKS] <= 2


def test_no_tasks_and_one_landscape_tile_in_the_compiled_loop(tmp_path):
    data = load_data(data_file(tmp_path, set_aside_unseen=47, open_task_limit=0, forced_task_turns=0))
    totals = np.zeros(200, np.int64)
    K.run_random_games(200, new_stream(3, "test"), np.ascontiguousarray(data.markers), data.rules,
                       np.ascontiguousarray(data.rot_edges), np.ascontiguousarray(data.task_type),
                       np.ascontiguousarray(data.flag), 1, totals)
    # one tile, no task: at most a rail and a river of length one score
    assert totals.max() <= 2


def test_engine_and_reference_draw_the_same_tiles_with_other_settings(tmp_path):
    path = data_file(tmp_path, set_aside_unseen=10, open_task_limit=2, forced_task_turns=1)
    game = DorfromantikGame(data_path=str(path))
    for seed in range(3):
        state, ref = game.new_game(seed), ReferenceGame(seed, data=game.data)
        rng = np.random.default_rng(seed)
        while not game.is_over(state):
            assert ref.drawn == int(state.meta[K.M_DRAWN]) and ref.marker == int(state.meta[K.M_MARKER])
            legal = game.legal_placements(state)
            move = legal[int(rng.integers(len(legal)))]
            game.place_at(state, *move)
            ref.place(*move)
        assert ref.over and ref.set_aside == state.meta[K.M_SET_ASIDE]


@pytest.mark.parametrize("settings, fragment", [
    ({"set_aside_unseen": 1}, "set_aside_unseen must be an integer in 2..47"),
    ({"set_aside_unseen": "many"}, "set_aside_unseen must be an integer"),
    ({"open_task_limit": 4}, "open_task_limit must be an integer in 0..3"),
    ({"forced_task_turns": -1}, "forced_task_turns must be an integer in 0..3"),
    ({"open_task_limt": 2}, "unknown key(s) open_task_limt"),
])
def test_bad_settings_are_refused_with_one_line(tmp_path, settings, fragment):
    path = data_file(tmp_path, **settings)
    with pytest.raises(DataFileError) as info:
        load_data(path)
    message = str(info.value)
    assert fragment in message and str(path) in message and "\n" not in message
