"""meeplelab bench vector: every game's vector env measured, its loop beside it, the goal judged."""

from __future__ import annotations

from experiments.bench import vector as bench_vector
from experiments.bench.command import EXTRA_BENCHES


def test_bench_vector_reports_every_game_and_judges_the_goal():
    figures = bench_vector.run_bench(num_envs=4, seconds=0.2)
    assert "vector" in EXTRA_BENCHES
    assert set(figures) == {"cartographers", "cascadia", "dorfromantik"}
    for entry in figures.values():
        assert entry["num_envs"] == 4
        assert entry["vector_env_steps_per_s"] > 0 and entry["looped_env_steps_per_s"] > 0
        assert entry["goal_20000_met"] == (entry["vector_env_steps_per_s"] >= 20_000)
