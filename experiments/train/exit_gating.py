"""Expert iteration's gate: does the candidate network's search beat the accepted network's?

Both searches (the config's ``search`` template with each network) play the same gating seeds,
each at its own table (``seating same`` for multiplayer: every seat the same agent, the seed's
score is the mean over seats), with :func:`experiments.eval.evaluate.run_evaluation`; the per-seed
totals are compared with :func:`experiments.eval.stats.paired_comparison`. The candidate passes the
first stage only when the 95% t interval of the paired difference lies above zero.

With ``gating.confirm_games`` > 0 a pass is checked on that many fresh seeds: both searches play
them too, and the candidate is accepted only when the interval over all the seeds (first stage
and confirmation together) still lies above zero. The first stage screens, the whole sample
decides: a lucky draw of a change near zero is diluted by fresh games, a real gain mostly is not
(see :func:`gating_decision`). A failed first stage plays no confirmation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from experiments.eval import stats
from experiments.eval.evaluate import run_evaluation
from experiments.eval.run import per_seed_scores
from experiments.train.evaluation import evaluation_spec
from experiments.train.exit_data import search_spec

CANDIDATE, ACCEPTED = "candidate", "accepted"


def play_both(config: dict[str, Any], candidate: Path, accepted: Path, seeds: list[int],
              progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Both searches' per-seed totals on ``seeds`` (candidate, accepted), in seed order."""
    agents = [search_spec(config["search"], candidate, CANDIDATE),
              search_spec(config["search"], accepted, ACCEPTED)]
    spec = evaluation_spec(config["game"], config["game_options"], agents, tuple(seeds))
    run = run_evaluation(spec, progress=progress, workers=config["gating"]["workers"])
    table = per_seed_scores(run.rows, "total").sort_index()
    return table[CANDIDATE].to_numpy(float), table[ACCEPTED].to_numpy(float)


def _comparison(candidate: np.ndarray, accepted: np.ndarray, prefix: str) -> dict[str, Any]:
    comparison = stats.paired_comparison(candidate, accepted, a=CANDIDATE, b=ACCEPTED)
    low, high = (float(v) for v in comparison.ci95)
    return {f"{prefix}games": comparison.n, f"{prefix}candidate_mean": float(candidate.mean()),
            f"{prefix}accepted_mean": float(accepted.mean()),
            f"{prefix}mean_diff": comparison.mean_difference,
            f"{prefix}ci_low": low, f"{prefix}ci_high": high}


def gating_decision(first: tuple[np.ndarray, np.ndarray],
                    confirmation: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Any]:
    """The gate's result from per-seed totals ``(candidate, accepted)``: the first stage's
    comparison (``games``, means, ``mean_diff``, ``ci_low``, ``ci_high``), ``passed`` (its CI
    above 0) and ``accepted``. With a ``confirmation`` sample (played only after a pass) also its
    own comparison (``confirm_*``) and the one over both samples (``combined_*``), and
    ``accepted`` = the combined CI above 0."""
    result = _comparison(*first, "")
    result["passed"] = result["ci_low"] > 0
    result["accepted"] = result["passed"]
    if confirmation is not None:
        if not result["passed"]:
            raise ValueError("a confirmation sample is only played after the first stage passes")
        result.update(_comparison(*confirmation, "confirm_"))
        both = tuple(np.concatenate([a, b]) for a, b in zip(first, confirmation, strict=True))
        result.update(_comparison(*both, "combined_"))
        result["accepted"] = result["combined_ci_low"] > 0
    return result


def gate(config: dict[str, Any], candidate: Path, accepted: Path, seeds: list[int],
         confirm_seeds: list[int] | None = None, progress: bool = False) -> dict[str, Any]:
    """Play both searches on ``seeds`` (Ray tasks when ``gating.workers`` > 1, Ray initialised)
    and, after a pass, on ``confirm_seeds``; returns :func:`gating_decision`'s result."""
    first = play_both(config, candidate, accepted, seeds, progress)
    screened = gating_decision(first)
    if not confirm_seeds or not screened["passed"]:
        return screened
    return gating_decision(first, play_both(config, candidate, accepted, confirm_seeds, progress))


def record_fields(result: dict[str, Any]) -> dict[str, Any]:
    """A gate's result as a generation record's fields: ``gating_<key>`` for all but ``accepted``,
    which the record keeps as it is."""
    return {"accepted": result["accepted"],
            **{f"gating_{key}": value for key, value in result.items() if key != "accepted"}}
