"""meeplelab ladder on the dice-race test game: outputs, equality with eval, parts, equal time."""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner

from envs.core.errors import ConfigError
from experiments.eval.config import build_spec
from experiments.eval.evaluate import run_evaluation, summarize_run
from experiments.eval.ladder import (
    build_ladder_spec,
    combine_parts,
    equal_time,
    ladder,
    parse_seed_range,
    play_part,
)
from tests.paths import REPO_ROOT

AGENTS = "random,prefer:action=2,prefer:action=1"


def _ladder(args: list[str]) -> str:
    result = CliRunner().invoke(ladder, [*args, "--no-progress"])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.output
    return result.output


def _eval_summary(players: int, suite: str | None = "smoke", seed: int | None = None,
                  games: int | None = None):
    """eval's summary of the same games (solo dice-race has evaluation points, which the ladder ranks)."""
    metric = "evaluation" if players == 1 else "total"
    spec = build_spec("dice-race", AGENTS, games, seed, players, suite=suite, metric=metric)
    return summarize_run(run_evaluation(spec, progress=False))


@pytest.mark.parametrize("players", [1, 2])
def test_ladder_on_the_smoke_suite_writes_its_files_and_matches_eval(tmp_path, players):
    out = tmp_path / "ladder"
    text = _ladder(["dice-race", "--players", str(players), "--agents", AGENTS, "--suite", "smoke", "--out",
                    str(out)])
    for name in ("ladder.md", "ladder.csv", "ladder.png", "summary.json"):
        assert (out / name).stat().st_size > 0, name
    assert "meeplelab ladder dice-race" in (out / "ladder.md").read_text() and "| rank |" in text
    table = pd.read_csv(out / "ladder.csv")
    summary = _eval_summary(players)
    assert list(table["mean"]) == sorted(table["mean"], reverse=True)
    for row in table.to_dict("records"):
        mine = summary["agents"][row["agent"]]
        assert row["mean"] == pytest.approx(mine["mean"]) and row["seeds"] == 5
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(mine["ci95_t"]))
    pairs = {(p["a"], p["b"]): p for p in summary["pairs"]}
    for row in table.to_dict("records")[:-1]:
        key = (row["agent"], row["below"])
        sign = 1.0 if key in pairs else -1.0
        pair = pairs.get(key) or pairs[(row["below"], row["agent"])]
        assert row["diff_below"] == pytest.approx(sign * pair["mean_difference"])
        assert row["p_value"] == pytest.approx(pair["t_pvalue"])
    if players == 1:
        assert "elo" not in table
    else:
        ratings = summary["ratings"]
        elo = dict(zip(ratings["names"], ratings["elo"], strict=True))
        for row in table.to_dict("records"):
            assert row["elo"] == pytest.approx(elo[row["agent"]])
            assert row["elo_ci_low"] <= row["elo"] + 1e-6 <= row["elo_ci_high"] + 2e-6


def test_parts_over_seed_ranges_combine_to_the_whole_run(tmp_path, capsys):
    out = tmp_path / "parts"

    def part(seeds: str, where=out):
        spec, _ = build_ladder_spec("dice-race", AGENTS, None, None, seeds, None, None)
        return play_part(spec, where, progress=False)

    assert part("10-15") is not None and part("16-21") is not None
    assert part("16-21") is None and "not replayed" in capsys.readouterr().err
    whole = _eval_summary(1, suite=None, seed=10, games=12)
    combined = summarize_run(combine_parts([out]))
    for agent, entry in whole["agents"].items():
        mine = combined["agents"][agent]
        assert mine["mean"] == pytest.approx(entry["mean"]) and mine["n"] == 12
    elsewhere = tmp_path / "other"
    part("22-23", elsewhere)
    merged = tmp_path / "merged"
    _ladder(["--combine", str(out), str(elsewhere), "--out", str(merged)])
    assert pd.read_csv(merged / "ladder.csv")["seeds"].tolist() == [14, 14, 14]
    assert combine_parts([out, elsewhere]).spec.seeds == tuple(range(10, 24))


def test_parts_of_different_ladders_do_not_combine(tmp_path):
    _ladder(["dice-race", "--agents", AGENTS, "--seeds", "0-1", "--out", str(tmp_path / "a")])
    _ladder(["dice-race", "--agents", "random,prefer:action=2", "--seeds", "2-3", "--out",
             str(tmp_path / "b")])
    with pytest.raises(ConfigError, match="disagree on agents"):
        combine_parts([tmp_path / "a", tmp_path / "b"])


def test_combine_keeps_named_rungs_from_parts_with_different_lineups(tmp_path):
    # seeds 0-3 with three rungs, seeds 4-7 with one of them plus another: the kept rung's games
    # are the games a ladder of that rung alone plays on seeds 0-7 (a solo game depends only on
    # its seed and its agent)
    for agents, seeds, out in ((AGENTS, "0-3", "a"), ("prefer:action=2,random", "4-7", "b"),
                               ("random,prefer:action=2", "0-7", "alone")):
        _ladder(["dice-race", "--agents", agents, "--seeds", seeds, "--out", str(tmp_path / out)])
    merged = tmp_path / "merged"
    _ladder(["--combine", str(tmp_path / "a"), str(tmp_path / "b"), "--agents", "random,prefer:action=2",
             "--out", str(merged)])
    table = pd.read_csv(merged / "ladder.csv").set_index("agent")
    alone = pd.read_csv(tmp_path / "alone" / "ladder.csv").set_index("agent")
    assert sorted(table.index) == sorted(alone.index) and table["seeds"].tolist() == [8, 8]
    for column in ("mean", "ci_low", "ci_high"):
        assert table[column].to_dict() == pytest.approx(alone[column].to_dict())
    assert table["diff_below"].dropna().tolist() == pytest.approx(alone["diff_below"].dropna().tolist())
    run = combine_parts([tmp_path / "a", tmp_path / "b"], ["prefer:action=2"])
    assert run.spec.seeds == tuple(range(8)) and set(run.rows.lineup) == {0}
    run = combine_parts([tmp_path / "a", tmp_path / "b"], ["prefer:action=1", "prefer:action=2"])
    assert run.spec.seeds == tuple(range(4)), "only the seeds both rungs played"
    with pytest.raises(ConfigError, match="no ladder part played prefer:action=3"):
        combine_parts([tmp_path / "a"], ["prefer:action=3"])


def test_combine_refuses_to_pick_rungs_out_of_mixed_tables(tmp_path):
    _ladder(["dice-race", "--players", "2", "--agents", AGENTS, "--seeds", "0-1", "--out",
             str(tmp_path / "a")])
    with pytest.raises(ConfigError, match="tables of one agent each"):
        combine_parts([tmp_path / "a"], ["random"])


def test_equal_time_gives_search_agents_a_time_budget_only():
    assert equal_time("mcts:simulations=64,rollout=greedy", 0.5) == \
        "mcts:simulations=none,rollout=greedy,time_limit=0.5"
    assert equal_time("greedy", 0.5) == "greedy"
    spec, seconds = build_ladder_spec("dorfromantik", "greedy,mcts:engine=compiled,simulations=8", None,
                                      "smoke", None, 0.25, None)
    assert seconds == 0.25 and spec.agents[1] == "mcts:engine=compiled,simulations=none,time_limit=0.25"


def test_seed_ranges_and_suites():
    assert parse_seed_range("3-7") == (3, 7) and parse_seed_range("4") == (4, 4)
    for bad in ("7-3", "a-b", "-1-2"):
        with pytest.raises(ConfigError, match="--seeds"):
            parse_seed_range(bad)
    spec, _ = build_ladder_spec("dice-race", AGENTS, None, "test", "1000010-1000019", None, None)
    assert spec.seeds == tuple(range(1000010, 1000020))
    with pytest.raises(ConfigError, match="no seed of suite"):
        build_ladder_spec("dice-race", AGENTS, None, "smoke", "100-200", None, None)


def test_shipped_ladder_configs_are_valid():

    configs = sorted((REPO_ROOT / "configs" / "ladder").glob("*.yaml"))
    assert len(configs) >= 5
    for path in configs:
        spec, _ = build_ladder_spec(None, None, None, None, None, None, str(path))
        assert spec.seeds and len(spec.agents) >= 2, path.name


def test_an_interrupted_part_is_summarised_but_not_marked_complete(tmp_path, monkeypatch):
    import experiments.eval.ladder as ladder_module

    real = ladder_module.run_evaluation

    def stopped_after_three_seeds(spec, **kwargs):  # what Ctrl-C leaves: the seeds every agent finished
        run = real(spec, **kwargs)
        run.rows = run.rows[run.rows.seed < spec.seeds[0] + 3]
        run.records = [r for r in run.records if r.seed < spec.seeds[0] + 3]
        run.interrupted = True
        return run

    monkeypatch.setattr(ladder_module, "run_evaluation", stopped_after_three_seeds)
    out = tmp_path / "cut"
    text = _ladder(["dice-race", "--agents", AGENTS, "--seeds", "0-5", "--out", str(out)])
    assert "interrupted" in text
    assert pd.read_csv(out / "ladder.csv")["seeds"].tolist() == [3, 3, 3]
    assert not list(out.glob("parts/*/ladder_part.json"))  # a rerun plays the part again


LADDER_CONFIGS = sorted((REPO_ROOT / "configs" / "ladder").glob("*.yaml"))


def test_the_published_ladder_configs_are_found():
    assert len(LADDER_CONFIGS) >= 5  # from any working directory


@pytest.mark.parametrize("path", [str(p) for p in LADDER_CONFIGS],
                         ids=[p.relative_to(REPO_ROOT).as_posix() for p in LADDER_CONFIGS])
def test_every_published_ladder_config_builds_its_game_and_agents(path):
    """README's ladders are run from these files: each one's game, seats and agent specs must build
    (a typo in an agent option would only show hours into a published run)."""
    from agents.base import make_agent
    from envs.core.registry import make_game

    spec, _ = build_ladder_spec(None, None, None, None, None, None, path)
    assert min(spec.seeds) >= 1_000_000 and len(spec.agents) >= 2  # the held-out test suite
    game = make_game(spec.game, **spec.game_options())
    for agent in spec.agents:
        assert make_agent(agent, game) is not None
