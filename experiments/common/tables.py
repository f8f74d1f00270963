"""Rich tables on the terminal that never break a number or a label across lines.

:func:`print_table` prints a table as it is when its natural width fits the console (80 columns in a
pipe unless ``COLUMNS`` says otherwise). A wider table prints as plain blocks instead: one block per
row (or per column, ``by="column"``, for tables whose columns are the agents), its label on one line
and ``name: value`` pairs packed into the lines below, so a cell is never split.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Literal

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

#: between the ``name: value`` pairs of a block line
SEPARATOR = " | "
INDENT = "  "


def natural_width(table: Table, console: Console) -> int:
    """Columns the table needs with no cell wrapped."""
    return Measurement.get(console, console.options.update_width(10**6), table).maximum


def cell_text(cell: object) -> str:
    """A cell (str or rich Text) as plain text."""
    return cell.plain if isinstance(cell, Text) else str(cell)


def pack(pairs: Sequence[str], width: int) -> list[str]:
    """``pairs`` joined by :data:`SEPARATOR` into lines of at most ``width`` characters (a pair longer
    than that gets a line of its own, whole)."""
    lines: list[str] = []
    for pair in pairs:
        if lines and len(lines[-1]) + len(SEPARATOR) + len(pair) <= width:
            lines[-1] += SEPARATOR + pair
        else:
            lines.append(pair)
    return lines


def blocks(table: Table, width: int, by: Literal["row", "column"] = "row") -> list[str]:
    """The table as plain lines: its title wrapped at spaces, then one block per row (label: the first
    cell) or per column after the first (label: its header); a two-column table by row, one line per row."""
    headers = [cell_text(c.header) for c in table.columns]
    grid = [[cell_text(cell) for cell in column.cells] for column in table.columns]
    rows = [list(row) for row in zip(*grid, strict=True)]
    if by == "row":
        items = [(row[0], [f"{h}: {v}" for h, v in zip(headers[1:], row[1:], strict=True)]) for row in rows]
    else:
        items = [(headers[c], [f"{row[0]}: {row[c]}" for row in rows]) for c in range(1, len(headers))]
    title = cell_text(table.title) if table.title else ""
    lines = textwrap.wrap(title, width, break_long_words=False, break_on_hyphens=False)
    if len(headers) == 2 and by == "row":  # a list of measures: one ``name: value`` line each
        return lines + [f"{row[0]}: {row[1]}" for row in rows]
    for label, pairs in items:
        lines.append(label)
        lines += [INDENT + line for line in pack(pairs, width - len(INDENT))]
    return lines


def print_table(table: Table, console: Console | None = None, by: Literal["row", "column"] = "row",
                notes: Sequence[str] = ()) -> None:
    """Print ``table`` on ``console`` (stdout by default) if it fits, else as :func:`blocks`; then each of
    ``notes`` (wrapped at spaces)."""
    console = console or Console()
    width = console.width
    if natural_width(table, console) <= width:
        for column in table.columns:
            column.no_wrap = True
        console.print(table)
    else:
        for line in [*blocks(table, width, by), ""]:
            console.print(line, soft_wrap=True, markup=False, highlight=False)
    for note in notes:
        for line in textwrap.wrap(note, width, break_long_words=False, break_on_hyphens=False):
            console.print(line, soft_wrap=True, markup=False, highlight=False)
