"""Tables on an 80-column console: a table that fits prints as a table, a wider one as blocks, and no
cell (a number, a CI, an agent label) is ever split across lines."""

from __future__ import annotations

import io
import re

from rich.console import Console
from rich.table import Table

from experiments.common.tables import print_table
from experiments.eval.report import NO_SPREAD_NOTE, print_tables

LONG = "learned(path=models/cascadia_4p)"


def _console(width: int = 80) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=width, force_terminal=False, color_system=None), out


def _assert_cells_whole(text: str, cells: list[str], width: int = 80) -> None:
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]
    for cell in cells:
        assert any(cell in line for line in lines), f"{cell!r} is split across lines:\n{text}"


def _table(rows: list[list[str]]) -> Table:
    table = Table(title="cascadia: 4 seeds (seeds 0..3), 4 player(s), score: base, each agent alone")
    for column in ("agent", "mean", "SD", "95% CI (t)", "95% CI (bootstrap)", "P10/P50/P90", "min/max",
                   "ms/decision"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    return table


def test_a_wide_table_prints_one_block_per_row_with_every_cell_whole():
    rows = [["greedy", "88.25", "3.21", "[86.63, 89.87]", "[87.62, 89.25]", "84/88/92", "83/93", "0.121"],
            [LONG, "90.00", "3.39", "[86.62, 93.38]", "[88.25, 91.75]", "86/91/94", "83/95", "0.695"]]
    console, out = _console()
    print_table(_table(rows), console)
    text = out.getvalue()
    assert "┃" not in text and LONG in text.splitlines()
    _assert_cells_whole(text, [c for row in rows for c in row])


def test_a_table_that_fits_prints_as_a_table():
    rows = [["a", "1.00", "0.10", "[0.9, 1.1]", "[0.9, 1.1]", "1/1/1", "1/1", "0.1"]]
    console, out = _console(120)
    print_table(_table(rows), console)
    assert "┃ agent" in out.getvalue()
    _assert_cells_whole(out.getvalue(), rows[0], 120)


def _summary() -> dict:
    agent = {"mean": 88.25, "sd": 3.21, "ci95_t": [86.63, 89.87], "ci95_bootstrap": [87.62, 89.25], "p10": 84,
             "p50": 88, "p90": 92, "min": 83, "max": 93, "decision_ms_mean": 0.121}
    return {"game": "cascadia", "games": 4, "seeds": "seeds 0..3", "players": 2, "metric": "total",
            "agents": {"greedy": agent, LONG: {**agent, "mean": 90.0}},
            "pairs": [{"a": LONG, "b": "greedy", "mean_difference": 1.75, "ci95": [-1.35, 4.85],
                       "t_pvalue": 0.17, "wilcoxon_pvalue": 0.25}],
            "win_rates": {"greedy": {"rate": 0.0, "ci95": [0.0, 0.324]},
                          LONG: {"rate": 1.0, "ci95": [0.676, 1.0]}},
            "ratings": {"names": ["greedy", LONG], "elo": [1254.0, 1746.0], "prior_games": 1.0,
                        "elo_ci95": [[1254.2, 1254.4], [1745.8, 1746.1]]}}


def test_eval_tables_fit_80_columns_with_plain_headings_and_a_degenerate_ci_explained():
    console, out = _console()
    print_tables(_summary(), console)
    text = out.getvalue()
    _assert_cells_whole(text, ["88.25", "[86.63, 89.87]", "[87.62, 89.25]", "84/88/92", "83/93", "0.121",
                               LONG, "[-1.35, 4.85]", "[0.676, 1.000]", "1254 (no spread)",
                               "1746 (no spread)"])
    assert "A - B" not in text and "A listed after B" not in text
    assert "[1254, 1254]" not in text
    assert re.sub(r"\s+", " ", NO_SPREAD_NOTE) in re.sub(r"\s+", " ", text)


def test_simulate_summary_in_80_columns_prints_one_block_per_seat():
    from experiments.sim.summary import print_summary
    seat = {"agent": LONG, "mean": 88.25, "sd": 3.21, "ci95": [86.63, 89.87], "min": 83, "max": 93,
            "win_share": 0.25, "categories": {"bear": 12.5, "corridor_mountain": 6.0}}
    summary = {"games": 20, "seats": {i: dict(seat) for i in range(4)}}
    console, out = _console()
    print_summary(summary, "20 games in runs/simulate-cascadia (1 chunk new)", console)
    text = out.getvalue()
    assert f"seat 3: {LONG}" in text.splitlines()
    _assert_cells_whole(text, ["88.25", "[86.63, 89.87]", "83 / 93", "0.250", "12.50"])


def test_a_wide_two_column_table_prints_one_line_per_row():
    table = Table(title="agents benchmark (one core)")
    table.add_column("measure")
    table.add_column("value")
    name = "cascadia4p_turn_search_start_s_per_turn_768_" + "x" * 40
    table.add_row(name, "2.300")
    console, out = _console()
    print_table(table, console)
    assert out.getvalue().splitlines()[1] == f"{name}: 2.300"
