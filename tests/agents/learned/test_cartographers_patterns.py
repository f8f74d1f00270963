"""Cartographers pattern tables: the value change equals a whole-map recount, the candidates' maps are
the engine's, a model without a table plays as before, the fit finds a planted pattern, and model
folders carry the table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents.base import make_agent
from agents.learned import cartographers as L
from agents.learned import cartographers_kernels as CK
from agents.learned import cartographers_patterns as P
from agents.learned.model import PATTERNS_FILE, load_model, save_model
from envs.cartographers import kernels as K
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from tests.agents.learned.test_cartographers import _positions


def _map_value(table, ring, board, scoring, season) -> float:
    """The pattern value of a whole coded map, window by window (the module's docstring formula)."""
    total = 0.0
    for w in range(P.N_WINDOWS):
        r, c = divmod(w, 10)
        cells = [int(board[r * 11 + c + d]) for d in (0, 1, 11, 12)]
        pattern = cells[0] + 9 * cells[1] + 81 * cells[2] + 729 * cells[3]
        k = min(r, 9 - r, c, 9 - c, table.shape[1] - 1)
        for e in range(4):
            total += int(scoring[4 + e]) * table[int(scoring[e]), k, pattern]
        total += table[P.N_CARD_TABLES + season, k, pattern]
    return total


def _coded(game, state) -> np.ndarray:
    out = np.empty(K.N_CELLS, np.int8)
    P.encode_map(state.arrays()[0][state.arrays()[6][K.M_ACTOR]], game.tb[0], out)
    return out


def _scoring(game, state) -> np.ndarray:
    out = np.empty(8, np.int8)
    arrays = state.arrays()
    P.decision_scoring(arrays[5], game.tb[3], int(arrays[6][K.M_SEASON]), out)
    return out


def test_candidate_deltas_equal_a_whole_map_recount_on_the_engines_maps():
    """For sampled candidates of many positions: the map the kernel draws is the engine's map after the
    decision (apply_decision draws without revealing the next card), and the value change equals the
    whole-map value after minus before."""
    game = make_game("cartographers")
    rng = np.random.default_rng(0)
    table = rng.normal(size=(P.N_TABLES, 3, P.N_PATTERNS))
    ring = P.window_rings(3)
    checked = 0
    for state in list(_positions(game, range(4)))[::3]:
        actions, _ = L.candidates(game, state)
        if actions.size == 0:
            continue
        arrays = state.arrays()
        meta = arrays[6]
        season, card = int(meta[K.M_SEASON]), int(meta[K.M_CARD])
        deltas = np.empty(actions.size)
        scoring = _scoring(game, state)
        P.candidate_deltas(table, ring, game.tb, arrays[0][meta[K.M_ACTOR]], card, scoring, season, actions,
                           actions.size, deltas)
        before = _coded(game, state)
        for i in rng.choice(actions.size, size=min(6, actions.size), replace=False):
            drawn = before.copy()
            P.draw_coded(game.tb, card, int(actions[i]), drawn)
            engine = state.copy()
            K.apply_decision(engine.arrays(), game.tb, int(actions[i]))
            assert np.array_equal(drawn, _engine_map(game, engine, int(meta[K.M_ACTOR])))
            after_value = _map_value(table, ring, drawn, scoring, season)
            expected = after_value - _map_value(table, ring, before, scoring, season)
            assert deltas[i] == pytest.approx(expected, abs=1e-8)
            checked += 1
    assert checked > 100


def _engine_map(game, state, seat: int) -> np.ndarray:
    out = np.empty(K.N_CELLS, np.int8)
    P.encode_map(state.arrays()[0][seat], game.tb[0], out)
    return out


def test_decision_scoring_counts_the_season_ends_left():
    """Edict cards, then per edict the season ends from this season on that score it (8 in all)."""
    game = make_game("cartographers")
    state = game.new_game(3)
    seasons = game.tb[3]
    for season in range(4):
        out = np.empty(8, np.int8)
        P.decision_scoring(state.arrays()[5], seasons, season, out)
        assert np.array_equal(out[:4], state.arrays()[5])
        assert out[4:].sum() == 2 * (4 - season)
        for e in range(4):
            assert out[4 + e] == sum((seasons[s, 1] == e) + (seasons[s, 2] == e) for s in range(season, 4))


def test_a_model_without_table_plays_as_the_linear_model_and_a_table_changes_the_values():
    game = make_game("cartographers")
    theta = load_model("models/cartographers_solo")["theta"]
    plain = L.LinearPolicy(game, theta)
    empty = L.LinearPolicy(game, theta, table=P.empty_table())
    table = np.random.default_rng(1).normal(size=(P.N_TABLES, 2, P.N_PATTERNS))
    patterned = L.LinearPolicy(game, theta, table=table)
    changed = 0
    for state in list(_positions(game, [11]))[::4]:
        actions, values = plain.candidate_values(state)
        actions_e, values_e = empty.candidate_values(state)
        assert np.array_equal(actions, actions_e) and np.array_equal(values, values_e)
        actions_t, values_t = patterned.candidate_values(state)
        if actions.size == 0:
            continue
        assert np.array_equal(actions, actions_t)
        arrays = state.arrays()
        meta = arrays[6]
        deltas = np.empty(actions.size)
        P.candidate_deltas(table, P.window_rings(2), game.tb, arrays[0][meta[K.M_ACTOR]], int(meta[K.M_CARD]),
                           _scoring(game, state), int(meta[K.M_SEASON]), actions, actions.size, deltas)
        assert np.allclose(values_t, values + deltas)
        changed += int(np.argmax(values_t) != np.argmax(values))
    assert changed > 0


def test_label_rows_record_the_maps_before_and_after_each_candidate():
    """``patterns=True`` rows: the after map differs from the before map in exactly the candidate's
    drawn cells (its ``cells_drawn`` feature), only on empty cells, and the scoring rows match the
    season; the features and targets are those of the plain rows."""
    game = make_game("cartographers")
    theta = L.greedy_theta()
    plain = L.label_games(game, np.array([5]), theta, 3, 2)
    rows = L.label_games(game, np.array([5]), theta, 3, 2, table=P.empty_table(), patterns=True)
    for key in ("group", "phase", "features", "target"):
        assert np.array_equal(plain[key], rows[key])
    changed = (rows["befores"] != rows["afters"]).sum(axis=1)
    assert np.array_equal(changed, rows["features"][:, CK.F_CELLS].astype(int))
    drawn_on = rows["befores"][rows["befores"] != rows["afters"]]
    assert set(np.unique(drawn_on)) <= {K.EMPTY, 8}
    assert np.array_equal(rows["scoring"][:, 4:].sum(axis=1), 2 * (4 - rows["phase"]))
    assert "befores" not in plain


def test_fit_table_finds_a_planted_pattern_value():
    """Targets = the linear model's values + a planted table's value change + noise: the fitted
    table picks better candidates than the linear model on held-out decisions."""
    game = make_game("cartographers")
    theta = L.greedy_theta()
    rows = L.label_games(game, np.arange(40, 46), theta, 8, 1, table=P.empty_table(), patterns=True)
    planted = np.zeros((P.N_TABLES, 1, P.N_PATTERNS))
    rng = np.random.default_rng(2)
    planted[P.N_CARD_TABLES:, 0, :] = rng.normal(scale=3.0, size=(4, P.N_PATTERNS))
    linear = np.einsum("ij,ij->i", rows["features"].astype(np.float64), theta[rows["phase"]])
    signal = P.row_deltas(planted, P.window_rings(1), rows["befores"], rows["afters"], rows["scoring"],
                          rows["phase"].astype(np.int64))
    rows["target"] = (linear + signal + rng.normal(scale=0.5, size=linear.size)).astype(np.float32)
    table, report = P.fit_table(rows, theta, rings=1, epochs=6, lr=0.3, decay=0.0)
    assert table.shape == (P.N_TABLES, 1, P.N_PATTERNS)
    assert report.held_out_gain > 0.5 and report.best_epoch >= 0
    fitted = P.row_deltas(table, P.window_rings(1), rows["befores"], rows["afters"], rows["scoring"],
                          rows["phase"].astype(np.int64))
    assert np.corrcoef(fitted - fitted.mean(), signal - signal.mean())[0, 1] > 0.5


def test_fit_table_keeps_nothing_when_nothing_gains():
    """Pure-noise residuals: no epoch beats the linear model on held-out decisions often enough to
    keep a table, or the kept one gains (the report says which)."""
    game = make_game("cartographers")
    theta = L.greedy_theta()
    rows = L.label_games(game, np.arange(50, 52), theta, 4, 1, table=P.empty_table(), patterns=True)
    linear = np.einsum("ij,ij->i", rows["features"].astype(np.float64), theta[rows["phase"]])
    rows["target"] = linear.astype(np.float32)  # nothing beyond the linear model to learn
    table, report = P.fit_table(rows, theta, rings=1, epochs=2)
    assert table.shape[0] == 0 and report.best_epoch == -1 and report.held_out_gain == 0.0


def test_window_rings():
    ring = P.window_rings(3)
    assert ring[0] == 0 and ring[99] == 0 and ring[11] == 1 and ring[44] == 2 and ring.max() == 2
    assert P.window_rings(1).max() == 0
    for bad in (0, 6, 2.0, True):
        with pytest.raises(ValueError, match="rings"):
            P.window_rings(bad)


def test_a_model_folder_carries_its_table_and_the_agent_plays_it(tmp_path):
    game = make_game("cartographers")
    theta = load_model("models/cartographers_solo")["theta"]
    table = np.random.default_rng(3).normal(size=(P.N_TABLES, 2, P.N_PATTERNS))
    save_model(tmp_path, "cartographers", {"players": 1}, theta, "progress", {"note": "test"}, table)
    spec = json.loads((tmp_path / "model.json").read_text())["patterns"]
    assert spec == {"file": PATTERNS_FILE, "rings": 2}
    loaded = load_model(tmp_path)
    assert np.array_equal(loaded["table"], table.astype(np.float32).astype(np.float64))
    agent = make_agent(f"learned:{tmp_path}", game)
    state = game.new_game(4)
    _, values = agent.candidate_values(state)
    _, plain = L.LinearPolicy(game, theta).candidate_values(state)
    assert not np.allclose(values, plain)
    assert load_model("models/cartographers_solo")["table"] is None


@pytest.mark.parametrize("setting, players", [("solo", 1), ("3p", 3)])
def test_the_committed_pattern_models_load_with_their_tables_and_stay_small(setting, players):
    folder = Path(f"models/cartographers_{setting}_patterns")
    model = load_model(folder)
    assert model["table"].shape == (P.N_TABLES, 3, P.N_PATTERNS) and np.any(model["table"] != 0)
    assert model["game_options"] == {"players": players}
    assert sum(f.stat().st_size for f in folder.iterdir()) < 5_000_000
    assert f"configs/distill/cartographers_{setting}_patterns.yaml" in (folder / "README.md").read_text()


@pytest.mark.parametrize("damage, fragment", [
    (lambda folder: (folder / PATTERNS_FILE).unlink(), "cannot read the pattern table"),
    (lambda folder: np.save(folder / PATTERNS_FILE, np.zeros((3, 2, 5), np.float32)),
     "must be (20, 2, 6561)"),
    (lambda folder: np.save(folder / PATTERNS_FILE, np.full((20, 2, 6561), np.nan, np.float32)), "finite"),
    (lambda folder: (folder / PATTERNS_FILE).write_bytes(b"not a table"), "cannot read the pattern table"),
    (lambda folder: _edit_spec(folder, {"file": "other.npy", "rings": 2}), "patterns must be"),
    (lambda folder: _edit_spec(folder, {"file": PATTERNS_FILE, "rings": 9}), "patterns must be"),
    (lambda folder: _edit_spec(folder, PATTERNS_FILE), "patterns must be"),
])
def test_a_damaged_table_fails_in_one_line(tmp_path, damage, fragment):
    theta = L.greedy_theta()
    save_model(tmp_path, "cartographers", {}, theta, "progress", {}, np.zeros((P.N_TABLES, 2, P.N_PATTERNS)))
    damage(tmp_path)
    with pytest.raises(ConfigError, match="learned model") as err:
        load_model(tmp_path)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def _edit_spec(folder, spec) -> None:
    data = json.loads((folder / "model.json").read_text())
    data["patterns"] = spec
    (folder / "model.json").write_text(json.dumps(data))


def test_dorfromantik_models_take_no_table(tmp_path):
    from agents.learned import dorfromantik as D

    with pytest.raises(ConfigError, match="cartographers, cascadia only"):
        save_model(tmp_path, "dorfromantik", {}, D.greedy_theta(), "selfplay", {},
                   np.zeros((P.N_TABLES, 1, 1)))
