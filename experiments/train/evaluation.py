"""The periodic paired evaluation of a network while it trains (and after imitation).

The baselines (random and greedy) play the fixed evaluation seeds once; the network's agent plays
the same seeds at every evaluation and is compared seed by seed (paired t interval). For
multiplayer games each agent fills its own table ("the same agent in all seats"). Solo
Cartographers also reports the mean evaluation points (score minus the cards' thresholds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from agents.base import agent_label
from experiments.eval import stats
from experiments.eval.config import EvalSpec
from experiments.eval.evaluate import run_evaluation
from experiments.eval.run import per_seed_scores

BASELINES = ("random", "greedy")


def evaluation_spec(game: str, game_options: dict[str, Any], agents: list[str],
                    seeds: tuple[int, ...]) -> EvalSpec:
    """Agents on ``seeds``, each in every seat of its own table for multiplayer games."""
    options = dict(game_options)
    players = int(options.pop("players", 1))
    seating = "same" if players > 1 else "mixed"
    return EvalSpec(game=game, agents=agents, seeds=seeds, players=players, options=options,
                    seeds_label=f"{seeds[0]}-{seeds[-1]}", seating=seating)


@dataclass
class TrainingEvaluator:
    """Evaluates policy files on fixed seeds against cached baseline scores."""

    game: str
    game_options: dict[str, Any]
    seeds: tuple[int, ...]
    baselines: tuple[str, ...] = BASELINES
    _baseline_scores: pd.DataFrame | None = field(default=None, repr=False)

    def _scores(self, agents: list[str]) -> pd.DataFrame:
        spec = evaluation_spec(self.game, self.game_options, agents, self.seeds)
        run = run_evaluation(spec, progress=False)
        table = per_seed_scores(run.rows, "total")
        if "x_evaluation" in run.rows.columns:
            evaluation = per_seed_scores(run.rows, "x_evaluation").add_suffix("#evaluation")
            table = table.join(evaluation)
        return table

    def baseline_scores(self) -> pd.DataFrame:
        if self._baseline_scores is None:
            self._baseline_scores = self._scores(list(self.baselines))
        return self._baseline_scores

    def evaluate(self, policy_path: str) -> dict[str, float]:
        """Mean score of ``ppo:<policy_path>`` and its paired difference to each baseline."""
        spec = f"ppo:{policy_path},label=ppo"
        mine = self._scores([spec])
        spec = agent_label(spec)
        base = self.baseline_scores()
        result: dict[str, float] = {"mean_score": float(mine[spec].mean()), "games": float(len(mine))}
        if f"{spec}#evaluation" in mine.columns:
            result["mean_evaluation"] = float(mine[f"{spec}#evaluation"].mean())
        for name in self.baselines:
            comparison = stats.paired_comparison(mine[spec], base[agent_label(name)], a="ppo", b=name)
            result[f"diff_vs_{name}"] = comparison.mean_difference
            result[f"diff_vs_{name}_ci_low"] = float(comparison.ci95[0])
            result[f"diff_vs_{name}_ci_high"] = float(comparison.ci95[1])
            result[f"{name}_mean_score"] = float(base[agent_label(name)].mean())
        return result
