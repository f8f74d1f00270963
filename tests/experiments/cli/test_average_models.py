"""``meeplelab average-models``: writes a model folder that ``learned:`` plays, keeps an existing model
unless told, and fails in one line on bad input."""

from __future__ import annotations

import numpy as np

from agents.base import make_agent
from agents.learned import cartographers as LC
from agents.learned.model import load_model, save_model
from envs.core.registry import make_game
from tests.experiments.cli.test_errors import assert_one_line_error, run_cli


def test_average_models_writes_a_playable_model_and_keeps_an_existing_one(capsys, tmp_path):
    theta = LC.greedy_theta("progress")
    save_model(tmp_path / "a", "cartographers", {"players": 1}, theta, "progress", {})
    save_model(tmp_path / "b", "cartographers", {"players": 1}, 3 * theta, "progress", {})
    out = tmp_path / "avg"
    args = ["average-models", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out)]
    code, text, err = run_cli(capsys, [*args, "--weights", "3,1"])
    assert code == 0, err
    assert "wrote" in text and "x 0.75" in text
    assert np.allclose(load_model(out)["theta"], 1.5 * theta)
    game = make_game("cartographers")
    state = game.new_game(1)
    mask = game.legal_mask(state)
    assert mask[make_agent(f"learned:{out}", game).act(state, mask, np.random.default_rng(0))]
    code, _, err = run_cli(capsys, args)
    assert_one_line_error(code, err, "already holds a model", "--force")
    assert np.allclose(load_model(out)["theta"], 1.5 * theta)
    code, _, err = run_cli(capsys, [*args, "--force"])
    assert code == 0, err
    assert np.allclose(load_model(out)["theta"], 2 * theta)


def test_average_models_bad_input_is_one_line(capsys, tmp_path):
    theta = LC.greedy_theta("progress")
    save_model(tmp_path / "a", "cartographers", {"players": 1}, theta, "progress", {})
    out, a = str(tmp_path / "out"), str(tmp_path / "a")
    code, _, err = run_cli(capsys, ["average-models", a, "--out", out])
    assert_one_line_error(code, err, "at least two model folders")
    code, _, err = run_cli(capsys, ["average-models", a, str(tmp_path / "nope"), "--out", out])
    assert_one_line_error(code, err, "no model at", "nope")
    code, _, err = run_cli(capsys, ["average-models", a, "models/dorfromantik", "--out", out])
    assert_one_line_error(code, err, "has game 'dorfromantik'")
    code, _, err = run_cli(capsys, ["average-models", str(tmp_path / "a"), str(tmp_path / "a"), "--out", out,
                                    "--weights", "1"])
    assert_one_line_error(code, err, "1 numbers for 2 models")
    afile = tmp_path / "afile"
    afile.write_text("x")
    code, _, err = run_cli(capsys, ["average-models", str(tmp_path / "a"), str(tmp_path / "a"),
                                    "--out", str(afile / "sub")])
    assert_one_line_error(code, err, "which is a file")
    assert not (tmp_path / "out").exists()
