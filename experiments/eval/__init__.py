"""Evaluation: paired comparisons (`eval`, `solo-eval`), ladders, statistics, reports, plots, seed suites."""
