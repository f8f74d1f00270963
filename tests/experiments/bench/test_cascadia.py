"""The Cascadia benchmark reports the learned candidate view's figures beside its references."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_quick_bench_reports_the_learned_listing_figures():
    from experiments.bench.cascadia import run_bench

    figures = run_bench(quick=True)
    for key in ("compiled_game_ms_4p", "learned_listings_per_s", "learned_listings_reference_per_s"):
        assert figures[key] > 0
    assert figures["learned_listing_speedup"] > 1.5  # the shared figures must pay
