"""The benchmark runs and reports the agreed keys with plausible values."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_quick_bench_reports_the_keys():
    from experiments.bench.dorfromantik import run_bench

    figures = run_bench(quick=True)
    for key in ("compiled_games_per_s", "env_steps_per_s", "speedup_vs_reference", "placement_masks_per_s",
                "greedy_valuations_per_s", "greedy_valuations_reference_per_s", "learned_valuations_per_s",
                "learned_valuations_reference_per_s"):
        assert figures[key] > 0
    assert figures["speedup_vs_reference"] > 10
    assert 0 < figures["mean_random_score"] < 40
