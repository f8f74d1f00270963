"""meeplelab exit-report: the history table equals the saved state; the ladder of the networks equals eval."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from experiments.cli.main import run
from tests.experiments.train.test_expert_iteration import tiny_config
from tests.paths import REPO_ROOT

#: the state a real two-generation run saved (solo Cartographers, gating on, both candidates rejected)
REAL_STATE = REPO_ROOT / "tests" / "experiments" / "data" / "exit_state_cartographers.json"
TINY_LADDER_SEARCH = "mcts:prior=ppo:{policy},simulations=2,rollout=greedy"
HISTORY_FILES = ("generations.md", "generations.csv", "generations.png")


def _run_folder(tmp_path: Path, state: Path = REAL_STATE) -> Path:
    folder = tmp_path / "run" / "checkpoints" / "gen_001"
    folder.mkdir(parents=True)
    shutil.copyfile(state, folder / "exit_state.json")
    return tmp_path / "run"


def _cli_json(args: list[str], capsys) -> dict:
    capsys.readouterr()
    assert run([*args, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _assert_history_equals_state(out: Path, state: dict) -> None:
    table = pd.read_csv(out / "generations.csv")
    assert len(table) == len(state["history"]) > 0
    evaluations = {e["generation"]: e for e in state["evaluations"]}
    for row, record in zip(table.to_dict("records"), state["history"], strict=True):
        for key, value in record.items():
            assert row[key] == pytest.approx(value), key
        for key, value in evaluations[record["generation"]].items():
            assert row[key if key == "generation" else f"eval_{key}"] == pytest.approx(value), key
    for name in HISTORY_FILES:
        assert (out / name).stat().st_size > 0, name


def test_history_report_equals_the_saved_state(tmp_path, capsys):
    run_dir = _run_folder(tmp_path)
    state = json.loads(REAL_STATE.read_text())
    assert run(["exit-report", str(run_dir)]) == 0
    text = capsys.readouterr().out
    _assert_history_equals_state(run_dir / "report", state)
    first = state["history"][0]
    low, high = first["gating_ci_low"], first["gating_ci_high"]
    assert f"{first['gating_mean_diff']:+.2f} [{low:+.2f}, {high:+.2f}]" in text
    assert text.count("| no |") == 2 and "0 accepted" in text
    assert (run_dir / "report" / "generations.md").read_text() in text
    result = _cli_json(["exit-report", str(run_dir), "--out", str(tmp_path / "o")], capsys)
    assert [g["gating_mean_diff"] for g in result["generations"]] == [h["gating_mean_diff"]
                                                                      for h in state["history"]]
    assert "ladder" not in result


def test_confirmed_generation_shows_its_confirmation(tmp_path, capsys):
    import numpy as np

    from experiments.train.exit_gating import gating_decision, record_fields

    state = json.loads(REAL_STATE.read_text())
    rng = np.random.default_rng(2)
    base, fresh = rng.normal(50, 10, 30), rng.normal(50, 10, 30)
    first, confirmation = (base + 4 + rng.normal(0, 1, 30), base), (fresh + 1 + rng.normal(0, 1, 30), fresh)
    result = gating_decision(first, confirmation)
    assert result["accepted"]
    state["history"][1].update(record_fields(result))
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    run_dir = _run_folder(tmp_path, path)
    assert run(["exit-report", str(run_dir)]) == 0
    text = capsys.readouterr().out
    _assert_history_equals_state(run_dir / "report", state)
    combined = (f"30, {result['combined_mean_diff']:+.2f} [{result['combined_ci_low']:+.2f}, "
                f"{result['combined_ci_high']:+.2f}] | yes |")
    assert combined in text and "1 accepted" in text and text.count("| no |") == 1


def test_bad_run_folders_and_options_fail_in_one_line(tmp_path, capsys):
    corrupt = tmp_path / "corrupt" / "checkpoints" / "gen_000"
    corrupt.mkdir(parents=True)
    (corrupt / "exit_state.json").write_text("{not json")
    (tmp_path / "empty").mkdir()
    real = _run_folder(tmp_path)
    cases = [([str(tmp_path / "missing")], "not an expert-iteration run folder"),
             ([str(tmp_path / "empty")], "not an expert-iteration run folder"),
             ([str(tmp_path / "corrupt")], "unreadable"),
             ([str(real), "--games", "3"], "--games"),
             ([str(real), "--search", TINY_LADDER_SEARCH], "give --suite or --seeds"),
             ([str(real), "--seeds", "0-1", "--search", "greedy"], "{policy} placeholder"),
             ([str(real), "--seeds", "0-1"], "network file(s) missing"),
             ([str(real), "--seeds", "5-1"], "--seeds must be FIRST-LAST")]
    for args, fragment in cases:
        assert run(["exit-report", *args]) == 2, args
        err = capsys.readouterr().err.strip()
        assert fragment in err and len(err.splitlines()) == 1, (args, err)


# ---- a real two-generation run --------------------------------------------------------------

@pytest.fixture(scope="module")
def two_generations(tmp_path_factory, ray_session):
    """A finished two-generation tiny run without gating (both candidates accepted)."""
    from experiments.train.expert_iteration import run_expert_iteration

    out = tmp_path_factory.mktemp("exit_report") / "run"
    config = tiny_config(gating={"enabled": False}, run={"generations": 2, "eval_games": 2})
    return out, run_expert_iteration(config, out, progress=False)


@pytest.mark.slow
def test_history_of_a_real_run(two_generations, capsys):
    out, state = two_generations
    assert run(["exit-report", str(out)]) == 0
    text = capsys.readouterr().out
    saved = json.loads((out / "checkpoints" / "gen_001" / "exit_state.json").read_text())
    assert saved["history"] == state["history"] and [h["accepted"] for h in saved["history"]] == [True, True]
    _assert_history_equals_state(out / "report", saved)
    assert "2 accepted" in text and text.count("| yes |") == 2


@pytest.mark.slow
def test_ladder_of_the_accepted_networks_equals_eval(two_generations, tmp_path, capsys):
    from experiments.train.exit_report import ladder_agents

    out, state = two_generations
    args = ["exit-report", str(out), "--search", TINY_LADDER_SEARCH, "--no-progress"]
    whole = _cli_json([*args, "--seeds", "0-1", "--out", str(tmp_path / "whole")], capsys)
    rungs = {r["agent"]: r for r in whole["ladder"]}
    assert set(rungs) == {"greedy", "init-search", "gen000-search", "gen001-search"}
    assert all(r["seeds"] == 2 for r in rungs.values())
    agents = ladder_agents(out, state, TINY_LADDER_SEARCH, argmax=False)
    assert str((out / "generations" / "gen_001" / "candidate.pt").resolve()) in agents[-1]
    summary = _cli_json(["eval", "cartographers", "--agents", ",".join(agents), "--seed", "0", "--games", "2",
                         "--players", "1", "--metric", "evaluation", "--no-progress"], capsys)
    for name, row in rungs.items():
        assert row["mean"] == pytest.approx(summary["agents"][name]["mean"]), name
    parts = tmp_path / "parts"
    _cli_json([*args, "--seeds", "0-0", "--out", str(parts)], capsys)
    combined = _cli_json([*args, "--seeds", "1-1", "--out", str(parts)], capsys)
    assert {r["agent"]: r["mean"] for r in combined["ladder"]} == pytest.approx(
        {name: r["mean"] for name, r in rungs.items()})
    assert (parts / "ladder.png").is_file() and len(list((parts / "parts").iterdir())) == 2
