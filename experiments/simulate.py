"""``meeplelab simulate GAME --agent A --games N [--chunk K] [--out DIR] [--address ADDR]``.

Large self-play runs on Ray. The seeds ``seed .. seed+N-1`` are cut into chunks of ``K``
(chunk ``i`` holds seeds ``seed + i*K ..``); each chunk is one Ray task that plays its games with
:func:`experiments.runner.play_game` and returns one row per (game, seat). The driver writes each
chunk to ``DIR/chunk_00000.parquet`` the moment it arrives (a temporary file renamed into place,
so a file that exists is complete). Because a game depends only on its seed and a chunk only on
its seeds, the files are identical whatever the number of workers; a rerun skips the chunks
already on disk (resume after Ctrl-C or a crash), and a worker that dies is retried by Ray with
the same result. Rows hold no wall-clock timings, so files are byte-for-byte reproducible.

Local runs start Ray with :func:`experiments.ray_setup.init_ray` (loopback only); ``--address``
joins an existing cluster instead.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd

from agents.base import agent_label
from envs.core.errors import ConfigError
from envs.core.registry import GAMES
from experiments.output_dir import prepare_out_dir
from experiments.ray_setup import init_ray

MANIFEST = "simulation.json"
FORMAT = "meeplelab-simulation/1"


@dataclass(frozen=True)
class SimulationSpec:
    """What a simulation directory holds; a rerun must match it exactly to resume."""

    game: str
    agents: list[str]
    games: int
    seed: int = 0
    chunk: int = 100
    options: dict[str, Any] = field(default_factory=dict)

    def chunks(self) -> list[tuple[int, list[int]]]:
        """(chunk index, its seeds) for every chunk."""
        starts = range(0, self.games, self.chunk)
        return [(i, list(range(self.seed + s, self.seed + min(s + self.chunk, self.games))))
                for i, s in enumerate(starts)]

    def manifest(self) -> dict[str, Any]:
        return {"format": FORMAT, **asdict(self)}


@dataclass
class SimulationResult:
    """What one call of :func:`run_simulation` did."""

    out_dir: Path
    chunks_total: int
    chunks_run: int
    chunks_skipped: int
    seconds: float
    interrupted: bool = False


def chunk_path(out_dir: Path, index: int) -> Path:
    return Path(out_dir) / f"chunk_{index:05d}.parquet"


def play_chunk(game_name: str, game_target: str, options: dict[str, Any], agents: list[str],
               seeds: list[int], index: int, crash_once_dir: str | None = None) -> list[dict[str, Any]]:
    """Play the games of one chunk (runs in a Ray worker); one row per (game, seat).

    ``crash_once_dir`` is a fault-injection hook for tests: the first attempt of each chunk kills
    its own worker process (after leaving a marker there), so Ray must retry the task.
    """
    if crash_once_dir is not None:
        marker = Path(crash_once_dir) / f"chunk_{index:05d}.crashed"
        if not marker.exists():
            marker.touch()
            os._exit(1)
    from envs.core.registry import make_game
    from experiments.runner import play_game

    GAMES.setdefault(game_name, game_target)  # games registered only in the driver (tests)
    game = make_game(game_name, **options)
    rows: list[dict[str, Any]] = []
    for seed in seeds:
        record = play_game(game, agents, seed)
        for row in record.seat_rows(timing=False):
            rows.append({"chunk": index, **row})
    return rows


def write_chunk(rows: list[dict[str, Any]], path: Path) -> None:
    """Write one chunk's rows as Parquet, atomically (temporary file, then rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(pa.Table.from_pylist(rows), tmp)
    os.replace(tmp, path)


def prepare_directory(spec: SimulationSpec, out_dir: Path) -> None:
    """Create ``out_dir`` with its manifest, or check that an existing one is the same run."""
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / MANIFEST
    wanted = spec.manifest()
    if manifest_path.exists():
        found = json.loads(manifest_path.read_text())
        if found != wanted:
            differing = sorted(k for k in set(found) | set(wanted) if found.get(k) != wanted.get(k))
            raise ConfigError(f"{out_dir} holds a different simulation (differs in: {', '.join(differing)}); "
                              "use another --out or the same settings to resume")
    else:
        manifest_path.write_text(json.dumps(wanted, indent=2) + "\n")
    for stale in out_dir.glob("chunk_*.parquet.tmp"):  # half-written by a crashed driver
        stale.unlink()


def validate(spec: SimulationSpec) -> str:
    """Check names and options in the driver (before any task starts); return the game's target."""
    from envs.core.registry import make_game
    from experiments.runner import build_agents

    if spec.games < 1 or spec.chunk < 1 or spec.seed < 0:
        raise ConfigError("need games >= 1, chunk >= 1, seed >= 0 "
                          f"(got {spec.games}, {spec.chunk}, {spec.seed})")
    game = make_game(spec.game, **spec.options)
    if len(spec.agents) != game.num_players():
        raise ConfigError(f"{spec.game} with these options has {game.num_players()} seats, "
                          f"but {len(spec.agents)} agents were given")
    build_agents(game, spec.agents)
    return GAMES[spec.game.strip().lower()]


def run_simulation(spec: SimulationSpec, out_dir: Path, workers: int | None = None,
                   address: str | None = None, progress: bool = True, max_retries: int = 3,
                   crash_once_dir: str | None = None) -> SimulationResult:
    """Run (or resume) ``spec`` into ``out_dir``; ``workers`` bounds the tasks in flight."""
    from tqdm import tqdm

    target = validate(spec)
    out_dir = Path(out_dir)
    prepare_directory(spec, out_dir)
    chunks = spec.chunks()
    todo = [(i, seeds) for i, seeds in chunks if not chunk_path(out_dir, i).exists()]
    started = time.perf_counter()
    result = SimulationResult(out_dir, len(chunks), 0, len(chunks) - len(todo), 0.0)
    if not todo:
        return result
    ray = init_ray(num_cpus=workers, address=address)
    limit = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    remote = ray.remote(num_cpus=1, max_retries=max_retries)(play_chunk)
    in_flight: dict[Any, int] = {}
    bar = tqdm(total=len(chunks), initial=result.chunks_skipped, desc=f"{spec.game} simulate", unit="chunk",
               disable=not progress, dynamic_ncols=True)
    try:
        while todo or in_flight:
            while todo and len(in_flight) < limit:
                index, seeds = todo.pop(0)
                ref = remote.remote(spec.game, target, spec.options, spec.agents, seeds, index,
                                    crash_once_dir)
                in_flight[ref] = index
            done, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                index = in_flight.pop(ref)
                write_chunk(ray.get(ref), chunk_path(out_dir, index))
                result.chunks_run += 1
                bar.update(1)
    except KeyboardInterrupt:
        result.interrupted = True
        for ref in in_flight:
            ray.cancel(ref, force=True)
    finally:
        bar.close()
        result.seconds = time.perf_counter() - started
    return result


def load_results(out_dir: Path) -> pd.DataFrame:
    """Every finished chunk of ``out_dir`` as one frame, in seed order."""
    files = sorted(Path(out_dir).glob("chunk_*.parquet"))
    if not files:
        raise ConfigError(f"no finished chunks in {out_dir}")
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def summarize_results(frame: pd.DataFrame) -> dict[str, Any]:
    """Per seat: totals (mean, SD, 95% CI), category means, and win share when several seats
    (from the game's own winners, tie-breaks included; a shared win is split)."""
    from experiments import stats

    summary: dict[str, Any] = {"games": int(frame.seed.nunique()), "seats": {}}
    categories = [c for c in frame.columns if c.startswith("cat_")]
    if "win" not in frame.columns:  # solo: no winners
        frame = frame.assign(win=np.nan)
    for seat, rows in frame.groupby("seat"):
        s = stats.summarize(rows.total)
        entry = {"agent": rows.agent.iloc[0], "mean": s.mean, "sd": s.sd, "se": s.se, "ci95": s.ci95_t,
                 "min": s.min, "max": s.max, "categories": {c[4:]: float(rows[c].mean()) for c in categories}}
        if frame.seat.nunique() > 1:
            entry["win_share"] = float(rows.win.mean())
        summary["seats"][int(seat)] = entry
    return summary


def print_summary(summary: dict[str, Any], result: SimulationResult) -> None:
    """One column per seat, one row per measure (games can have many categories)."""
    from rich.console import Console
    from rich.table import Table

    seats = summary["seats"]
    table = Table(title=f"{summary['games']} games in {result.out_dir} ({result.chunks_run} chunks run, "
                        f"{result.chunks_skipped} already done, {result.seconds:.1f} s)")
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
    Console().print(table)


@click.command()
@click.argument("game")
@click.option("--agent", "agent", default="random", show_default=True,
              help="Agent spec for every seat, or one per seat separated by ';'.")
@click.option("--games", type=int, default=1000, show_default=True, help="Number of games (seeds).")
@click.option("--seed", type=int, default=0, show_default=True, help="First seed.")
@click.option("--players", type=int, help="Number of seats (default: the game's default).")
@click.option("--chunk", type=int, default=100, show_default=True, help="Games per Ray task / Parquet file.")
@click.option("--out", type=click.Path(file_okay=False),
              help="Output directory (default runs/simulate-GAME).")
@click.option("--workers", type=int, help="Tasks in flight (default: every CPU of the Ray cluster).")
@click.option("--address", help="Join an existing Ray cluster (host:port or auto) instead of a local one.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def simulate(game: str, agent: str, games: int, seed: int, players: int | None, chunk: int, out: str | None,
             workers: int | None, address: str | None, as_json: bool) -> None:
    """Play GAMES games of GAME with Ray, one Parquet file per chunk of seeds; reruns resume."""
    options = {"players": players} if players is not None else {}
    from envs.core.registry import make_game

    seats = make_game(game, **options).num_players()
    specs = [s.strip() for s in agent.split(";") if s.strip()]
    if len(specs) == 1:
        specs = specs * seats
    spec = SimulationSpec(game=game, agents=[agent_label(s) for s in specs], games=games, seed=seed,
                          chunk=chunk, options=options)
    out_dir = prepare_out_dir(out or f"runs/simulate-{game}")
    result = run_simulation(spec, out_dir, workers=workers, address=address)
    if result.interrupted:
        done = result.chunks_skipped + result.chunks_run
        click.echo(f"interrupted: {done} of {result.chunks_total} chunks "
                   f"are on disk in {out_dir}; run the same command again to resume", err=True)
        raise SystemExit(130)
    summary = summarize_results(load_results(out_dir))
    if as_json:
        click.echo(json.dumps({**summary, "chunks_run": result.chunks_run,
                               "chunks_skipped": result.chunks_skipped, "seconds": result.seconds}, indent=2))
    else:
        print_summary(summary, result)
