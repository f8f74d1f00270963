"""The final summary of a simulation, merged from the chunks' records (never from the rows).

Each chunk's record carries per-seat moments of the totals, category sums and win sums
(:func:`experiments.sim.chunks.seat_aggregates`), so the driver's memory does not grow with the
number of games: a ten-million-game run is summarized from its records like a thousand-game one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from experiments.common.tables import print_table
from experiments.eval.stats import Moments


def merge_records(records: Iterable[dict[str, Any]], agents: list[str],
                  category_order: Sequence[str] = ()) -> dict[str, Any]:
    """Per seat: mean, SD, SE, 95% t CI, min, max, category means (in ``category_order``, the game's
    own order, then any others by name), and win share when several seats (a shared win is split),
    over every record."""
    games = 0
    totals: list[Moments | None] = [None] * len(agents)
    categories: list[dict[str, float]] = [{} for _ in agents]
    wins = [0.0] * len(agents)
    for record in records:
        games += record["games"]
        for seat, agg in enumerate(record["seats"]):
            m = Moments(**agg["total"])
            totals[seat] = m if totals[seat] is None else totals[seat].merge(m)
            for name, value in agg["categories"].items():
                categories[seat][name] = categories[seat].get(name, 0.0) + value
            wins[seat] += agg["win"] or 0.0
    summary: dict[str, Any] = {"games": games, "seats": {}}
    for seat, m in enumerate(totals):
        if m is None:
            continue
        rank = {name: i for i, name in enumerate(category_order)}
        names = sorted(categories[seat], key=lambda k: (rank.get(k, len(rank)), k))
        entry = {"agent": agents[seat], "mean": m.mean, "sd": m.sd, "se": m.se, "ci95": m.ci95_t(),
                 "min": m.min, "max": m.max,
                 "categories": {k: categories[seat][k] / m.n for k in names}}
        if len(agents) > 1:
            entry["win_share"] = wins[seat] / m.n
        summary["seats"][seat] = entry
    return summary


def print_summary(summary: dict[str, Any], title: str, console: Console | None = None) -> None:
    """One column per seat, one row per measure (games can have many categories); one block per seat
    where the table is wider than the console."""
    seats = summary["seats"]
    table = Table(title=title)
    table.add_column("measure")
    for seat, s in seats.items():
        table.add_column(f"seat {seat}: {s['agent']}", justify="right")
    table.add_row("mean total", *(f"{s['mean']:.2f}" for s in seats.values()))
    table.add_row("SD", *(f"{s['sd']:.2f}" for s in seats.values()))
    table.add_row("95% CI", *(f"[{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}]" for s in seats.values()))
    table.add_row("min / max", *(f"{s['min']:.0f} / {s['max']:.0f}" for s in seats.values()))
    if len(seats) > 1:
        table.add_row("win share", *(f"{s['win_share']:.3f}" for s in seats.values()))
    for category in next(iter(seats.values()))["categories"]:
        table.add_row(category, *(f"{s['categories'][category]:.2f}" for s in seats.values()))
    print_table(table, console or Console(), by="column")
