"""Cascadia pattern tables: the window classes are the hex's symmetries, a turn's value change equals a
recount of the whole area after the engine plays the turn (wildlife windows, and habitat windows in a
table's second layer), the recorded rows give the same changes, a
model without a table plays as before, the fit finds a planted pattern value, and model folders carry
the table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents.base import make_agent
from agents.greedy.cascadia import own_turns_after
from agents.learned import cascadia as L
from agents.learned import cascadia_patterns as CP
from agents.learned.model import PATTERNS_FILE, load_model, save_model
from envs.cascadia import kernels as K
from envs.cascadia.data import NEIGHBORS, NUM_CELLS
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from tests.agents.learned.cascadia_positions import turn_starts


def _cell_code(state, kind_info, p: int, c: int) -> int:
    """The module docstring's cell code, from the state's arrays."""
    kind = int(state.tiles[p, c])
    if kind < 0:
        return 0
    if state.tokens[p, c] >= 0:
        return 1 + int(state.tokens[p, c])
    return 5 + int(kind_info[kind, 0])


def _animal_code(generic: int, a: int) -> int:
    """No tile 0, empty taking ``a`` 1, empty not taking it 2, token ``a`` 3, another token 4."""
    if generic == 0:
        return 0
    if generic <= 5:
        return 3 if generic - 1 == a else 4
    return 1 if ((generic - 5) >> a) & 1 else 2


def _side_code(state, p: int, x: int, d: int, h: int) -> int:
    """The module docstring's habitat code of hex ``x``'s side ``d`` for habitat ``h``."""
    own = int(state.edges[p, x, d]) == h
    y = NEIGHBORS[x][d]
    if y < 0 or state.tiles[p, y] < 0:
        return 1 if own else 0
    if not own:
        return 4
    return 2 if int(state.edges[p, y, (d + 3) % 6]) == h else 3


def _area_value(table, state, kind_info, p: int, st: int) -> float:
    """Seat ``p``'s pattern value at stage ``st``, window by window over every hex (plain Python)."""
    codes = [_cell_code(state, kind_info, p, c) for c in range(NUM_CELLS)]
    total = 0.0
    for x in range(NUM_CELLS):
        ring = [codes[y] if y >= 0 else 0 for y in NEIGHBORS[x]]
        for a in range(CP.N_ANIMALS):
            raw = _animal_code(codes[x], a) + sum(_animal_code(g, a) * 5 ** (d + 1)
                                                  for d, g in enumerate(ring))
            total += table[a * CP.N_STAGES + st, 0, CP.CLASS_OF[raw]]
        if table.shape[1] < 2:
            continue
        for h in range(CP.N_HABITATS):
            cls = 0
            if state.tiles[p, x] >= 0:
                cls = CP.HABITAT_CLASS_OF[sum(_side_code(state, p, x, d, h) * 5 ** d for d in range(6))]
            total += table[h * CP.N_STAGES + st, 1, cls]
    return total


def test_window_classes_are_the_hex_symmetries():
    rng = np.random.default_rng(0)
    for raw in rng.integers(0, CP.N_RAW, 300):
        digits = [(int(raw) // 5 ** i) % 5 for i in range(7)]
        centre, ring = digits[0], digits[1:]
        for k in range(6):
            for mirror in (False, True):
                turned = [ring[(k - i) % 6] if mirror else ring[(i + k) % 6] for i in range(6)]
                other = centre + sum(v * 5 ** (i + 1) for i, v in enumerate(turned))
                assert CP.CLASS_OF[other] == CP.CLASS_OF[raw]
        changed = (centre + 1) % 5 + sum(v * 5 ** (i + 1) for i, v in enumerate(ring))
        assert CP.CLASS_OF[changed] != CP.CLASS_OF[raw]  # the centre is never moved by a symmetry
    # Burnside: 5 centres x the 6-bead bracelets of 5 colours
    assert CP.N_PATTERNS == 5 * 1505 and CP.CLASS_OF.max() == CP.N_PATTERNS - 1


def test_habitat_window_classes_are_the_hex_symmetries():
    rng = np.random.default_rng(1)
    for raw in rng.integers(0, 5 ** 6, 300):
        ring = [(int(raw) // 5 ** i) % 5 for i in range(6)]
        for k in range(6):
            for mirror in (False, True):
                turned = [ring[(k - i) % 6] if mirror else ring[(i + k) % 6] for i in range(6)]
                assert CP.HABITAT_CLASS_OF[sum(v * 5 ** i for i, v in enumerate(turned))] == \
                    CP.HABITAT_CLASS_OF[raw]
        one_changed = sum(v * 5 ** i for i, v in enumerate([(ring[0] + 1) % 5] + ring[1:]))
        assert CP.HABITAT_CLASS_OF[one_changed] != CP.HABITAT_CLASS_OF[raw]  # another multiset of codes
    assert CP.N_HABITAT_PATTERNS == 1505 and CP.HABITAT_CLASS_OF.max() == CP.N_HABITAT_PATTERNS - 1
    assert CP.table_shape(2) == (CP.N_TABLES, 2, CP.N_PATTERNS)
    with pytest.raises(ValueError, match="1-2"):
        CP.table_shape(3)


@pytest.mark.parametrize("players, rings", [(1, 1), (3, 1), (1, 2), (3, 2)])
def test_turn_deltas_equal_a_whole_area_recount_after_the_engine_plays_the_turn(players, rings):
    game, starts = turn_starts(players, range(2), 0.1)
    table = np.random.default_rng(players).normal(size=CP.table_shape(rings))
    ki = game.tb.kind_info
    rng = np.random.default_rng(1)
    checked = 0
    for state in starts[::4]:
        turns, _ = L.candidate_turns_and_features(game, state)
        st = CP.stage(int(own_turns_after(state.ctl)))
        if st < 0 or not turns.shape[0]:
            continue
        picks = rng.choice(turns.shape[0], min(4, turns.shape[0]), replace=False)
        deltas = np.empty(picks.size)
        chosen = np.ascontiguousarray(turns[picks])
        CP.turn_deltas(table, state.board_args(), chosen, game.tb, st, deltas)
        recs = np.empty((picks.size, 2, CP.MAX_WINDOWS, CP.N_COLUMNS), np.int16)
        CP.turn_records(state.board_args(), chosen, game.tb, recs)
        assert np.allclose(CP.row_deltas(table, recs, np.full(picks.size, st)), deltas)
        p = int(state.ctl[K.C_CUR])
        before = _area_value(table, state, ki, p, st)
        for k, i in enumerate(picks):
            after = state.copy()
            L.play_candidate(game, after, int(i))
            assert _area_value(table, after, ki, p, st) - before == pytest.approx(deltas[k], abs=1e-9)
            checked += 1
    assert checked >= 20


def test_stages_and_the_last_turn():
    assert [CP.stage(t) for t in (0, 1, 3, 4, 9, 10, 19)] == [-1, 0, 0, 1, 1, 2, 2]
    features = np.zeros((7, L.N_FEATURES), np.float32)
    features[:, L.CK.F_TURNS_LEFT] = [0, 1, 3, 4, 9, 10, 19]
    assert CP.row_stages(features).tolist() == [-1, 0, 0, 1, 1, 2, 2]


def test_a_model_without_table_plays_as_the_linear_model_and_a_table_changes_the_choices():
    game, starts = turn_starts(1, [3], 0.0)
    theta = load_model("models/cascadia_solo")["theta"]
    plain = L.LinearPolicy(game, theta)
    empty = L.LinearPolicy(game, theta, table=CP.empty_table())
    zeros = L.LinearPolicy(game, theta, table=np.zeros(CP.table_shape()))
    patterned = L.LinearPolicy(game, theta, table=np.random.default_rng(2).normal(size=CP.table_shape()))
    assert empty.table is None
    changed = 0
    for state in starts:
        turns, feats = L.candidate_turns_and_features(game, state)
        values = plain.values(state, turns, feats)
        assert np.array_equal(values, empty.values(state, turns, feats))
        assert np.array_equal(values, zeros.values(state, turns, feats))
        assert np.array_equal(patterned.turn_values(state, turns), patterned.values(state, turns, feats))
        changed += int(np.argmax(patterned.values(state, turns, feats)) != np.argmax(values))
    assert changed > 0
    with pytest.raises(ConfigError, match="pattern table must be"):
        L.LinearPolicy(game, theta, table=np.zeros((3, 1, 5)))
    with pytest.raises(ConfigError, match="plays in Python only"):
        patterned.compiled()


def test_label_rows_record_the_windows_and_keep_the_plain_rows():
    game = make_game("cascadia", players=1)
    theta = L.greedy_theta()
    plain = L.label_games(game, [5], theta, 3, 2)
    rows = L.label_games(game, [5], theta, 3, 2, table=CP.empty_table(), patterns=True)
    for key in ("group", "phase", "features", "target", "scores"):
        assert np.array_equal(plain[key], rows[key])
    recs = rows["windows"]
    assert recs.shape == (plain["group"].size, 2, CP.MAX_WINDOWS, CP.N_COLUMNS) and "windows" not in plain
    used = (recs[:, 0, :, 0] >= 0).sum(axis=1)
    assert used.min() >= 7 and used.max() <= CP.MAX_WINDOWS  # the tile's hex and its six neighbours at least
    assert np.array_equal(recs[:, 0] >= 0, recs[:, 1] >= 0)


@pytest.mark.parametrize("rings", [1, 2])
def test_fit_table_finds_a_planted_pattern_value(rings):
    """Targets = the linear model's values + a planted table's value change + noise: the fitted table
    picks better turns than the linear model on held-out decisions and correlates with the plant."""
    game = make_game("cascadia", players=1)
    theta = L.greedy_theta()
    rows = L.label_games(game, np.arange(40, 44), theta, 8, 1, table=CP.empty_table(), patterns=True)
    rng = np.random.default_rng(3)
    planted = rng.normal(scale=2.0, size=CP.table_shape(rings))
    if rings == 2:
        planted[:, 0] = 0.0  # only the habitat layer carries signal
    stages = CP.row_stages(rows["features"])
    linear = np.einsum("ij,ij->i", rows["features"].astype(np.float64), theta[rows["phase"]])
    signal = CP.row_deltas(planted, rows["windows"], stages)
    rows["target"] = (linear + signal + rng.normal(scale=0.5, size=linear.size)).astype(np.float32)
    table, report = CP.fit_table(rows, theta, rings, epochs=6, lr=0.3, decay=0.0)
    assert table.shape == CP.table_shape(rings) and report.held_out_gain > 0.5
    fitted = CP.row_deltas(table, rows["windows"], stages)
    live = stages >= 0
    assert np.corrcoef(fitted[live], signal[live])[0, 1] > 0.3
    rows["target"] = linear.astype(np.float32)  # nothing beyond the linear model to learn
    table, report = CP.fit_table(rows, theta, epochs=2)
    assert table.shape[0] == 0 and report.best_epoch == -1


def test_a_model_folder_carries_its_table_and_the_agent_plays_it(tmp_path):
    game = make_game("cascadia", players=1)
    theta = load_model("models/cascadia_solo")["theta"]
    table = np.random.default_rng(4).normal(size=CP.table_shape())
    save_model(tmp_path, "cascadia", {"players": 1}, theta, "selfplay", {"note": "test"}, table)
    spec = json.loads((tmp_path / "model.json").read_text())["patterns"]
    assert spec == {"file": PATTERNS_FILE, "rings": 1}
    loaded = load_model(tmp_path)
    assert np.array_equal(loaded["table"], table.astype(np.float32).astype(np.float64))
    agent = make_agent(f"learned:{tmp_path}", game)
    assert agent.table is not None and np.array_equal(agent.table, loaded["table"])
    np.save(tmp_path / PATTERNS_FILE, np.zeros((3, 1, 5), np.float32))
    with pytest.raises(ConfigError, match=r"must be \(15, 1, 7525\)"):
        load_model(tmp_path)
    layered = np.random.default_rng(5).normal(size=CP.table_shape(2))
    save_model(tmp_path, "cascadia", {"players": 1}, theta, "selfplay", {"note": "test"}, layered)
    assert json.loads((tmp_path / "model.json").read_text())["patterns"]["rings"] == 2
    assert make_agent(f"learned:{tmp_path}", game).table.shape == CP.table_shape(2)


@pytest.mark.parametrize("setting, players", [("solo", 1), ("4p", 4)])
def test_the_committed_pattern_models_load_with_their_tables_and_stay_small(setting, players):
    folder = Path(f"models/cascadia_{setting}_patterns")
    model = load_model(folder)
    assert model["table"].shape == CP.table_shape() and np.any(model["table"] != 0)
    assert model["game_options"] == {"players": players}
    assert sum(f.stat().st_size for f in folder.iterdir()) < 5_000_000
    assert f"configs/distill/cascadia_{setting}_patterns.yaml" in (folder / "README.md").read_text()


def test_the_turn_search_orders_by_a_pattern_model_but_plays_no_learned_playouts_with_it():
    game = make_game("cascadia", players=1)
    with pytest.raises(ConfigError, match="has one"):
        make_agent("turn:simulations=8,rollout=learned,model=models/cascadia_solo_patterns", game)
    agent = make_agent("turn:simulations=8,model=models/cascadia_solo_patterns", game)
    assert agent._turn_search.model.table is not None
    state = game.new_game(2)
    assert game.legal_mask(state)[agent.act(state, game.legal_mask(state), np.random.default_rng(0))]


def test_a_one_layer_run_keeps_only_the_animal_columns_and_fits_the_same_table():
    """``trim_rows``: a one-layer table reads the five animal columns only, so its run keeps half the
    windows' columns and fits the very same table; two layers keep both and refuse trimmed rows."""
    game = make_game("cascadia", players=1)
    theta = L.greedy_theta()
    rows = L.label_games(game, np.arange(40, 42), theta, 8, 1, table=CP.empty_table(), patterns=True)
    rng = np.random.default_rng(5)
    planted = rng.normal(scale=2.0, size=CP.table_shape(1))
    linear = np.einsum("ij,ij->i", rows["features"].astype(np.float64), theta[rows["phase"]])
    signal = CP.row_deltas(planted, rows["windows"], CP.row_stages(rows["features"]))
    rows["target"] = (linear + signal).astype(np.float32)
    trimmed = CP.trim_rows(rows, 1)
    assert trimmed["windows"].shape[-1] == CP.N_ANIMALS and rows["windows"].shape[-1] == CP.N_COLUMNS
    assert np.array_equal(trimmed["windows"], rows["windows"][..., :CP.N_ANIMALS])
    full, _ = CP.fit_table(rows, theta, 1, epochs=2, lr=0.3, decay=0.0)
    half, _ = CP.fit_table(trimmed, theta, 1, epochs=2, lr=0.3, decay=0.0)
    assert full.shape[0] > 0 and np.array_equal(full, half)
    assert CP.trim_rows(rows, 2)["windows"] is rows["windows"]
    with pytest.raises(ValueError, match="2 layers read 10 window columns, the rows hold 5"):
        CP.fit_table(trimmed, theta, 2, epochs=1)
