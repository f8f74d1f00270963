"""Evaluation reports: Markdown tables, rich tables on the terminal, and the report directory
(``report.md``, ``summary.json``, ``scores.png``, ``paired_differences.png``)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from agents.base import agent_label
from experiments.common.tables import print_table
from experiments.common.writes import write_atomic
from experiments.eval.run import EvalRun, per_seed_scores


def _fmt(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f}"


#: what a confidence interval with no width says, and the note that explains it
NO_SPREAD = "no spread"
NO_SPREAD_NOTE = ("no spread: every seed gave the same result, so the interval has no width; more seeds "
                  "may show the uncertainty")


def ci_text(pair: Sequence[float], digits: int = 2, signed: bool = False) -> str:
    """``[low, high]``, or ``value (no spread)`` when both ends print the same (:data:`NO_SPREAD_NOTE`)."""
    sign = "+" if signed else ""
    low, high = (f"{x:{sign}.{digits}f}" for x in pair)
    if low == high and all(math.isfinite(x) for x in pair):
        return f"{low} ({NO_SPREAD})"
    return f"[{low}, {high}]"


def spread_notes(cells: Sequence[str]) -> list[str]:
    """[:data:`NO_SPREAD_NOTE`] when one of ``cells`` is a CI without spread, else []."""
    return [NO_SPREAD_NOTE] if any(f"({NO_SPREAD})" in c for c in cells) else []


def markdown_tables(summary: dict[str, Any]) -> list[str]:
    """The report's tables as Markdown lines (shared by eval and solo-eval reports)."""
    lines = ["| agent | n | mean | SD | SE | 95% t CI | 95% bootstrap CI | P10 | P50 | P90 | min | max "
             "| ms/decision |", "|" + "---|" * 13]
    for name, s in summary["agents"].items():
        lines.append(f"| {name} | {s['n']} | {_fmt(s['mean'])} | {_fmt(s['sd'])} | {_fmt(s['se'])} | "
                     f"{ci_text(s['ci95_t'])} | {ci_text(s['ci95_bootstrap'])} | {_fmt(s['p10'], 1)} | "
                     f"{_fmt(s['p50'], 1)} | {_fmt(s['p90'], 1)} | {_fmt(s['min'], 0)} | "
                     f"{_fmt(s['max'], 0)} | "
                     f"{_fmt(s['decision_ms_mean'], 3)} |")
    categories = list(next(iter(summary["agents"].values()))["categories"])
    if categories:
        lines += ["", "Mean points per category:", "",
                  "| agent | " + " | ".join(categories) + " |", "|---|" + "---|" * len(categories)]
        for name, s in summary["agents"].items():
            lines.append(f"| {name} | " + " | ".join(_fmt(s["categories"][c]) for c in categories) + " |")
    if summary["pairs"]:
        lines += ["", "Paired comparisons on the same seeds: each agent's score minus a baseline listed "
                  "before it (positive: the agent scored more):", "",
                  "| agent | baseline | n | mean diff | 95% CI | t | p (t) | p (Wilcoxon) |",
                  "|" + "---|" * 8]
        for p in summary["pairs"]:
            lines.append(f"| {p['a']} | {p['b']} | {p['n']} | {_fmt(p['mean_difference'])} | "
                         f"{ci_text(p['ci95'])} | {_fmt(p['t_statistic'])} | {p['t_pvalue']:.3g} | "
                         f"{p['wilcoxon_pvalue']:.3g} |")
    if "ratings" in summary:
        ratings = summary["ratings"]
        elo = dict(zip(ratings["names"], ratings["elo"], strict=True))
        elo_ci = dict(zip(ratings["names"], ratings["elo_ci95"], strict=True))
        note = "; regularised" if ratings["prior_games"] else ""
        lines += ["", "Multiplayer: win rate (shared wins split) and Bradley-Terry rating (Elo scale, "
                  f"mean 1500, 95% CI by resampling seeds{note}):", "",
                  "| agent | seats | win rate | 95% Wilson CI | Elo | Elo 95% CI |", "|" + "---|" * 6]
        for name, w in summary["win_rates"].items():
            lines.append(f"| {name} | {w['seats']} | {_fmt(w['rate'], 3)} | {ci_text(w['ci95'], 3)} | "
                         f"{_fmt(elo[name], 0)} | {ci_text(elo_ci[name], 0)} |")
    notes = spread_notes(lines)
    return [*lines, *(["", notes[0] + "."] if notes else [])]


def agent_legend(specs: Sequence[str]) -> list[str]:
    """Markdown lines naming the full spec behind each agent label (empty when every label is its spec)."""
    rows = [(agent_label(s), s) for s in specs if agent_label(s) != s.strip()]
    if not rows:
        return []
    return ["", "Agents (label: spec):", "", *(f"- {label}: `{spec}`" for label, spec in rows)]


def write_report(run: EvalRun, summary: dict[str, Any], out_dir: Path) -> list[Path]:
    """``report.md``, ``summary.json`` and the plots in ``out_dir``; returns the files written."""
    from experiments.eval import plots
    out_dir.mkdir(parents=True, exist_ok=True)
    column = run.spec.metric_column
    scores = {a: run.rows[run.rows.agent == a][column].to_numpy() for a in summary["agents"]}
    written = [plots.score_histograms(scores, out_dir / "scores.png",
                                      title=f"{run.spec.game}: final scores ({run.spec.metric})")]
    if summary["pairs"]:
        by_seed = per_seed_scores(run.rows, column)
        diffs = {f"{p['a']} - {p['b']}": (by_seed[p["a"]] - by_seed[p["b"]]).to_numpy()
                 for p in summary["pairs"]}
        cis = {f"{p['a']} - {p['b']}": tuple(p["ci95"]) for p in summary["pairs"]}
        written.append(plots.paired_difference_plot(diffs, cis, out_dir / "paired_differences.png"))
    else:
        (out_dir / "paired_differences.png").unlink(missing_ok=True)  # an earlier run's
    lines = [f"# {run.spec.game}: evaluation of {', '.join(summary['agents'])}", "",
             f"{summary['games']} seeds ({summary['seeds']}), {run.players} player(s), "
             f"{summary['games_played']} games; every agent played the same seeds (common random numbers).",
             f"Score compared: {run.spec.metric}; seating: {_seating_text(run)}."
             + (" SD and percentiles describe single seats; SE and CIs take the seed as the unit (the seats"
                " of one seed are not independent)." if run.players > 1 else ""),
             *agent_legend(run.spec.agents), "", *markdown_tables(summary), "", "![scores](scores.png)"]
    if summary["pairs"]:
        lines.append("![paired differences](paired_differences.png)")
    write_atomic(out_dir / "report.md", "\n".join(lines) + "\n")
    write_atomic(out_dir / "summary.json", json.dumps(summary, indent=2, default=json_default))
    return [*written, out_dir / "report.md", out_dir / "summary.json", out_dir / "games.csv"]


def _seating_text(run: EvalRun) -> str:
    if run.players == 1:
        return "solo"
    if run.spec.seating == "same":
        return "each agent in every seat of its own table (its score per seed: the mean over seats)"
    return "agents share tables, seats rotated"


def json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def print_tables(summary: dict[str, Any], console: Console | None = None) -> None:
    """The summary as rich tables on stdout (plain blocks where a table is wider than the console)."""
    console = console or Console()
    table = Table(title=f"{summary['game']}: {summary['games']} seeds ({summary['seeds']}), "
                        f"{summary['players']} player(s), score: {summary.get('metric', 'total')}"
                        + (", each agent alone at its table" if summary.get("seating") == "same" else ""))
    for column in ("agent", "mean", "SD", "95% CI (t)", "95% CI (bootstrap)", "P10/P50/P90", "min/max",
                   "ms/decision"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    cells = []
    for name, s in summary["agents"].items():
        row = [name, _fmt(s["mean"]), _fmt(s["sd"]), ci_text(s["ci95_t"]), ci_text(s["ci95_bootstrap"]),
               f"{s['p10']:.0f}/{s['p50']:.0f}/{s['p90']:.0f}", f"{s['min']:.0f}/{s['max']:.0f}",
               _fmt(s["decision_ms_mean"], 3)]
        table.add_row(*row)
        cells += row
    print_table(table, console, notes=spread_notes(cells))
    if summary["pairs"]:
        pairs = Table(title="paired comparisons on the same seeds: agent's score minus baseline's")
        for column in ("agent", "baseline", "mean diff", "95% CI", "p (t)", "p (Wilcoxon)"):
            pairs.add_column(column, justify="left" if column in ("agent", "baseline") else "right")
        cells = []
        for p in summary["pairs"]:
            row = [p["a"], p["b"], _fmt(p["mean_difference"]), ci_text(p["ci95"]), f"{p['t_pvalue']:.3g}",
                   f"{p['wilcoxon_pvalue']:.3g}"]
            pairs.add_row(*row)
            cells += row
        print_table(pairs, console, notes=spread_notes(cells))
    if "ratings" in summary:
        elo = dict(zip(summary["ratings"]["names"], summary["ratings"]["elo"], strict=True))
        note = "; regularised: someone never won" if summary["ratings"]["prior_games"] else ""
        wins = Table(title=f"win rates and Bradley-Terry ratings (Elo scale{note})")
        elo_ci = dict(zip(summary["ratings"]["names"], summary["ratings"]["elo_ci95"], strict=True))
        for column in ("agent", "win rate", "95% Wilson CI", "Elo", "Elo 95% CI"):
            wins.add_column(column, justify="left" if column == "agent" else "right")
        cells = []
        for name, w in summary["win_rates"].items():
            row = [name, _fmt(w["rate"], 3), ci_text(w["ci95"], 3), _fmt(elo[name], 0),
                   ci_text(elo_ci[name], 0)]
            wins.add_row(*row)
            cells += row
        print_table(wins, console, notes=spread_notes(cells))
