"""``meeplelab eval GAME --agents A,B,C --games N --seed S``: compare agents on the same seeds.

Reads top to bottom: parse the config (command line or ``--config x.yaml``), build the lineups,
play every (seed, lineup) game with common random numbers, write each game's rows as soon as it
ends, then summarise (per agent, per pair, multiplayer win rates and Bradley-Terry/Elo ratings)
and write ``report.md``, ``summary.json`` and PNG plots.

Seats: with one player every agent plays every seed alone. With P players and k >= P agents,
every P-subset of the agents plays every seed once per cyclic seat rotation (so each agent sits
in each seat equally often); with k < P the agents are repeated round the table and rotated.
``--seating same`` instead gives every agent a table of its own copies on every seed (how
published multiplayer figures are often quoted: "the same agent in all seats"); an agent's score
on a seed is then the mean over its seats, the pairing unit stays the seed, and win rates and
ratings (meaningless at a table of one agent) are left out. ``--metric`` picks the score
compared: the total, or one of the game's extra scores (Cascadia ``base``: without the majority
bonuses).
"""

from __future__ import annotations

import csv
import importlib
import io
import itertools
import json
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click
import pandas as pd
from tqdm import tqdm

from agents.base import AGENTS, agent_label, parse_agent_spec
from envs.core.errors import ConfigError
from envs.core.game import Game
from envs.core.registry import GAMES, make_game
from experiments.common.local_first import HereFirst
from experiments.common.output_dir import prepare_out_dir
from experiments.common.ray_options import address_option, workers_option
from experiments.common.ray_setup import init_ray, where_running
from experiments.common.runner import FinalInfo, GameRecord, build_agents, play_game
from experiments.common.writes import AppendFile
from experiments.eval import stats
from experiments.eval.config import EvalSpec, build_spec
from experiments.eval.report import json_default, print_tables, write_report
from experiments.eval.run import EvalRun, lineups, per_seed_scores, remove_stale_records, write_eval_records
from experiments.replay.records import record_options, record_request


def check_agents(game: Game, agents: Sequence[str]) -> None:
    """Build every agent once, so a bad name or option fails before any game is played."""
    build_agents(game, list(agents))


def check_metric(game: Game, spec: EvalSpec) -> None:
    """The metric must be "total" or one of the game's extra scores."""
    if spec.metric == "total":
        return
    extra = game.scores(game.new_game(spec.seeds[0] if spec.seeds else 0))[0].extra
    if spec.metric not in extra:
        known = ", ".join(["total", *extra])
        raise ConfigError(f"metric {spec.metric!r} is not a score of {spec.game}; known: {known}")


# ---- playing ------------------------------------------------------------------------------

class RowWriter:
    """Appends rows to a CSV file as they come, one game's rows at a time straight to the file
    (Ctrl-C loses nothing; a full disk leaves every finished game whole: DiskFullError)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._file = AppendFile(self.path)
        self._fields: list[str] | None = None

    def write(self, rows: list[dict[str, Any]]) -> None:
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=self._fields or list(rows[0]), extrasaction="ignore")
        if self._fields is None:
            writer.writeheader()
        writer.writerows(rows)
        self._file.append(text.getvalue())
        self._fields = list(writer.fieldnames)

    def close(self) -> None:
        self._file.close()


def iterate_games(spec: EvalSpec, players: int) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """(seed, lineup index, lineup) in play order: seed by seed, so every agent's games grow
    together and a partial run is still paired."""
    table = lineups(spec.agents, players, spec.seating)
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


#: a Ray task of eval plays about this many seconds of games at most when their cost is known
CHUNK_SECONDS = 60.0


def chunk_size(jobs: int, workers: int, seconds_per_game: float | None = None) -> int:
    """Games per Ray task: about four tasks per worker, and (when the cost of a game is known) no
    more than :data:`CHUNK_SECONDS` of play, so long games report often and Ctrl-C loses little."""
    size = max(1, -(-jobs // (workers * 4)))
    if seconds_per_game:
        size = min(size, max(1, int(CHUNK_SECONDS // seconds_per_game)))
    return size


def _play_local_first(game: Game, spec: EvalSpec, jobs: list, keep_state: bool, final_info: str | None,
                      workers: int) -> Iterator[list]:
    """Games here, one by one, until ``workers`` Ray workers would finish the rest sooner (start-up
    included: :mod:`experiments.common.local_first`); then the rest on a local Ray."""
    hook = resolve_final_info(final_info, game)
    jobs = list(jobs)
    timer = HereFirst(workers)
    while jobs:
        if timer.move_to_ray(len(jobs)):
            tqdm.write(f"eval: {len(jobs)} games left at {timer.seconds_per_unit:.1f} s each; "
                       "starting Ray for them", file=sys.stderr)
            yield from _play_on_ray(spec, jobs, final_info, workers, seconds_per_game=timer.seconds_per_unit)
            return
        begun = time.perf_counter()
        batch = next(_play_here(game, jobs[:1], keep_state, hook))
        timer.add(time.perf_counter() - begun)
        jobs.pop(0)
        yield batch


def _play_on_ray(spec: EvalSpec, jobs: list, final_info: str | None, workers: int,
                 address: str | None = None, seconds_per_game: float | None = None) -> Iterator[list]:
    """Chunks of consecutive jobs as Ray tasks, at most ``workers`` in flight; yields each chunk's
    results as it finishes."""
    ray = init_ray(num_cpus=workers, address=address)
    click.echo(f"eval: {where_running(address)}", err=True)
    remote = ray.remote(num_cpus=1, max_retries=3)(play_games)
    size = chunk_size(len(jobs), workers, seconds_per_game)
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
                   game: Game | None = None, workers: int = 1, address: str | None = None) -> EvalRun:
    """Play every game of ``spec``; write ``games.csv`` in ``out_dir`` incrementally.

    ``keep_best_state`` keeps the final state of the highest-scoring game (``EvalRun.best``; with
    several workers the best game is replayed here, which gives the identical game);
    ``final_info`` ("module:function(game) -> hook") adds game-level columns read from each final
    state. ``workers`` > 1 plays here first and sends the rest as chunks of Ray tasks once that
    pays (:mod:`experiments.common.local_first`): the records are the same as with one worker
    (each game depends only on its seed and lineup), sorted back into play order; ``address``
    sends every game to a running Ray cluster (then even with one worker).
    """
    game = game or make_game(spec.game, **spec.game_options())
    players = game.num_players()
    check_agents(game, spec.agents)
    check_metric(game, spec)
    jobs = list(iterate_games(spec, players))
    writer = RowWriter(out_dir / "games.csv") if out_dir is not None else None
    played: list[tuple[int, int, GameRecord]] = []
    best: GameRecord | None = None
    interrupted = False
    if address:
        batches = _play_on_ray(spec, jobs, final_info, workers, address)
    elif workers > 1:
        batches = _play_local_first(game, spec, jobs, keep_best_state, final_info, workers)
    else:
        batches = _play_here(game, jobs, keep_best_state, resolve_final_info(final_info, game))
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
        per_seed = len(lineups(spec.agents, players, spec.seating))
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
        specs = {agent_label(a): a for a in spec.agents}  # records name agents by label
        best = play_game(game, [specs[a] for a in best.agents], best.seed, keep_final_state=True)  # replay
    return EvalRun(spec=spec, players=players, records=[p[2] for p in played], rows=pd.DataFrame(rows),
                   best=best if keep_best_state else None, interrupted=interrupted)


def warn_if_interrupted(run: EvalRun) -> None:
    """Say on stderr that a Ctrl-C cut the run short and what the summary covers."""
    if run.interrupted:
        click.echo(f"interrupted: the summary covers the {run.rows.seed.nunique()} seeds every agent "
                   "finished; games.csv holds every finished game", err=True)


# ---- summarising --------------------------------------------------------------------------

def summarize_run(run: EvalRun, bootstrap_seed: int = 0) -> dict[str, Any]:
    """Per agent, per pair and (multiplayer) win rates and ratings, as plain JSON-able data."""
    rows, agents = run.rows, [agent_label(a) for a in run.spec.agents]
    column = run.spec.metric_column
    by_seed = per_seed_scores(rows, column)
    summary: dict[str, Any] = {
        "game": run.spec.game, "players": run.players, "seeds": run.spec.seeds_label,
        "seating": run.spec.seating, "metric": run.spec.metric,
        "games": int(len(by_seed)), "games_played": len(run.records), "agents": {}, "pairs": [],
    }
    categories = [c for c in rows.columns if c.startswith("cat_")]
    for agent in agents:
        mine = rows[rows.agent == agent]
        entry = stats.summarize(mine[column], bootstrap_seed=bootstrap_seed).as_dict()
        seed_means = mine.groupby("seed")[column].mean()
        if len(seed_means) < len(mine):
            # several seats per seed share that seed's deck and table, so they are not independent:
            # SD and percentiles describe single seats, SE and CIs take the seed as the unit
            unit = stats.summarize(seed_means, bootstrap_seed=bootstrap_seed)
            entry.update(se=unit.se, ci95_t=unit.ci95_t, ci95_bootstrap=unit.ci95_bootstrap, n_seeds=unit.n)
        entry["categories"] = {c[4:]: float(mine[c].mean()) for c in categories}
        decisions = mine.decisions.sum()
        entry["decision_ms_mean"] = float((mine.decision_ms_mean * mine.decisions).sum() / max(1, decisions))
        entry["decision_ms_max"] = float(mine.decision_ms_max.max())
        entry["decisions_per_game"] = float(mine.decisions.mean())
        summary["agents"][agent] = entry
    for base, later in itertools.combinations(agents, 2):  # later (stronger) minus the baseline before it
        pair = stats.paired_comparison(by_seed[later], by_seed[base], a=later, b=base)
        summary["pairs"].append(pair.as_dict())
    mixed = run.players > 1 and run.spec.seating == "mixed"  # one agent per table: nobody to beat
    if mixed:
        summary["win_rates"] = win_rates(run.records, agents)
    if mixed and len(agents) > 1:  # ratings need at least two agents to compare
        wins = stats.pairwise_wins_from_scores([r.totals for r in run.records],
                                               [r.agents for r in run.records], agents)
        fit = stats.bradley_terry(wins, names=agents)
        by_seed: dict[int, list[GameRecord]] = {}
        for record in run.records:
            by_seed.setdefault(record.seed, []).append(record)
        per_seed_wins = [stats.pairwise_wins_from_scores([r.totals for r in group], [r.agents for r in group],
                                                         agents) for group in by_seed.values()]
        low, high = stats.bradley_terry_bootstrap(per_seed_wins, seed=bootstrap_seed)
        summary["ratings"] = {**fit.as_dict(), "elo_ci95": [[float(a), float(b)] for a, b in zip(low, high,
                                                                                                  strict=True)],
                              "pairwise_wins": wins.tolist()}
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
@click.option("--seating", type=click.Choice(["mixed", "same"]), help="mixed (default): agents share "
              "tables, seats rotated; same: every agent fills a table alone on every seed.")
@click.option("--metric", help="Score compared: total (default) or a game's extra score, e.g. base "
              "(Cascadia without majority bonuses).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@workers_option(1, "1: play here; more: here first, Ray tasks once faster; same results")
@address_option
@record_options
def evaluate(game: str | None, agents: str | None, games: int | None, seed: int | None,
             suite: str | None, players: int | None, config: str | None, out: str | None, as_json: bool,
             no_progress: bool, workers: int, address: str | None, seating: str | None,
             metric: str | None, record_first: int | None, record_seeds: str | None) -> None:
    """Compare agents on GAME with common random numbers (the same seeds for every agent)."""
    spec = build_spec(game, agents, games, seed, players, suite=suite, config=config, seating=seating,
                      metric=metric)
    out_dir = prepare_out_dir(out)
    recording = record_request(record_first, record_seeds, out_dir)
    run = run_evaluation(spec, out_dir=out_dir, progress=not no_progress, workers=workers, address=address)
    warn_if_interrupted(run)
    summary = summarize_run(run)
    if out_dir is not None:
        write_report(run, summary, out_dir)
        if stale := remove_stale_records(out_dir):
            click.echo(f"removed the {stale} game records an earlier run left in {out_dir}/records"
                       + ("" if recording else " (this run records none: add --record N for some)"), err=True)
    if recording is not None:  # after the results, from a second play of each game (see records.py)
        written = write_eval_records(run, out_dir, *recording)
        click.echo(f"wrote {len(written)} game records in {out_dir}/records", err=as_json)
    if as_json:
        click.echo(json.dumps(summary, indent=2, default=json_default))
    else:
        print_tables(summary)
        if out_dir is not None:
            click.echo(f"wrote {out_dir}/games.csv, report.md, summary.json, scores.png"
                       + (", paired_differences.png" if summary["pairs"] else ""))
