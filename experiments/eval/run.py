"""An evaluation's games (:class:`EvalRun`): who sits where, per-seed scores and game records.

Shared by ``eval``, ``solo-eval``, ``ladder``, the reports and training's periodic evaluation;
the command itself is :mod:`experiments.eval.evaluate`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from agents.labels import agent_label
from experiments.common.runner import GameRecord
from experiments.eval.config import EvalSpec
from experiments.replay.records import chosen, record_path, replay_with_explanations, write_record


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


def lineups(agents: Sequence[str], players: int, seating: str = "mixed") -> list[tuple[str, ...]]:
    """Seat assignments played on every seed (see the module docstring)."""
    if players == 1 or seating == "same":
        return [(a,) * players for a in agents]
    if len(agents) >= players:
        groups = list(itertools.combinations(agents, players))
    else:
        groups = [tuple(agents[i % len(agents)] for i in range(players))]
    rotations = [group[r:] + group[:r] for group in groups for r in range(players)]
    return list(dict.fromkeys(rotations))  # repeated agents make some rotations identical


def per_seed_scores(rows: pd.DataFrame, column: str = "total") -> pd.DataFrame:
    """seeds x agents: each agent's mean ``column`` on each seed (the unit of pairing)."""
    table = rows.groupby(["seed", "agent"])[column].mean().unstack("agent")
    return table.dropna()


def write_eval_records(run: EvalRun, out_dir: str | Path, first: int | None,
                       seeds: Sequence[int]) -> list[Path]:
    """Records of an :class:`EvalRun`'s games: the first ``first`` in play order
    and those on ``seeds``, as ``out_dir/records/seed_<s>_lineup_<i>.jsonl`` (lineup as in games.csv)."""
    spec = run.spec
    table = [tuple(agent_label(a) for a in lineup)
             for lineup in lineups(spec.agents, run.players, spec.seating)]
    specs = {agent_label(a): a for a in spec.agents}
    written = []
    for position, result in enumerate(run.records):
        if chosen(position, result.seed, first, seeds):
            record = replay_with_explanations(spec.game, spec.game_options(), result.seed,
                                              [specs.get(a, a) for a in result.agents], result.actions)
            lineup = table.index(tuple(result.agents))
            written.append(write_record(record, record_path(out_dir, result.seed, lineup)))
    return written


def remove_stale_records(out_dir: str | Path) -> int:
    """Delete the game records an earlier run left in ``out_dir/records`` (only files named as
    :func:`write_eval_records` names them, then the folder once empty), so the folder never mixes
    runs; returns how many were deleted."""
    folder = Path(out_dir) / "records"
    if not folder.is_dir():
        return 0
    stale = sorted(folder.glob("seed_*_lineup_*.jsonl"))
    for path in stale:
        path.unlink()
    if not any(folder.iterdir()):
        folder.rmdir()
    return len(stale)
