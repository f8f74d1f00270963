"""meeplelab eval on the dice-race test game: outputs, pairing, configs, suites, errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from envs.core.errors import ConfigError
from experiments.cli.main import cli
from experiments.eval import stats
from experiments.eval.config import build_spec, load_config, split_agents
from experiments.eval.run import lineups
from experiments.eval.suites import load_suite, resolve_seeds
from tests.paths import CONFIGS


def _invoke(args: list[str]):
    result = CliRunner().invoke(cli, args)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def test_eval_solo_writes_games_report_plots_and_json(tmp_path):
    out = tmp_path / "run"
    result = _invoke(["eval", "dice-race", "--agents", "random,prefer:action=2", "--games", "40",
                      "--seed", "7", "--out", str(out), "--json", "--no-progress"])
    summary = json.loads(result.output)
    for name in ("games.csv", "report.md", "summary.json", "scores.png", "paired_differences.png"):
        assert (out / name).stat().st_size > 0, name
    games = pd.read_csv(out / "games.csv")
    assert len(games) == 80 and sorted(games.seed.unique()) == list(range(7, 47))
    assert summary["games"] == 40 and set(summary["agents"]) == {"random", "prefer(action=2)"}
    rnd = games[games.agent == "random"].set_index("seed").total
    pre = games[games.agent == "prefer(action=2)"].set_index("seed").total
    pair = summary["pairs"][0]  # the agent listed later minus the one listed first
    assert (pair["a"], pair["b"]) == ("prefer(action=2)", "random")
    ref = stats.paired_comparison(pre.sort_index(), rnd.sort_index())
    assert pair["mean_difference"] == pytest.approx(ref.mean_difference)
    assert pair["t_pvalue"] == pytest.approx(ref.t_pvalue)
    assert summary["agents"]["random"]["mean"] == pytest.approx(rnd.mean())
    assert summary["agents"]["random"]["categories"]["bank"] == pytest.approx(
        games[games.agent == "random"].cat_bank.mean())
    assert "Paired comparisons" in (out / "report.md").read_text()
    assert "win_rates" not in summary


def test_eval_multiplayer_rotates_seats_and_rates_agents(tmp_path):
    result = _invoke(["eval", "dice-race", "--agents", "random,prefer:action=1,prefer:action=2", "--players",
                      "2", "--games", "30", "--json", "--no-progress", "--out", str(tmp_path)])
    summary = json.loads(result.output)
    games = pd.read_csv(tmp_path / "games.csv")
    # 3 pairs x 2 seat orders per seed, every agent in every seat equally often
    assert summary["games_played"] == 30 * 6
    assert (games.groupby(["agent", "seat"]).size() == 60).all()
    rates = summary["win_rates"]
    assert all(0 <= w["ci95"][0] <= w["rate"] <= w["ci95"][1] <= 1 for w in rates.values())
    assert sum(w["wins"] for w in rates.values()) == pytest.approx(summary["games_played"])
    elo = dict(zip(summary["ratings"]["names"], summary["ratings"]["elo"], strict=True))
    assert elo["prefer(action=2)"] > elo["prefer(action=1)"]  # gambling beats a flat 3 per turn
    for name, (low, high) in zip(summary["ratings"]["names"], summary["ratings"]["elo_ci95"], strict=True):
        assert low <= elo[name] <= high


def test_eval_one_agent_in_every_seat_summarises_without_ratings(tmp_path):
    result = _invoke(["eval", "dice-race", "--agents", "random", "--players", "3", "--games", "6", "--json",
                      "--no-progress", "--out", str(tmp_path)])
    summary = json.loads(result.output)
    games = pd.read_csv(tmp_path / "games.csv")
    assert summary["games_played"] == 6 and len(games) == 18  # one game per seed, every seat random
    assert summary["agents"]["random"]["n"] == 18
    assert "ratings" not in summary and summary["pairs"] == []


def test_lineups():
    assert lineups(["a", "b"], 1) == [("a",), ("b",)]
    assert lineups(["a", "b"], 2) == [("a", "b"), ("b", "a")]
    assert len(lineups(["a", "b", "c", "d"], 3)) == 4 * 3
    assert lineups(["a", "b"], 4) == [("a", "b", "a", "b"), ("b", "a", "b", "a")]  # no duplicate games
    assert lineups(["a", "b"], 3, "same") == [("a", "a", "a"), ("b", "b", "b")]


def test_eval_same_seating_gives_each_agent_its_own_table_and_compares_the_metric(tmp_path):
    result = _invoke(["eval", "dice-race", "--agents", "random,prefer:action=1", "--players", "3",
                      "--games", "12", "--seating", "same", "--metric", "gambles", "--json", "--no-progress",
                      "--out", str(tmp_path)])
    summary = json.loads(result.output)
    games = pd.read_csv(tmp_path / "games.csv")
    assert summary["games_played"] == 24 and len(games) == 72
    assert (games.groupby(["seed", "lineup"]).agent.nunique() == 1).all()  # one agent per table
    per_seed = games.groupby(["seed", "agent"]).x_gambles.mean().unstack()  # mean over the seats
    ref = stats.paired_comparison(per_seed["prefer(action=1)"], per_seed["random"])
    assert summary["pairs"][0]["mean_difference"] == pytest.approx(ref.mean_difference)
    mine = games[games.agent == "random"]
    assert summary["pairs"][0]["mean_difference"] != pytest.approx(
        games[games.agent != "random"].total.mean() - mine.total.mean())  # gambles, not totals
    assert summary["agents"]["random"]["mean"] == pytest.approx(mine.x_gambles.mean())
    # the CI treats the seed as the unit: the three seats of one table are not independent
    assert summary["agents"]["random"]["ci95_t"] == pytest.approx(stats.t_interval(per_seed["random"]))
    assert summary["agents"]["random"]["n_seeds"] == 12 and summary["agents"]["random"]["n"] == 36
    assert "win_rates" not in summary and "ratings" not in summary
    assert summary["metric"] == "gambles" and summary["seating"] == "same"
    assert "each agent in every seat of its own table" in (tmp_path / "report.md").read_text()
    with pytest.raises(ConfigError, match="metric 'luck' is not a score of dice-race; known: total, gambles"):
        _invoke(["eval", "dice-race", "--agents", "random", "--games", "2", "--metric", "luck"])
    with pytest.raises(ConfigError, match="seating must be one of mixed, same"):
        build_spec("dice-race", "random", 2, 0, 2, seating="alone")


def test_split_agents_keeps_options_together():
    assert split_agents("random,mcts:simulations=48,rollout=greedy,greedy") == [
        "random", "mcts:simulations=48,rollout=greedy", "greedy"]
    # an option's value may hold a colon (a network path); a piece with a colon in its key is an agent
    text = "greedy,mcts:prior=ppo:runs/x,value=ppo:runs/x,simulations=8,ppo:runs/x,label=net"
    assert split_agents(text) == [
        "greedy", "mcts:prior=ppo:runs/x,value=ppo:runs/x,simulations=8", "ppo:runs/x,label=net"]
    with pytest.raises(ConfigError, match="listed twice"):
        split_agents("random,random")
    with pytest.raises(ConfigError, match="not of the form key=value"):
        split_agents("mcts:simulations")


def test_config_file_and_command_line(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("game: dice-race\nagents: [random, 'prefer:action=1']\ngames: 12\nseed: 4\nplayers: 2\n")
    spec = build_spec(None, None, None, None, None, config=str(path))
    assert spec.game == "dice-race" and spec.players == 2 and spec.seeds == tuple(range(4, 16))
    # the command line wins key by key: games from it, seed still from the file
    assert build_spec(None, None, 3, None, None, config=str(path)).seeds == (4, 5, 6)
    path.write_text(path.read_text() + "seating: same\nmetric: gambles\n")
    spec = build_spec(None, None, None, None, None, config=str(path), metric="total")
    assert spec.seating == "same" and spec.metric == "total" and spec.metric_column == "total"
    assert build_spec(None, None, None, None, None, config=str(path)).metric_column == "x_gambles"


@pytest.mark.parametrize("text, key", [
    ("game: dice-race\nagents: random\ngames: ten\n", "'games'"),
    ("game: dice-race\nagent: random\n", "'agent'"),
    ("game: dice-race\nagents: [random, 3]\n", "'agents' item 1"),
    ("- just\n- a list\n", "mapping"),
])
def test_malformed_config_names_the_key(tmp_path, text, key):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=key):
        load_config(path)


def test_shipped_configs_are_valid():
    paths = sorted(CONFIGS.glob("eval_*.yaml"))
    assert len(paths) >= 3  # found from any working directory
    for path in paths:
        assert load_config(path)["agents"], path


def test_suites():
    dev = load_suite("dev")
    assert dev.seeds[0] == 0 and len(dev.seeds) == 200
    assert set(load_suite("test").seeds).isdisjoint(dev.seeds)
    assert resolve_seeds(None, 5, 3)[0] == (5, 6, 7)
    with pytest.raises(ConfigError, match="unknown seed suite 'nope'"):
        load_suite("nope")
    with pytest.raises(ConfigError, match="not both"):
        resolve_seeds("dev", 1, None)


def test_unknown_game_agent_and_options_are_clear_errors(tmp_path):
    path = tmp_path / "opts.yaml"
    path.write_text("options: {colour: red}\n")
    with pytest.raises(ConfigError, match="unknown game 'chess'"):
        _invoke(["eval", "chess", "--agents", "random", "--games", "2"])
    with pytest.raises(ConfigError, match="unknown agent 'alphazero'"):
        _invoke(["eval", "dice-race", "--agents", "random,alphazero", "--games", "2"])
    with pytest.raises(ConfigError, match="bad options for game 'dice-race'"):
        _invoke(["eval", "dice-race", "--agents", "random", "--games", "2", "--config", str(path)])
    with pytest.raises(ConfigError, match="players must be at least 1"):
        build_spec("dice-race", "random", 2, 0, 0)


def test_ctrl_c_keeps_finished_games_and_summarises_complete_seeds(tmp_path, monkeypatch):
    import experiments.eval.evaluate as evaluate_module

    real_play, calls = evaluate_module.play_game, []

    def play_then_interrupt(*args, **kwargs):
        calls.append(1)
        if len(calls) == 8:  # seeds 0-2 done (2 agents each), seed 3 half played
            raise KeyboardInterrupt
        return real_play(*args, **kwargs)

    monkeypatch.setattr(evaluate_module, "play_game", play_then_interrupt)
    spec = build_spec("dice-race", "random,prefer:action=1", 10, 0, None)
    run = evaluate_module.run_evaluation(spec, out_dir=tmp_path, progress=False)
    assert run.interrupted and sorted(run.rows.seed.unique()) == [0, 1, 2]
    assert len(pd.read_csv(tmp_path / "games.csv")) == 7  # every finished game is on disk
    assert evaluate_module.summarize_run(run)["games"] == 3


def test_eval_command_with_config_and_suite(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text("game: dice-race\nagents: [random, 'prefer:action=0']\nsuite: smoke\n")
    summary = json.loads(_invoke(["eval", "--config", str(path), "--json", "--no-progress"]).output)
    assert summary["seeds"] == "suite smoke" and summary["games"] == 5
    summary = json.loads(_invoke(["eval", "--config", str(path), "--games", "3", "--json",
                                  "--no-progress"]).output)
    assert summary["games"] == 3 and summary["seeds"] == "seeds 0..2"


def test_labels_name_agents_in_the_csv_the_summary_and_the_report(tmp_path):
    out = tmp_path / "run"
    result = _invoke(["eval", "dice-race", "--agents", "random:label=base,prefer:action=2,label=gambler",
                      "--games", "10", "--out", str(out), "--json", "--no-progress"])
    summary = json.loads(result.output)
    assert list(summary["agents"]) == ["base", "gambler"]
    assert (summary["pairs"][0]["a"], summary["pairs"][0]["b"]) == ("gambler", "base")
    assert set(pd.read_csv(out / "games.csv").agent) == {"base", "gambler"}
    report = (out / "report.md").read_text()
    assert "- gambler: `prefer:action=2,label=gambler`" in report and "| gambler |" in report


def test_rerun_without_record_removes_the_earlier_records(tmp_path):
    """A rerun into the same --out never leaves records/ of a run that is no longer there."""
    args = ["eval", "dice-race", "--agents", "random,prefer:action=2", "--games", "3", "--no-progress",
            "--out", str(tmp_path)]
    _invoke([*args, "--record", "2"])
    assert len(list((tmp_path / "records").glob("*.jsonl"))) == 2
    result = _invoke(args)
    assert not (tmp_path / "records").exists()
    assert "removed the 2 game records an earlier run left in" in result.output
    _invoke([*args, "--record-seeds", "1"])  # recording again: only this run's records
    assert sorted(p.name for p in (tmp_path / "records").glob("*.jsonl")) == [
        "seed_1_lineup_0.jsonl", "seed_1_lineup_1.jsonl"]


def test_eval_in_80_columns_splits_no_number(tmp_path):
    """Piped into an 80-column console, every figure of the summary prints whole on one line."""
    from experiments.eval.report import ci_text
    result = CliRunner(env={"COLUMNS": "80"}).invoke(cli, [
        "eval", "dice-race", "--agents", "random,prefer:action=1,prefer:action=2", "--players", "2",
        "--games", "6", "--no-progress", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(len(line) <= 80 for line in lines[:-1])  # the last: the files written
    summary = json.loads((tmp_path / "summary.json").read_text())
    for name, s in summary["agents"].items():
        for cell in (name, f"{s['mean']:.2f}", ci_text(s["ci95_t"]), ci_text(s["ci95_bootstrap"])):
            assert any(cell in line for line in lines), cell
    for elo_ci in summary["ratings"]["elo_ci95"]:
        assert any(ci_text(elo_ci, 0) in line for line in lines)


def test_a_ci_without_spread_says_why():
    from experiments.eval.report import NO_SPREAD_NOTE, ci_text, markdown_tables
    assert ci_text([919.2, 918.9], 0) == "919 (no spread)"
    assert ci_text([1.0, 2.0]) == "[1.00, 2.00]" and ci_text([float("nan")] * 2) == "[nan, nan]"
    agent = {"n": 4, "mean": 3.0, "sd": 0.0, "se": 0.0, "ci95_t": [3.0, 3.0], "ci95_bootstrap": [3.0, 3.0],
             "p10": 3, "p50": 3, "p90": 3, "min": 3, "max": 3, "decision_ms_mean": 0.1, "categories": {}}
    text = "\n".join(markdown_tables({"agents": {"a": agent}, "pairs": []}))
    assert "3.00 (no spread)" in text and NO_SPREAD_NOTE in text and "[3.00, 3.00]" not in text
