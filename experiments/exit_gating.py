"""Expert iteration's gate: does the candidate network's search beat the accepted network's?

Both searches (the config's ``search`` template with each network) play the same gating seeds,
each at its own table (``seating same`` for multiplayer: every seat the same agent, the seed's
score is the mean over seats), with :func:`experiments.evaluate.run_evaluation`; the per-seed
totals are compared with :func:`experiments.stats.paired_comparison`. The candidate is accepted
only when the 95% t interval of the paired difference lies above zero.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiments import stats
from experiments.evaluate import per_seed_scores, run_evaluation
from experiments.exit_data import search_spec
from experiments.training_eval import evaluation_spec

CANDIDATE, ACCEPTED = "candidate", "accepted"


def gate(config: dict[str, Any], candidate: Path, accepted: Path, seeds: list[int],
         progress: bool = False) -> dict[str, Any]:
    """Play both searches on ``seeds`` (Ray tasks when ``gating.workers`` > 1, Ray initialised);
    returns the games, both means, the mean paired difference, its 95% CI and the decision."""
    agents = [search_spec(config["search"], candidate, CANDIDATE),
              search_spec(config["search"], accepted, ACCEPTED)]
    spec = evaluation_spec(config["game"], config["game_options"], agents, tuple(seeds))
    run = run_evaluation(spec, progress=progress, workers=config["gating"]["workers"])
    table = per_seed_scores(run.rows, "total")
    comparison = stats.paired_comparison(table[CANDIDATE], table[ACCEPTED], a=CANDIDATE, b=ACCEPTED)
    low, high = (float(v) for v in comparison.ci95)
    return {"games": comparison.n, "candidate_mean": float(table[CANDIDATE].mean()),
            "accepted_mean": float(table[ACCEPTED].mean()), "mean_diff": comparison.mean_difference,
            "ci_low": low, "ci_high": high, "accepted": bool(low > 0)}
