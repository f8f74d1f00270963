"""The agents benchmark runs and reports positive rates (a smoke test; the figures are not checked)."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_quick_bench_reports_rates():
    from experiments.bench.agents import run_bench

    figures = run_bench(quick=True)
    for key in ("mcts_compiled_start_sims_per_s_cpu", "mcts_python_tree_start_sims_per_s",
                "engine_random_rollout_games_per_s", "greedy_decision_ms_mean",
                "cascadia4p_turn_search_mid_playouts_per_s_cpu",
                "cartographers_greedy_flat_compiled_mid_sims_per_s_cpu",
                "cartographers_greedy_flat_vs_python_tree_start",
                "cartographers_published_search_start_ms_per_decision_cpu",
                "dorfromantik_search_after10_sims_per_s_cpu",
                "cartographers_greedy_progress_us_per_candidate_cpu",
                "cartographers_greedy_default_valuation_speedup",
                "cascadia4p_greedy_market_speedup", "cascadia4p_greedy_market_us_per_decision_cpu"):
        assert figures[key] > 0, key
