"""Learned model folders: save and load, the ``learned:`` spec, and one-line errors for bad files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.base import make_agent
from agents.learned import cartographers as L
from agents.learned.fit import centre_by_group, fit_theta, pick_gain
from agents.learned.model import MODEL_FILE, load_model, save_model
from envs.core.errors import ConfigError
from envs.core.registry import make_game


def test_save_load_round_trip_and_agent_plays_it(tmp_path):
    theta = L.greedy_theta("progress")
    theta[2, 5] = 0.25
    save_model(tmp_path / "m", "cartographers", {"players": 1}, theta, "progress", {"note": "test"})
    loaded = load_model(tmp_path / "m")
    assert np.array_equal(loaded["theta"], theta)
    game = make_game("cartographers")
    agent = make_agent(f"learned:{tmp_path / 'm'}", game)
    assert np.array_equal(agent.theta, theta)
    state = game.new_game(3)
    mask = game.legal_mask(state)
    assert mask[agent.act(state, mask, np.random.default_rng(0))]


@pytest.mark.parametrize("content, fragment", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "not a meeplelab-linear-candidates/1 file"),
    ('{"format": "meeplelab-linear-candidates/1", "game": "chess"}',
     "no learned candidate model for game 'chess'"),
    ('{"format": "meeplelab-linear-candidates/1", "game": "cartographers", "features": ["x"]}',
     "features do not match"),
    ("[" * 100_000 + "]" * 100_000, "not valid JSON"),
])
def test_bad_model_files_fail_in_one_line(tmp_path, content, fragment):
    (tmp_path / MODEL_FILE).write_text(content)
    with pytest.raises(ConfigError, match=fragment):
        load_model(tmp_path)


def test_bad_theta_and_wrong_game(tmp_path):
    save_model(tmp_path, "cartographers", {}, L.greedy_theta(), "progress", {})
    data = json.loads((tmp_path / MODEL_FILE).read_text())
    data["theta"][0][0] = "NaN"
    (tmp_path / MODEL_FILE).write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="theta"):
        load_model(tmp_path)
    save_model(tmp_path, "cartographers", {}, L.greedy_theta(), "progress", {})
    with pytest.raises(ConfigError, match="is a cartographers model, not dorfromantik"):
        make_agent(f"learned:{tmp_path}", make_game("dorfromantik"))
    with pytest.raises(ConfigError, match="no model at"):
        make_agent(f"learned:{tmp_path / 'missing'}", make_game("cartographers"))


def test_fit_recovers_a_better_ranking():
    """Rows whose targets follow known weights: the fit ranks held-out decisions by them, and keeps
    theta0 when the targets are pure noise."""
    rng = np.random.default_rng(0)
    d, groups, per = 5, 3000, 6
    true = np.array([1.0, -2.0, 0.5, 0.0, 3.0])
    x = rng.normal(size=(groups * per, d))
    group = np.repeat(np.arange(groups), per)
    theta0 = np.array([[1.0, 0.0, 0.0, 0.0, 0.0]])
    rows = {"group": group, "phase": np.zeros(group.size, np.int64), "features": x.astype(np.float32),
            "target": (x @ true + rng.normal(scale=0.5, size=group.size)).astype(np.float32)}
    theta, report = fit_theta(rows, theta0)
    assert report.held_out_gain > 0.5
    cosine = theta[0] @ true / np.linalg.norm(theta[0]) / np.linalg.norm(true)
    assert cosine > 0.99
    noise = dict(rows, target=rng.normal(size=group.size).astype(np.float32))
    theta, report = fit_theta(noise, theta0)
    assert 0.0 <= report.held_out_gain < 0.1  # nothing to learn: theta0 or a change worth nothing
    if report.ridge == np.inf:
        assert np.array_equal(theta, theta0)
    assert abs(pick_gain(group, x, noise["target"], theta[0], theta0[0]).mean()) < 0.1


def test_centre_by_group():
    group = np.array([0, 0, 1, 1, 1])
    values = np.array([1.0, 3.0, 0.0, 3.0, 6.0])
    assert np.allclose(centre_by_group(group, values), [-1, 1, -3, 0, 3])


def test_an_installed_copy_finds_models_among_the_shipped_ones(tmp_path, monkeypatch):
    """Outside a checkout, ``models/<folder>`` resolves in the installed ``meeplelab_data.models``; other
    relative paths do not, and a missing shipped model is still one line."""
    from agents.learned import agent as learned_agent

    shipped = tmp_path / "site" / "meeplelab_data" / "models"
    save_model(shipped / "carto", "cartographers", {}, L.greedy_theta(), "progress", {})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(learned_agent, "running_from_checkout", lambda: False)
    monkeypatch.setattr(learned_agent, "installed_dir", lambda name: shipped if name == "models" else None)
    assert learned_agent.resolve_model_path("models/carto") == shipped / "carto"
    agent = make_agent("learned:models/carto", make_game("cartographers"))
    assert np.array_equal(agent.theta, L.greedy_theta())
    with pytest.raises(ConfigError, match="no model at 'elsewhere/carto'"):
        learned_agent.resolve_model_path("elsewhere/carto")
    with pytest.raises(ConfigError, match="no model at 'models/missing'"):
        learned_agent.resolve_model_path("models/missing")
