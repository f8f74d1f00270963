"""``meeplelab eval GAME --agents A,B,C --games N --seed S``: compare agents on the same seeds.

Reads top to bottom: parse the config (command line or ``--config x.yaml``), build the lineups,
play every (seed, lineup) game with common random numbers, write each game's rows as soon as it
ends, then summarise (per agent, per pair, multiplayer win rates and Bradley-Terry/Elo ratings)
and write ``report.md``, ``summary.json`` and PNG plots.

Seats: with one player every agent plays every seed alone. With P players and k >= P agents,
every P-subset of the agents plays every seed once per cyclic seat rotation (so each agent sits
in each seat equally often); with k < P the agents are repeated round the table and rotated.
"""

from __future__ import annotations

import csv
import importlib
import itertools
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd
import yaml

from agents.base import agent_label, parse_agent_spec
from envs.core.errors import ConfigError
from envs.core.game import Game
from envs.core.registry import make_game
from experiments import stats
from experiments.runner import FinalInfo, GameRecord, build_agents, play_game
from experiments.suites import resolve_seeds

CONFIG_KEYS = {"game": str, "agents": list, "games": int, "seed": int, "players": int,
               "suite": str, "options": dict}


@dataclass
class EvalSpec:
    """What to evaluate: a game (with options), agents, seeds."""

    game: str
    agents: list[str]
    seeds: tuple[int, ...]
    players: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    seeds_label: str = ""

    def game_options(self) -> dict[str, Any]:
        options = dict(self.options)
        if self.players is not None:
            options["players"] = self.players
        return options


@dataclass
class EvalRun:
    """Every game played, as records and as one row per (game, seat)."""

    spec: EvalSpec
    players: int
    records: list[GameRecord]
    rows: pd.DataFrame
    best: GameRecord | None = None
    #: stopped by Ctrl-C: records and rows then hold only the seeds every lineup finished
    interrupted: bool = False


# ---- config -------------------------------------------------------------------------------

def split_agents(text: str | Sequence[str]) -> list[str]:
    """``"random,mcts:simulations=64,rollout=greedy,greedy"`` -> agent specs.

    A comma starts a new agent unless the piece is ``key=value`` (an option of the previous one).
    """
    pieces = text.split(",") if isinstance(text, str) else list(text)
    specs: list[str] = []
    for piece in (p.strip() for p in pieces):
        if not piece:
            continue
        if "=" in piece and ":" not in piece and specs:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    if not specs:
        raise ConfigError("no agents given")
    for spec in specs:
        parse_agent_spec(spec)  # raises ConfigError on malformed options
    labels = [agent_label(s) for s in specs]
    duplicates = sorted({x for x in labels if labels.count(x) > 1})
    if duplicates:
        raise ConfigError(f"agent(s) listed twice: {', '.join(duplicates)}")
    return specs


def load_config(path: str | Path) -> dict[str, Any]:
    """Read an eval config; an unknown key or a value of the wrong type raises ConfigError
    naming the key."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} not found") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"config {path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config {path}: expected a mapping of keys to values")
    for key, value in data.items():
        if key not in CONFIG_KEYS:
            raise ConfigError(f"config {path}: unknown key {key!r}; known keys: {', '.join(CONFIG_KEYS)}")
        expected = CONFIG_KEYS[key]
        if key == "agents" and isinstance(value, str):
            continue
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ConfigError(f"config {path}: key {key!r} must be a {expected.__name__}, "
                              f"got {type(value).__name__} {value!r}")
    if "agents" in data and isinstance(data["agents"], list):
        for i, agent in enumerate(data["agents"]):
            if not isinstance(agent, str):
                raise ConfigError(f"config {path}: key 'agents' item {i} must be a string "
                                  "like 'mcts:simulations=64'")
    return data


def build_spec(game: str | None, agents: str | Sequence[str] | None, games: int | None, seed: int | None,
               players: int | None, suite: str | None = None, config: str | None = None,
               default_games: int = 100) -> EvalSpec:
    """Merge a YAML config with command-line values (the command line wins)."""
    data = load_config(config) if config else {}
    game = game or data.get("game")
    agents = agents or data.get("agents")
    if not game:
        raise ConfigError("no game given (argument GAME or key 'game' in --config)")
    if not agents:
        raise ConfigError("no agents given (--agents or key 'agents' in --config)")
    if suite is None and seed is None and games is None:
        suite = data.get("suite")
    if suite is None:
        seed = data.get("seed") if seed is None else seed
        games = data.get("games") if games is None else games
    seeds, label = resolve_seeds(suite, seed, games, default_games=default_games)
    players = players if players is not None else data.get("players")
    if players is not None and players < 1:
        raise ConfigError(f"players must be at least 1, got {players}")
    return EvalSpec(game=game, agents=split_agents(agents), seeds=seeds, players=players,
                    options=dict(data.get("options") or {}), seeds_label=label)


def lineups(agents: Sequence[str], players: int) -> list[tuple[str, ...]]:
    """Seat assignments played on every seed (see the module docstring)."""
    if players == 1:
        return [(a,) for a in agents]
    if len(agents) >= players:
        groups = list(itertools.combinations(agents, players))
    else:
        groups = [tuple(agents[i % len(agents)] for i in range(players))]
    rotations = [group[r:] + group[:r] for group in groups for r in range(players)]
    return list(dict.fromkeys(rotations))  # repeated agents make some rotations identical


def check_agents(game: Game, agents: Sequence[str]) -> None:
    """Build every agent once, so a bad name or option fails before any game is played."""
    build_agents(game, list(agents))


# ---- playing ------------------------------------------------------------------------------

class RowWriter:
    """Appends rows to a CSV file as they come, flushing after every game (Ctrl-C loses nothing)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", newline="")
        self._writer: csv.DictWriter | None = None

    def write(self, rows: list[dict[str, Any]]) -> None:
        if self._writer is None:
            self._writer = csv.DictWriter(self._file, fieldnames=list(rows[0]), extrasaction="ignore")
            self._writer.writeheader()
        self._writer.writerows(rows)
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def iterate_games(spec: EvalSpec, players: int) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """(seed, lineup index, lineup) in play order: seed by seed, so every agent's games grow
    together and a partial run is still paired."""
    table = lineups(spec.agents, players)
    for seed in spec.seeds:
        for index, lineup in enumerate(table):
            yield seed, index, lineup


def resolve_final_info(target: str | None, game: Game) -> FinalInfo | None:
    """``"module:function"`` -> ``function(game)``, the per-game hook (by name, so Ray workers
    can rebuild it)."""
    if target is None:
        return None
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)(game)


def play_games(game_name: str, game_target: str, options: dict[str, Any], agent_targets: dict[str, str],
               jobs: list[tuple[int, int, tuple[str, ...]]], final_info: str | None = None,
               ) -> list[tuple[int, int, GameRecord]]:
    """Play ``jobs`` (seed, lineup index, lineup) in a fresh process (a Ray worker); the names
    registered only in the driver (test games and agents) come along as targets."""
    from agents.base import AGENTS
    from envs.core.registry import GAMES

    GAMES.setdefault(game_name, game_target)
    for name, target in agent_targets.items():
        AGENTS.setdefault(name, target)
    game = make_game(game_name, **options)
    hook = resolve_final_info(final_info, game)
    return [(seed, index, play_game(game, list(lineup), seed, final_info=hook))
            for seed, index, lineup in jobs]


def _play_here(game: Game, jobs: list, keep_state: bool, hook: FinalInfo | None) -> Iterator[list]:
    for seed, index, lineup in jobs:
        record = play_game(game, list(lineup), seed, keep_final_state=keep_state, final_info=hook)
        yield [(seed, index, record)]


def _play_on_ray(spec: EvalSpec, jobs: list, final_info: str | None, workers: int) -> Iterator[list]:
    """Chunks of consecutive jobs as Ray tasks, at most ``workers`` in flight; yields each chunk's
    results as it finishes."""
    from agents.base import AGENTS
    from envs.core.registry import GAMES
    from experiments.simulate import start_ray

    ray = start_ray(workers, None)
    remote = ray.remote(num_cpus=1, max_retries=3)(play_games)
    size = max(1, -(-len(jobs) // (workers * 4)))
    chunks = [jobs[i:i + size] for i in range(0, len(jobs), size)]
    names = {parse_agent_spec(a)[0] for a in spec.agents}
    args = (spec.game, GAMES[spec.game.strip().lower()], spec.game_options(),
            {n: AGENTS[n] for n in names if n in AGENTS})
    in_flight: dict[Any, int] = {}
    try:
        while chunks or in_flight:
            while chunks and len(in_flight) < workers:
                in_flight[remote.remote(*args, chunks.pop(0), final_info)] = 1
            done, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                in_flight.pop(ref)
                yield ray.get(ref)
    finally:
        for ref in in_flight:
            ray.cancel(ref, force=True)


def run_evaluation(spec: EvalSpec, out_dir: Path | None = None, progress: bool = True,
                   keep_best_state: bool = False, final_info: str | None = None,
                   game: Game | None = None, workers: int = 1) -> EvalRun:
    """Play every game of ``spec``; write ``games.csv`` in ``out_dir`` incrementally.

    ``keep_best_state`` keeps the final state of the highest-scoring game (``EvalRun.best``; with
    several workers the best game is replayed here, which gives the identical game);
    ``final_info`` ("module:function(game) -> hook") adds game-level columns read from each final
    state. ``workers`` > 1 plays chunks of games as Ray tasks: the records are the same as with
    one worker (each game depends only on its seed and lineup), sorted back into play order.
    """
    from tqdm import tqdm

    game = game or make_game(spec.game, **spec.game_options())
    players = game.num_players()
    check_agents(game, spec.agents)
    jobs = list(iterate_games(spec, players))
    writer = RowWriter(out_dir / "games.csv") if out_dir is not None else None
    played: list[tuple[int, int, GameRecord]] = []
    best: GameRecord | None = None
    interrupted = False
    batches = _play_on_ray(spec, jobs, final_info, workers) if workers > 1 else \
        _play_here(game, jobs, keep_best_state, resolve_final_info(final_info, game))
    bar = tqdm(total=len(jobs), desc=f"{spec.game} eval", unit="game", disable=not progress,
               dynamic_ncols=True)
    try:
        for batch in batches:
            for seed, index, record in batch:
                if writer is not None:
                    writer.write([{**row, "lineup": index} for row in record.seat_rows()])
                if best is None or max(record.totals) > max(best.totals):
                    if best is not None:
                        best.final_state = None  # keep one final state only
                    best = record
                elif record is not best:
                    record.final_state = None
                played.append((seed, index, record))
            bar.update(len(batch))
    except KeyboardInterrupt:
        interrupted = True
        per_seed = len(lineups(spec.agents, players))
        complete = {seed for seed in spec.seeds if sum(p[0] == seed for p in played) == per_seed}
        if not complete:
            raise
        played = [p for p in played if p[0] in complete]
        if best is not None and best.seed not in complete:
            best = max((p[2] for p in played), key=lambda r: max(r.totals))
            best.final_state = None
    finally:
        bar.close()
        if writer is not None:
            writer.close()
    played.sort(key=lambda p: (p[0], p[1]))
    rows = [{**row, "lineup": index} for _, index, record in played for row in record.seat_rows()]
    if keep_best_state and best is not None and best.final_state is None:
        best = play_game(game, best.agents, best.seed, keep_final_state=True)  # deterministic replay
    return EvalRun(spec=spec, players=players, records=[p[2] for p in played], rows=pd.DataFrame(rows),
                   best=best if keep_best_state else None, interrupted=interrupted)


def warn_if_interrupted(run: EvalRun) -> None:
    """Say on stderr that a Ctrl-C cut the run short and what the summary covers."""
    if run.interrupted:
        click.echo(f"interrupted: the summary covers the {run.rows.seed.nunique()} seeds every agent "
                   "finished; games.csv holds every finished game", err=True)


# ---- summarising --------------------------------------------------------------------------

def per_seed_scores(rows: pd.DataFrame, column: str = "total") -> pd.DataFrame:
    """seeds x agents: each agent's mean ``column`` on each seed (the unit of pairing)."""
    table = rows.groupby(["seed", "agent"])[column].mean().unstack("agent")
    return table.dropna()


def summarize_run(run: EvalRun, bootstrap_seed: int = 0) -> dict[str, Any]:
    """Per agent, per pair and (multiplayer) win rates and ratings, as plain JSON-able data."""
    rows, agents = run.rows, [agent_label(a) for a in run.spec.agents]
    by_seed = per_seed_scores(rows)
    summary: dict[str, Any] = {
        "game": run.spec.game, "players": run.players, "seeds": run.spec.seeds_label,
        "games": int(len(by_seed)), "games_played": len(run.records), "agents": {}, "pairs": [],
    }
    categories = [c for c in rows.columns if c.startswith("cat_")]
    for agent in agents:
        mine = rows[rows.agent == agent]
        entry = stats.summarize(mine.total, bootstrap_seed=bootstrap_seed).as_dict()
        entry["categories"] = {c[4:]: float(mine[c].mean()) for c in categories}
        decisions = mine.decisions.sum()
        entry["decision_ms_mean"] = float((mine.decision_ms_mean * mine.decisions).sum() / max(1, decisions))
        entry["decision_ms_max"] = float(mine.decision_ms_max.max())
        entry["decisions_per_game"] = float(mine.decisions.mean())
        summary["agents"][agent] = entry
    for a, b in itertools.combinations(agents, 2):
        summary["pairs"].append(stats.paired_comparison(by_seed[a], by_seed[b], a=a, b=b).as_dict())
    if run.players > 1:
        summary["win_rates"] = win_rates(run.records, agents)
        wins = stats.pairwise_wins_from_scores([r.totals for r in run.records],
                                               [r.agents for r in run.records], agents)
        fit = stats.bradley_terry(wins, names=agents)
        summary["ratings"] = {**fit.as_dict(), "pairwise_wins": wins.tolist()}
    return summary


def win_rates(records: Sequence[GameRecord], agents: Sequence[str]) -> dict[str, dict[str, float]]:
    """Share of seats that won (a shared win counts 1/number of winners), with a Wilson CI."""
    wins = dict.fromkeys(agents, 0.0)
    seats = dict.fromkeys(agents, 0)
    for record in records:
        top = record.winning_seats
        for seat, agent in enumerate(record.agents):
            seats[agent] += 1
            if seat in top:
                wins[agent] += 1.0 / len(top)
    return {a: {"wins": wins[a], "seats": seats[a], "rate": wins[a] / max(1, seats[a]),
                "ci95": stats.wilson_interval(wins[a], seats[a])} for a in agents}


# ---- reporting ----------------------------------------------------------------------------

def _fmt(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f}"


def _ci(pair: Sequence[float], digits: int = 2) -> str:
    return f"[{pair[0]:.{digits}f}, {pair[1]:.{digits}f}]"


def markdown_tables(summary: dict[str, Any]) -> list[str]:
    """The report's tables as Markdown lines (shared by eval and solo-eval reports)."""
    lines = ["| agent | n | mean | SD | SE | 95% t CI | 95% bootstrap CI | P10 | P50 | P90 | min | max "
             "| ms/decision |", "|" + "---|" * 13]
    for name, s in summary["agents"].items():
        lines.append(f"| {name} | {s['n']} | {_fmt(s['mean'])} | {_fmt(s['sd'])} | {_fmt(s['se'])} | "
                     f"{_ci(s['ci95_t'])} | {_ci(s['ci95_bootstrap'])} | {_fmt(s['p10'], 1)} | "
                     f"{_fmt(s['p50'], 1)} | {_fmt(s['p90'], 1)} | {_fmt(s['min'], 0)} | "
                     f"{_fmt(s['max'], 0)} | "
                     f"{_fmt(s['decision_ms_mean'], 3)} |")
    categories = list(next(iter(summary["agents"].values()))["categories"])
    if categories:
        lines += ["", "Mean points per category:", "",
                  "| agent | " + " | ".join(categories) + " |", "|---|" + "---|" * len(categories)]
        for name, s in summary["agents"].items():
            lines.append(f"| {name} | " + " | ".join(_fmt(s["categories"][c]) for c in categories) + " |")
    if summary["pairs"]:
        lines += ["", "Paired comparisons (A - B on the same seeds):", "",
                  "| A | B | n | mean diff | 95% CI | t | p (t) | p (Wilcoxon) |", "|" + "---|" * 8]
        for p in summary["pairs"]:
            lines.append(f"| {p['a']} | {p['b']} | {p['n']} | {_fmt(p['mean_difference'])} | "
                         f"{_ci(p['ci95'])} | {_fmt(p['t_statistic'])} | {p['t_pvalue']:.3g} | "
                         f"{p['wilcoxon_pvalue']:.3g} |")
    if "win_rates" in summary:
        ratings = summary["ratings"]
        elo = dict(zip(ratings["names"], ratings["elo"], strict=True))
        lines += ["", "Multiplayer: win rate (shared wins split) and Bradley-Terry rating (Elo scale, "
                  f"mean 1500{'; regularised' if ratings['prior_games'] else ''}):", "",
                  "| agent | seats | win rate | 95% Wilson CI | Elo |", "|---|---|---|---|---|"]
        for name, w in summary["win_rates"].items():
            lines.append(f"| {name} | {w['seats']} | {_fmt(w['rate'], 3)} | {_ci(w['ci95'], 3)} | "
                         f"{_fmt(elo[name], 0)} |")
    return lines


def write_report(run: EvalRun, summary: dict[str, Any], out_dir: Path) -> list[Path]:
    """``report.md``, ``summary.json`` and the plots in ``out_dir``; returns the files written."""
    from experiments import plots

    out_dir.mkdir(parents=True, exist_ok=True)
    scores = {a: run.rows[run.rows.agent == a].total.to_numpy() for a in summary["agents"]}
    written = [plots.score_histograms(scores, out_dir / "scores.png", title=f"{run.spec.game}: final scores")]
    if summary["pairs"]:
        by_seed = per_seed_scores(run.rows)
        diffs = {f"{p['a']} - {p['b']}": (by_seed[p["a"]] - by_seed[p["b"]]).to_numpy()
                 for p in summary["pairs"]}
        cis = {f"{p['a']} - {p['b']}": tuple(p["ci95"]) for p in summary["pairs"]}
        written.append(plots.paired_difference_plot(diffs, cis, out_dir / "paired_differences.png"))
    lines = [f"# {run.spec.game}: evaluation of {', '.join(summary['agents'])}", "",
             f"{summary['games']} seeds ({summary['seeds']}), {run.players} player(s), "
             f"{summary['games_played']} games; every agent played the same seeds (common random numbers).",
             "", *markdown_tables(summary), "", "![scores](scores.png)"]
    if summary["pairs"]:
        lines.append("![paired differences](paired_differences.png)")
    (out_dir / "report.md").write_text("\n".join(lines) + "\n")
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=_json_default))
    return [*written, out_dir / "report.md", out_dir / "summary.json", out_dir / "games.csv"]


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def print_tables(summary: dict[str, Any]) -> None:
    """The summary as rich tables on stdout."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"{summary['game']}: {summary['games']} seeds ({summary['seeds']}), "
                        f"{summary['players']} player(s)")
    for column in ("agent", "mean", "SD", "95% CI (t)", "95% CI (bootstrap)", "P10/P50/P90", "min/max",
                   "ms/decision"):
        table.add_column(column, justify="left" if column == "agent" else "right", overflow="fold")
    for name, s in summary["agents"].items():
        table.add_row(name, _fmt(s["mean"]), _fmt(s["sd"]), _ci(s["ci95_t"]), _ci(s["ci95_bootstrap"]),
                      f"{s['p10']:.0f}/{s['p50']:.0f}/{s['p90']:.0f}", f"{s['min']:.0f}/{s['max']:.0f}",
                      _fmt(s["decision_ms_mean"], 3))
    console.print(table)
    if summary["pairs"]:
        pairs = Table(title="paired differences (A - B, same seeds)")
        for column in ("A", "B", "mean diff", "95% CI", "p (t)", "p (Wilcoxon)"):
            pairs.add_column(column, justify="right", overflow="fold")
        for p in summary["pairs"]:
            pairs.add_row(p["a"], p["b"], _fmt(p["mean_difference"]), _ci(p["ci95"]), f"{p['t_pvalue']:.3g}",
                          f"{p['wilcoxon_pvalue']:.3g}")
        console.print(pairs)
    if "win_rates" in summary:
        elo = dict(zip(summary["ratings"]["names"], summary["ratings"]["elo"], strict=True))
        note = "; regularised: someone never won" if summary["ratings"]["prior_games"] else ""
        wins = Table(title=f"win rates and Bradley-Terry ratings (Elo scale{note})")
        for column in ("agent", "win rate", "95% Wilson CI", "Elo"):
            wins.add_column(column, justify="right", overflow="fold")
        for name, w in summary["win_rates"].items():
            wins.add_row(name, _fmt(w["rate"], 3), _ci(w["ci95"], 3), _fmt(elo[name], 0))
        console.print(wins)


# ---- command ------------------------------------------------------------------------------

@click.command(name="eval")
@click.argument("game", required=False)
@click.option("--agents", help="Comma-separated agent specs, e.g. random,greedy,mcts:simulations=64.")
@click.option("--games", type=int, help="Number of seeds (default 100).")
@click.option("--seed", type=int, help="First seed (default 0).")
@click.option("--suite", help="Named seed suite from configs/suites.yaml (instead of --seed/--games).")
@click.option("--players", type=int, help="Number of seats (default: the game's default).")
@click.option("--config", type=click.Path(dir_okay=False), help="YAML config (game, agents, games, seed, "
              "players, suite, options); command-line values win.")
@click.option("--out", type=click.Path(file_okay=False), help="Write games.csv, report.md, summary.json and "
              "plots here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@click.option("--workers", type=int, default=1, show_default=True,
              help="Play games in parallel as local Ray tasks (same results as 1).")
def evaluate(game: str | None, agents: str | None, games: int | None, seed: int | None,
             suite: str | None, players: int | None, config: str | None, out: str | None, as_json: bool,
             no_progress: bool, workers: int) -> None:
    """Compare agents on GAME with common random numbers (the same seeds for every agent)."""
    spec = build_spec(game, agents, games, seed, players, suite=suite, config=config)
    out_dir = Path(out) if out else None
    if workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    run = run_evaluation(spec, out_dir=out_dir, progress=not no_progress, workers=workers)
    warn_if_interrupted(run)
    summary = summarize_run(run)
    if out_dir is not None:
        write_report(run, summary, out_dir)
    if as_json:
        click.echo(json.dumps(summary, indent=2, default=_json_default))
    else:
        print_tables(summary)
        if out_dir is not None:
            click.echo(f"wrote {out_dir}/games.csv, report.md, summary.json, scores.png"
                       + (", paired_differences.png" if summary["pairs"] else ""))
