"""meeplelab bench simulate: every table measured, rates positive, targets judged from them."""

from __future__ import annotations

import pytest

from experiments.bench import simulate as bench_simulate


@pytest.mark.slow
def test_bench_simulate_reports_every_table_and_judges_the_targets():
    figures = bench_simulate.run_bench(quick=True)
    assert set(figures) == {label for label, _, _ in bench_simulate.TABLES}
    for entry in figures.values():
        assert entry["random_games_per_s_per_worker"] > 0 and entry["compiled_greedy_playouts_per_s"] > 0
        assert entry["random_target_met"] == (entry["random_games_per_s_per_worker"] >= 5000)
        share = entry["greedy_games_per_s_per_worker"] / entry["compiled_greedy_playouts_per_s"]
        assert entry["greedy_share_of_compiled"] == pytest.approx(share)
        assert entry["greedy_target_met"] == (share >= 0.9)


def test_a_simulate_rate_writes_verified_chunks(tmp_path):
    rate = bench_simulate.simulate_rate("cartographers", {"players": 1}, "random", 30, tmp_path)
    assert rate > 0
    assert sorted(p.name for p in tmp_path.glob("chunk_*")) == [
        "chunk_00000.json", "chunk_00000.parquet", "chunk_00001.json", "chunk_00001.parquet"]
