"""The learned-model benchmark runs and reports every game's figures."""

from __future__ import annotations

import pytest

from experiments.bench.learned import run_bench


@pytest.mark.slow
def test_quick_bench_reports_every_game():
    figures = run_bench(quick=True)
    assert set(figures) == {"cartographers", "cascadia", "dorfromantik"}
    for game in figures.values():
        assert game["candidate_env_steps_per_s_cpu"] > 0 and game["plain_env_steps_per_s_cpu"] > 0
        assert game["linear_model_games_per_s_cpu"] > 0
        # a candidate step describes every legal move of the next decision: slower than a plain step
        assert game["candidate_over_plain"] < 1
