"""``meeplelab bench GAME|all [--json]``: speed of the compiled engines against the reference.

Each game has ``experiments/bench/<game>.py`` with ``run_bench(quick: bool) -> dict``; this
module dispatches, prints a table or JSON, and never times anything itself.
"""

from __future__ import annotations

import importlib
import json

import click
from rich.console import Console
from rich.table import Table

from envs.core.errors import ConfigError
from envs.core.registry import GAMES
from experiments.common.tables import print_table

#: what `meeplelab bench` can measure besides the games
EXTRA_BENCHES = ("agents", "learned", "ppo", "simulate", "vector")


def run_game_bench(game: str, quick: bool = False) -> dict:
    """Run one benchmark (a game, or "agents") and return its figures."""
    if game not in GAMES and game not in EXTRA_BENCHES:
        known = ", ".join(sorted(GAMES) + list(EXTRA_BENCHES))
        raise ConfigError(f"unknown benchmark {game!r}; known: {known}, all")
    try:
        module = importlib.import_module(f"experiments.bench.{game}")
    except ModuleNotFoundError as exc:
        raise ConfigError(f"no benchmark for {game!r} yet") from exc
    return module.run_bench(quick=quick)


def flat_figures(figures: dict, prefix: str = "") -> dict:
    """Nested figures (e.g. per game) as one level of ``outer.inner`` keys for the table."""
    flat: dict = {}
    for key, value in figures.items():
        if isinstance(value, dict):
            flat.update(flat_figures(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


@click.command()
@click.argument("game")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option("--quick", is_flag=True, help="Fewer repetitions (a smoke run, noisier figures).")
def bench(game: str, as_json: bool, quick: bool) -> None:
    """Benchmark GAME (cartographers, cascadia, dorfromantik, agents, learned, ppo, simulate, vector
    or all)."""
    names = list(GAMES) + list(EXTRA_BENCHES)
    games = [g for g in names if importlib.util.find_spec(f"experiments.bench.{g}")] if game == "all" \
        else [game]
    results = {g: run_game_bench(g, quick=quick) for g in games}
    if as_json:
        click.echo(json.dumps(results if game == "all" else results[game], indent=2))
        return
    console = Console()
    for name, figures in results.items():
        table = Table(title=f"{name} benchmark (one core)")
        table.add_column("measure")
        table.add_column("value", justify="right")
        for key, value in flat_figures(figures).items():
            table.add_row(key, f"{value:,.3f}" if isinstance(value, float) else str(value))
        print_table(table, console)
