"""meeplelab train --algo distill: configs, a tiny run end to end, resume, torn checkpoints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.base import make_agent
from agents.learned import cartographers as L
from agents.learned.fit import fit_theta
from agents.learned.model import load_model, save_model
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from experiments.train import distill
from experiments.train.distill import (
    check_resumable,
    label_chunk,
    labelling_model,
    last_checkpoint,
    resume_point,
    run_distill,
)
from experiments.train.distill_config import load_config, validate_config
from tests.experiments.train.test_ppo import scalars
from tests.paths import CONFIGS, REPO_ROOT

MODELS = REPO_ROOT / "models"


def tiny_config(**sections) -> dict:
    raw = {"name": "tiny-distill", "game": "cartographers", "game_options": {"players": 1},
           "label": {"games": 2, "width": 3, "futures": 2, "chunk_games": 1},
           "run": {"iterations": 2, "workers": 1, "eval_games": 3}}
    for key, value in sections.items():
        raw[key] = {**raw.get(key, {}), **value} if isinstance(value, dict) else value
    return validate_config(raw)


@pytest.mark.parametrize("change, fragment", [
    ({"label": {"width": 1}}, "label.width must be an integer in"),
    ({"label": {"wdth": 3}}, "unknown key.*label.wdth"),
    ({"label": {"preset": "nonsense"}}, "unknown preset 'nonsense'"),
    ({"run": {"first_seed": 1_000_100}}, "overlap the dev or test suite"),
    ({"run": {"first_seed": 150}}, "overlap the dev or test suite"),
    ({"game": "chess"}, "game must be one of"),
    ({"ppo": {}}, "unknown section"),
    ({"label": {"model_turns": 3}}, "label.model_turns .* cascadia only, not cartographers"),
    ({"label": {"model_turns": -1}}, "label.model_turns must be an integer in"),
    ({"label": {"horizon": 4}}, "label.horizon must be an integer in"),
    ({"game": "cascadia", "game_options": {"players": 1}, "label": {"horizon": 2}},
     "label.horizon .* cartographers only, not cascadia"),
    ({"run": {"start": 5}}, "run.start must be a model folder"),
    ({"run": {"start": "models/no_such_model"}}, "no model.json there"),
    ({"run": {"start": str(MODELS / "cascadia_solo")}}, "is a model of cascadia"),
    ({"game_options": {"players": 2}, "run": {"start": str(MODELS / "cartographers_solo")}},
     "is a model of cartographers {'players': 1}, not of cartographers {'players': 2}"),
    ({"game": "dorfromantik", "game_options": {}, "patterns": {}},
     "patterns .* cartographers, cascadia only, not dorfromantik"),
    ({"game": "cascadia", "game_options": {"players": 1}, "patterns": {"rings": 3}},
     r"patterns.rings must be an integer in \[1, 2\]"),
    ({"game": "cascadia", "game_options": {"players": 4}, "label": {"model_turns": 2}, "patterns": {}},
     "patterns cannot be fitted with label.model_turns"),
    ({"patterns": {"ring": 2}}, "unknown key.*patterns.ring"),
    ({"patterns": {"rings": 9}}, "patterns.rings must be an integer in"),
    ({"patterns": {"lr": 0}}, "patterns.lr must be a number in"),
    ({"patterns": {"decay": -1}}, "patterns.decay must be a number in"),
    ({"patterns": [3]}, "section 'patterns' must be a mapping"),
    ({"label": {"targets": "returns"}, "patterns": {}}, "patterns needs playout labels"),
])
def test_bad_configs_fail_in_one_line(change, fragment):
    with pytest.raises(ConfigError, match=fragment):
        tiny_config(**change)


def test_shipped_configs_are_valid():
    paths = sorted((CONFIGS / "distill").glob("*.yaml"))
    assert paths
    for path in paths:
        assert load_config(path)["game"] in path.stem


def test_tiny_run_resume_and_torn_checkpoint(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    config = tiny_config()
    state = run_distill(config, run, progress=False)
    assert state["iteration"] == 1
    assert [e["iteration"] for e in state["evaluations"]] == [0, 1]
    assert (run / "model.json").is_file()
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["iter_000", "iter_001"]
    assert len(scalars(run)["distill/diff"]) == 2
    agent = make_agent(f"learned:{run}", make_game("cartographers"))
    assert agent.theta.shape == (4, len(agent.theta[0]))
    # a torn newer checkpoint is skipped; resume continues after the last complete one
    torn = run / "checkpoints" / "iter_002"
    torn.mkdir()
    (torn / "model.json").write_text('{"format": "meeplelab-linear-candidates/1", "ga')
    assert last_checkpoint(run)[0] == 1
    labelled = sorted((run / "labels").rglob("*.npz"))
    lost = run / "labels" / "iter_001" / "chunk_0001.npz"  # a later iteration's chunk, labelled by iter_000
    before = dict(np.load(lost))
    lost.unlink()
    state = run_distill(config, run, resume=True, iterations=3, progress=False)
    again = dict(np.load(lost))
    for key in before:  # labelled again by the same weights: the same rows
        assert np.array_equal(before[key], again[key]), key
    assert state["iteration"] == 2
    assert sorted((run / "labels").rglob("*.npz"))[:len(labelled)] == labelled
    assert json.loads((run / "state.json").read_text())["iteration"] == 2


def test_a_run_with_patterns_checkpoints_labels_and_plays_its_table(tmp_path, monkeypatch):
    """``patterns``: the labels record the maps, each iteration fits a table beside the weights (the
    fit is replaced by a known table here), the checkpoints and the run's best carry it, the next
    iteration labels with it, and ``learned:<run>`` plays it; a resumed run picks it up."""
    from agents.learned import cartographers_patterns as P

    tables = []

    def known_table(rows, theta, **kwargs):
        assert {"befores", "afters", "scoring"} <= set(rows) and kwargs["rings"] == 2
        tables.append(np.random.default_rng(len(tables)).normal(size=(P.N_TABLES, 2, P.N_PATTERNS)))
        return tables[-1], P.TableReport(epochs=1, best_epoch=0, held_out_gain=0.5, held_out_se=0.1)

    monkeypatch.setattr(P, "fit_table", known_table)
    config = tiny_config(patterns={"rings": 2, "epochs": 1})
    state = run_distill(config, tmp_path, progress=False)
    assert state["iteration"] == 1 and state["evaluations"][0]["patterns"]["held_out_gain"] == 0.5
    assert scalars(tmp_path)["distill/pattern_gain"] == [0.5, 0.5]  # iterations 0 and 1
    first = load_model(tmp_path / "checkpoints" / "iter_000")
    assert np.array_equal(first["table"], tables[0].astype(np.float32))
    best = load_model(tmp_path)
    assert best["table"] is not None and np.array_equal(best["theta"], load_model(
        tmp_path / "checkpoints" / f"iter_{state['best']['iteration']:03d}")["theta"])
    label = config["label"]
    seeds = [config["run"]["first_seed"] + label["games"]]  # iteration 1's first chunk, labelled by iter_000
    expected = label_chunk("cartographers", config["game_options"], seeds, first["theta"], label["width"],
                           label["futures"], label["preset"], config["run"]["first_seed"] + label["games"],
                           table=first["table"])
    chunk = dict(np.load(tmp_path / "labels" / "iter_001" / "chunk_0000.npz"))
    for key in ("features", "target", "befores", "afters", "scoring"):
        assert np.array_equal(chunk[key], expected[key]), key
    agent = make_agent(f"learned:{tmp_path}", make_game("cartographers"))
    assert agent.model.table.shape == (P.N_TABLES, 2, P.N_PATTERNS)
    state = run_distill(config, tmp_path, resume=True, iterations=3, progress=False)
    assert state["iteration"] == 2 and len(tables) == 3


def test_cli_refuses_ppo_options_and_names_the_agent(tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text("game: cartographers\nlabel: {games: 1, width: 2, futures: 1, chunk_games: 1}\n"
                      "run: {iterations: 1, workers: 1, eval_games: 2}\n")
    cli = [sys.executable, "-m", "experiments.cli", "train", "cartographers", "--algo", "distill",
           "--config", str(config)]
    bad = subprocess.run([*cli, "--timesteps", "10"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert bad.returncode != 0 and "--timesteps: not an option of --algo distill" in bad.stderr
    ok = subprocess.run([*cli, "--out", str(tmp_path / "run")], cwd=REPO_ROOT, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert f"agent: learned:{tmp_path / 'run'}" in ok.stdout
    assert np.isfinite(json.loads(Path(tmp_path / "run" / "state.json").read_text())["best"]["diff"])


@pytest.mark.slow
@pytest.mark.parametrize("game, options", [("cascadia", {"players": 1}), ("cascadia", {"players": 4}),
                                           ("dorfromantik", {}), ("cartographers", {"players": 3})])
def test_tiny_run_of_every_game(tmp_path, game, options):
    config = tiny_config(game=game, game_options=options, label={"games": 1, "width": 2, "futures": 1},
                         run={"iterations": 1, "eval_games": 2})
    state = run_distill(config, tmp_path, progress=False)
    assert state["iteration"] == 0 and np.isfinite(state["best"]["diff"])
    agent = make_agent(f"learned:{tmp_path}", make_game(game, **options))
    assert agent.theta.shape[0] >= 1


def test_resume_refuses_a_folder_of_another_run(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    run_distill(tiny_config(run={"iterations": 1}), run, progress=False)
    other = tiny_config(game_options={"players": 2}, run={"iterations": 1})
    with pytest.raises(ConfigError, match="was started with another config"):
        check_resumable(other, run)
    check_resumable(tiny_config(run={"iterations": 1}), run)  # its own config continues
    with pytest.raises(ConfigError, match="holds no distillation run"):
        resume_point(tmp_path / "empty")
    check_resumable(tiny_config(run={"iterations": 5}), run)  # a larger budget is the same run
    state = json.loads((run / "state.json").read_text())  # a run from before label.model_turns existed
    del state["config"]["label"]["model_turns"]
    (run / "state.json").write_text(json.dumps(state))
    check_resumable(tiny_config(run={"iterations": 1}), run)


def test_a_lost_chunk_is_labelled_by_the_weights_that_labelled_it(tmp_path):
    """Iteration i's games were played by iteration i-1's checkpoint (greedy's weights for the first),
    whatever the run has fitted since."""
    greedy = L.greedy_theta()
    for i in range(3):
        folder = tmp_path / "checkpoints" / f"iter_{i:03d}"
        save_model(folder, "cartographers", {}, greedy + i + 1, "progress", {})
    assert np.array_equal(labelling_model(tmp_path, 0, (greedy, None))[0], greedy)
    # model.json keeps 8 decimals
    assert np.allclose(labelling_model(tmp_path, 1, (greedy, None))[0], greedy + 1)
    assert np.allclose(labelling_model(tmp_path, 3, (greedy, None))[0], greedy + 3)


def test_a_run_started_from_a_model_labels_with_it_and_fits_toward_it(tmp_path, monkeypatch):
    """``run.start``: the start model plays the first iteration's labelled games and is the fit's
    starting point (the weights it shrinks toward), not the greedy preset."""
    start = MODELS / "cartographers_solo"
    config = tiny_config(label={"games": 1}, run={"iterations": 1, "start": str(start)})
    start_weights = load_model(start)["theta"]
    assert not np.allclose(start_weights, L.greedy_theta(config["label"]["preset"]))
    seen = []

    def recording_fit(rows, theta0, **kwargs):
        seen.append(theta0.copy())
        return fit_theta(rows, theta0, **kwargs)

    monkeypatch.setattr(distill, "fit_theta", recording_fit)
    run_distill(config, tmp_path, progress=False)
    assert len(seen) == 1 and np.array_equal(seen[0], start_weights)
    label = config["label"]
    expected = label_chunk("cartographers", config["game_options"], [config["run"]["first_seed"]],
                           start_weights, label["width"], label["futures"], label["preset"],
                           config["run"]["first_seed"])
    chunk = dict(np.load(tmp_path / "labels" / "iter_000" / "chunk_0000.npz"))
    assert np.array_equal(chunk["features"], expected["features"])
    assert np.array_equal(chunk["target"], expected["target"])


@pytest.mark.parametrize("rings", [1, 2])
def test_a_cascadia_run_stores_the_window_columns_its_table_reads(tmp_path, rings):
    """A one-layer Cascadia pattern run saves and fits five window columns per labelled window (the
    animals), a two-layer run ten; a resumed run reads its chunks the same way."""
    config = tiny_config(game="cascadia", game_options={"players": 1},
                         label={"games": 1, "width": 2, "futures": 1}, run={"iterations": 1, "eval_games": 2},
                         patterns={"rings": rings, "epochs": 1})
    state = run_distill(config, tmp_path, progress=False)
    assert state["iteration"] == 0
    chunk = np.load(tmp_path / "labels" / "iter_000" / "chunk_0000.npz")
    assert chunk["windows"].shape[-1] == 5 * rings
    resumed = run_distill(config, tmp_path, resume=True, iterations=2, progress=False)
    assert resumed["iteration"] == 1
    assert np.load(tmp_path / "labels" / "iter_001" / "chunk_0000.npz")["windows"].shape[-1] == 5 * rings
