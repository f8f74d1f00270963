"""``meeplelab tune-greedy``: retune a greedy agent's weights by paired coordinate search.

Every trial plays the same seeds with the compiled greedy policy (the search agents' playout
policy) in every seat and compares the mean score per seed with the best weights so far: one weight
is multiplied by each ``--factors`` value in turn (an integer weight, Cartographers' ``hole_size``,
steps by one instead), and a change is kept when its paired gain exceeds ``z`` standard errors
(and ``min_gain``). A weight at 0 stays at 0. A round that keeps nothing ends the search (the
next would replay it exactly). The search sees only ``--seeds``; ``--check-seeds``
replays the start and the final weights on other seeds, since the kept gains are the best of many
noisy trials on the tuning seeds. How the presets were found:

    meeplelab tune-greedy cascadia --players 4 --seeds 0-999 --factors 0,0.5,1.5,2 --min-gain 0.05 \
        --check-seeds 2000-2999
    meeplelab tune-greedy dorfromantik --seeds 0-1999 --min-gain 0.1 --check-seeds 5000-6999

Scores: Cartographers solo evaluation points, Cascadia base score (``--metric total`` for the total
with majority bonuses) averaged over the seats, Dorfromantik final score. Each trial is appended to
``trials.csv`` as it finishes; ``result.json`` holds the final weights, their greedy spec and the
check. Both are written through :mod:`experiments.common.writes`: a full disk ends the command with one
line, ``trials.csv`` keeps whole rows only and an older ``result.json`` stays whole.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np
from tqdm import tqdm

from agents.greedy import cartographers as cartographers_greedy
from agents.greedy import cartographers_kernels as G
from agents.greedy import cascadia as cascadia_greedy
from agents.greedy import dorfromantik as dorfromantik_greedy
from agents.greedy import dorfromantik_kernels as GK
from envs.cascadia import kernels as CK
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from envs.core.rng import new_stream
from envs.dorfromantik import kernels as DK
from experiments.common.output_dir import prepare_out_dir
from experiments.common.writes import AppendFile, write_atomic
from experiments.eval.ladder import parse_seed_range

ScoreFn = Callable[[np.ndarray, int, int], np.ndarray]  # (weights, first seed, games) -> score per seed
DEFAULT_FACTORS = (0.0, 0.5, 0.75, 1.25, 1.5, 2.0)


@dataclass(frozen=True)
class GreedyModel:
    """What the search needs of one game's greedy agent."""

    names: tuple[str, ...]
    integers: tuple[str, ...]
    presets: Callable[[str], np.ndarray]
    score: ScoreFn
    metric: str


def greedy_model(game_name: str, players: int | None = None, metric: str | None = None) -> GreedyModel:
    """The weights, presets and compiled scorer of ``game_name``'s greedy agent (ConfigError for a
    game, player count or metric it cannot tune)."""
    key = game_name.strip().lower()
    if key == "cartographers":
        _check(players in (None, 1), f"tune-greedy plays Cartographers solo (--players 1), got {players}")
        _check(metric in (None, "evaluation"), f"Cartographers is tuned on evaluation points, not {metric!r}")
        return _cartographers()
    if key == "cascadia":
        _check(metric in (None, "base", "total"), f"Cascadia --metric must be base or total, got {metric!r}")
        return _cascadia(4 if players is None else players, metric or "base")
    if key == "dorfromantik":
        _check(players in (None, 1), f"Dorfromantik is cooperative: tune it with one seat, got {players}")
        _check(metric in (None, "total"), f"Dorfromantik is tuned on its final score, not {metric!r}")
        return _dorfromantik()
    make_game(key)  # an unknown game raises its own error
    raise ConfigError(f"no greedy agent to tune for {game_name!r}")


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ConfigError(message)


def _cartographers() -> GreedyModel:
    game = make_game("cartographers")
    solo = np.array(game.data.scoring_solo, dtype=np.int64)

    def score(weights: np.ndarray, first: int, games: int) -> np.ndarray:
        out = np.zeros(games)
        G.greedy_solo_games(game.tb, games, first, game.coin_cap, True, True, weights, solo, out)
        return out

    return GreedyModel(tuple(G.WEIGHT_NAMES), ("hole_size", "contact"), cartographers_greedy.preset_weights,
                       score, "evaluation")


def _cascadia(players: int, metric: str) -> GreedyModel:
    game = make_game("cascadia", players=players)
    column = CK.CAT_BASE if metric == "base" else CK.CAT_TOTAL
    d = game.data

    def score(weights: np.ndarray, first: int, games: int) -> np.ndarray:
        out = np.zeros((players, CK.NUM_CAT), np.int32)
        means = np.zeros(games)
        for i in range(games):
            args = game.new_game(first + i).board_args()
            cascadia_greedy.play_greedy(args, game.tb, weights, 0.0, np.zeros(1, np.uint64))
            CK.score_all(args.edges, args.tokens, args.cells, args.pinfo, args.ctl, game.nbr, game.tables,
                         d.solo_bonus_min, d.solo_bonus_points, out)
            means[i] = out[:, column].mean()
        return means

    return GreedyModel(tuple(cascadia_greedy.W_NAMES), (), cascadia_greedy.preset_weights, score, metric)


def _dorfromantik() -> GreedyModel:
    game = make_game("dorfromantik")

    def score(weights: np.ndarray, first: int, games: int) -> np.ndarray:
        totals = np.zeros(games)
        for i in range(games):
            s = game.new_game(first + i)
            GK.play_greedy(s.cells, s.frontier, s.placed, s.uf, s.tasks, s.deck, s.meta, game._rot_edges,
                          game._task_type, game._flag, weights, new_stream(first + i, "tune"), game._mask)
            totals[i] = float(game.score_vector(s)[DK.S_TOTAL])
        return totals

    return GreedyModel(tuple(GK.WEIGHT_NAMES), (), dorfromantik_greedy.preset_weights, score, "total")


@dataclass
class TuneResult:
    """The outcome of :func:`coordinate_search`."""

    names: tuple[str, ...]
    start: np.ndarray
    weights: np.ndarray
    start_mean: float
    mean: float
    trials: list[dict[str, Any]] = field(default_factory=list)

    def changed(self) -> dict[str, float]:
        """The weights that differ from the start, by name."""
        return {n: float(w) for n, w, s in zip(self.names, self.weights, self.start, strict=True) if w != s}


def steps(integer: bool, factors: Sequence[float]) -> list[Callable[[float], float]]:
    """The moves tried for one weight, each applied to its best value so far: multiply by each
    factor, or for an integer weight one down and one up."""
    if integer:
        return [lambda v: v - 1, lambda v: v + 1]
    return [lambda v, f=f: v * f for f in factors]


def coordinate_search(score: Callable[[np.ndarray], np.ndarray], names: Sequence[str], start: np.ndarray,
                      factors: Sequence[float] = DEFAULT_FACTORS, rounds: int = 2, z: float = 2.0,
                      min_gain: float = 0.0, integers: Sequence[str] = (),
                      on_trial: Callable[[dict[str, Any]], None] | None = None,
                      on_step: Callable[[], None] | None = None) -> TuneResult:
    """Paired coordinate search from ``start`` (module docstring); ``score(weights)`` returns one
    score per tuning seed, always for the same seeds. ``on_trial`` sees every trial's row,
    ``on_step`` every move (a move that leaves the weight unchanged, or negative, is not played)."""
    best_w = np.array(start, dtype=np.float64)
    best = score(best_w)
    result = TuneResult(tuple(names), best_w.copy(), best_w, float(best.mean()), float(best.mean()))
    for round_ in range(rounds):
        kept = False
        for i, name in enumerate(names):
            for move in steps(name in integers, factors):
                value = move(float(best_w[i]))
                if on_step is not None:
                    on_step()
                if value == best_w[i] or value < 0:
                    continue
                trial_w = best_w.copy()
                trial_w[i] = value
                scores = score(trial_w)
                diff = scores - best
                se = float(diff.std(ddof=1) / math.sqrt(diff.size)) if diff.size > 1 else float("inf")
                gain = float(diff.mean())
                accepted = bool(gain > z * se and gain > min_gain)
                row = {"round": round_, "weight": name, "value": value, "mean": float(scores.mean()),
                       "gain": gain, "se": se, "accepted": accepted}
                result.trials.append(row)
                if on_trial is not None:
                    on_trial(row)
                if accepted:
                    best_w, best = trial_w, scores
                    kept = True
        if not kept:  # the next round would replay this one's trials exactly
            break
    result.weights, result.mean = best_w, float(best.mean())
    return result


def greedy_spec(names: Sequence[str], weights: np.ndarray, start: np.ndarray, preset: str) -> str:
    """The agent spec of the tuned weights: the start preset plus the changed weights."""
    parts = [] if preset == "default" else [f"preset={preset}"]
    parts += [f"{n}={w:g}" for n, w, s in zip(names, weights, start, strict=True) if w != s]
    return "greedy" + (":" + ",".join(parts) if parts else "")


def paired_check(score_fn: ScoreFn, start: np.ndarray, weights: np.ndarray, first: int, games: int,
                 ) -> dict[str, Any]:
    """Start vs final weights on other seeds: means and the paired gain with its 95% CI (normal)."""
    before, after = score_fn(start, first, games), score_fn(weights, first, games)
    diff = after - before
    half = 1.96 * float(diff.std(ddof=1)) / math.sqrt(games) if games > 1 else float("nan")
    return {"seeds": f"{first}-{first + games - 1}", "start_mean": float(before.mean()),
            "tuned_mean": float(after.mean()), "gain": float(diff.mean()),
            "ci95": [float(diff.mean()) - half, float(diff.mean()) + half]}


TRIAL_COLUMNS = ("round", "weight", "value", "mean", "gain", "se", "accepted")


class TrialsFile:
    """``trials.csv``: the header, then each trial's row appended as it finishes, whole or not at
    all (a full disk: DiskFullError, the rows before it kept)."""

    def __init__(self, path: Path):
        self._file = AppendFile(path)
        self._text = io.StringIO()
        self._writer = csv.DictWriter(self._text, TRIAL_COLUMNS)
        self._writer.writeheader()
        self._flush()

    def _flush(self) -> None:
        text = self._text.getvalue()
        self._text.seek(0)
        self._text.truncate()
        self._file.append(text)

    def write(self, row: dict[str, Any]) -> None:
        self._writer.writerow(row)
        self._flush()

    def close(self) -> None:
        self._file.close()


def parse_factors(text: str) -> tuple[float, ...]:
    """``"0,0.5,2"`` -> (0.0, 0.5, 2.0); each factor a finite number >= 0."""
    try:
        factors = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise ConfigError(f"--factors must be comma-separated numbers, got {text!r}") from exc
    if not factors or any(not math.isfinite(f) or f < 0 for f in factors):
        raise ConfigError(f"--factors must be numbers >= 0, got {text!r}")
    return factors


@click.command("tune-greedy")
@click.argument("game_name", metavar="GAME")
@click.option("--players", type=int, help="Seats (Cascadia; default 4). Cartographers and Dorfromantik: 1.")
@click.option("--seeds", default="0-999", show_default=True,
              help="Tuning seeds FIRST-LAST (keep off the test suite, 1,000,000-1,000,999).")
@click.option("--check-seeds", help="Held-out seeds FIRST-LAST to compare the start and tuned weights on.")
@click.option("--start", "preset", default="default", show_default=True, help="Preset to start from.")
@click.option("--factors", default=",".join(f"{f:g}" for f in DEFAULT_FACTORS), show_default=True,
              help="Multipliers tried for each weight.")
@click.option("--rounds", type=click.IntRange(1, 20), default=2, show_default=True)
@click.option("--z", type=click.FloatRange(0), default=2.0, show_default=True,
              help="A change is kept when its paired gain exceeds z standard errors.")
@click.option("--min-gain", type=click.FloatRange(0), default=0.0, show_default=True,
              help="... and exceeds this many points.")
@click.option("--metric", help="Cascadia: base (default) or total.")
@click.option("--out", type=click.Path(file_okay=False), default="runs/tune_greedy", show_default=True,
              help="Folder for trials.csv and result.json.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
def tune_greedy(game_name: str, players: int | None, seeds: str, check_seeds: str | None, preset: str,
                factors: str, rounds: int, z: float, min_gain: float, metric: str | None, out: str,
                no_progress: bool) -> None:
    """Retune GAME's greedy weights by paired coordinate search on compiled greedy games."""
    model = greedy_model(game_name, players, metric)
    first, last = parse_seed_range(seeds)
    games = last - first + 1
    _check(games >= 2, "--seeds must hold at least two seeds (the gain's standard error needs them)")
    check = parse_seed_range(check_seeds) if check_seeds else None
    if check is not None and not (check[1] < first or check[0] > last):
        raise ConfigError(f"--check-seeds {check_seeds} overlap the tuning seeds {seeds}")
    fs = parse_factors(factors)
    start = np.array(model.presets(preset), dtype=np.float64)
    folder = prepare_out_dir(out)
    per_round = sum(len(steps(name in model.integers, fs)) for name in model.names)
    bar = tqdm(total=per_round * rounds, desc=f"{game_name} tune-greedy", unit="move", disable=no_progress)
    trials = TrialsFile(folder / "trials.csv")
    try:
        def record(row: dict[str, Any]) -> None:
            trials.write(row)
            if row["accepted"]:
                bar.write(f"kept {row['weight']}={row['value']:g}: mean {row['mean']:.3f} "
                          f"(+{row['gain']:.3f}, SE {row['se']:.3f})")

        result = coordinate_search(lambda w: model.score(w, first, games), model.names, start, fs, rounds, z,
                                   min_gain, model.integers, on_trial=record, on_step=lambda: bar.update(1))
    finally:
        trials.close()
    bar.close()
    summary: dict[str, Any] = {
        "game": game_name, "players": players, "metric": model.metric, "seeds": seeds, "start": preset,
        "factors": list(fs), "rounds": rounds, "z": z, "min_gain": min_gain,
        "start_mean": result.start_mean, "tuned_mean": result.mean,
        "weights": dict(zip(model.names, result.weights.tolist(), strict=True)), "changed": result.changed(),
        "spec": greedy_spec(model.names, result.weights, result.start, preset)}
    if check is not None:
        summary["check"] = paired_check(model.score, result.start, result.weights, check[0],
                                        check[1] - check[0] + 1)
    write_atomic(folder / "result.json", json.dumps(summary, indent=2) + "\n")
    click.echo(f"tuned on seeds {seeds}: {result.start_mean:.3f} -> {result.mean:.3f} ({model.metric})")
    click.echo(f"spec: {summary['spec']}")
    if check is not None:
        c = summary["check"]
        click.echo(f"check on seeds {c['seeds']}: {c['start_mean']:.3f} -> {c['tuned_mean']:.3f}, gain "
                   f"{c['gain']:+.3f} [{c['ci95'][0]:+.3f}, {c['ci95'][1]:+.3f}]")
    click.echo(f"wrote {folder / 'trials.csv'} and {folder / 'result.json'}")
