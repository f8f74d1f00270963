"""Averaged learned models: the average values every candidate at the weighted mean of its sources' values
(a Cascadia pattern model, tables included), the weights are checked, and models that cannot be
averaged fail in one line naming the model."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.learned import cartographers as LC
from agents.learned import cascadia as L
from agents.learned import cascadia_patterns as CP
from agents.learned.average import average_models, parse_weights, save_average
from agents.learned.model import load_model, save_model
from envs.core.errors import ConfigError
from tests.agents.learned.cascadia_positions import turn_starts


def _perturbed_copy(folder, source, seed: int) -> None:
    """A model like ``source``'s with noise on its weights and pattern table, saved in ``folder``."""
    model = load_model(source)
    rng = np.random.default_rng(seed)
    theta = model["theta"] + rng.normal(scale=0.5, size=model["theta"].shape)
    table = model["table"] + rng.normal(scale=0.5, size=model["table"].shape)
    save_model(folder, model["game"], model["game_options"], theta, model["preset"], {"note": "test"}, table)


def test_the_average_values_each_candidate_turn_at_the_weighted_mean_of_its_sources(tmp_path):
    _perturbed_copy(tmp_path / "b", "models/cascadia_4p_patterns", 1)
    _perturbed_copy(tmp_path / "c", "models/cascadia_4p_patterns", 2)
    sources = [tmp_path / "b", tmp_path / "c", "models/cascadia_4p_patterns"]
    weights = parse_weights("1,2,1", 3)
    assert np.allclose(weights, [0.25, 0.5, 0.25])
    save_average(average_models(sources, weights), tmp_path / "avg")
    game, starts = turn_starts(4, [5], 0.1)
    agents = [make_agent(f"learned:{folder}", game) for folder in [*sources, tmp_path / "avg"]]
    assert agents[-1].table is not None
    picked_differently = 0
    for state in starts[::3]:
        turns, feats = L.candidate_turns_and_features(game, state)
        values = [agent.values(state, turns, feats) for agent in agents]
        mean = sum(w * v for w, v in zip(weights, values[:-1], strict=True))
        # float32 table and 8-decimal weights on disk: equal to the mean up to their rounding
        assert np.allclose(values[-1], mean, rtol=1e-5, atol=1e-4)
        picked_differently += int(np.argmax(values[-1]) != np.argmax(values[1]))
    assert picked_differently > 0
    saved = load_model(tmp_path / "avg")
    assert [s["weight"] for s in saved["training"]["averaged_from"]] == pytest.approx([0.25, 0.5, 0.25])
    assert saved["training"]["averaged_from"][2]["training"]["iteration"] == 2


def test_weights_are_checked():
    assert np.allclose(parse_weights(None, 4), 0.25)
    for text, fragment in [("1,x", "comma-separated numbers"), ("1,2,3", "3 numbers for 2 models"),
                           ("1,-1", "non-negative"), ("0,0", "not all zero"), ("1,nan", "finite")]:
        with pytest.raises(ConfigError, match=fragment):
            parse_weights(text, 2)


def test_models_that_cannot_be_averaged_fail_naming_the_model(tmp_path):
    theta = LC.greedy_theta("progress")
    save_model(tmp_path / "p", "cartographers", {"players": 1}, theta, "progress", {})
    save_model(tmp_path / "d", "cartographers", {"players": 1}, theta, "default", {})
    save_model(tmp_path / "three", "cartographers", {"players": 3}, theta, "progress", {})
    half = np.full(2, 0.5)
    with pytest.raises(ConfigError, match="'.*d' has preset 'default'"):
        average_models([tmp_path / "p", tmp_path / "d"], half)
    with pytest.raises(ConfigError, match="has game_options"):
        average_models([tmp_path / "p", tmp_path / "three"], half)
    with pytest.raises(ConfigError, match="has game 'cascadia'"):
        average_models([tmp_path / "p", "models/cascadia_4p"], half)
    with pytest.raises(ConfigError, match="at least two"):
        average_models([tmp_path / "p"], np.ones(1))
    with pytest.raises(ConfigError, match="differ in having a pattern table"):
        average_models(["models/cascadia_4p", "models/cascadia_4p_patterns"], half)
    layered = np.zeros(CP.table_shape(2))
    save_model(tmp_path / "two", "cascadia", {"players": 4}, load_model("models/cascadia_4p")["theta"],
               "endgame", {}, layered)
    with pytest.raises(ConfigError, match="pattern table of shape"):
        average_models(["models/cascadia_4p_patterns", tmp_path / "two"], half)
    same = average_models([tmp_path / "p", tmp_path / "p"], half)
    assert np.array_equal(same["theta"], theta) and same["table"] is None


def test_the_committed_average_model_names_its_sources_and_how_it_was_made():
    folder = "models/cascadia_4p_average"
    model = load_model(folder)
    committed = load_model("models/cascadia_4p_patterns")
    sources = model["training"]["averaged_from"]
    assert [s["path"] for s in sources] == ["models/cascadia_4p_patterns",
                                            "runs/distill/cascadia_4p_patterns_futures16"]
    assert [s["weight"] for s in sources] == [0.5, 0.5]
    assert sources[0]["training"] == committed["training"]
    assert model["game_options"] == {"players": 4} and model["table"].shape == CP.table_shape()
    # half of the committed model plus half of the other source: not a copy of the committed one
    assert np.abs(model["theta"] - committed["theta"]).max() > 1e-3
    readme = open(f"{folder}/README.md").read()
    for command in ("configs/distill/cascadia_4p_patterns.yaml",
                    "configs/distill/cascadia_4p_patterns_futures16.yaml",
                    "meeplelab average-models models/cascadia_4p_patterns "
                    "runs/distill/cascadia_4p_patterns_futures16 --out models/cascadia_4p_average"):
        assert command in readme
