"""``meeplelab simulate GAME --agent A --games N [--chunk K] [--out DIR] [--address ADDR]``.

Large self-play runs on Ray. The seeds ``seed .. seed+N-1`` are cut into chunks of ``K``
(chunk ``i`` holds seeds ``seed + i*K ..``); each chunk is one Ray task that plays its games and
returns its Parquet bytes (one row per game and seat) with a record: seed range, row count,
SHA-256 and per-seat aggregates (:mod:`experiments.sim.chunks`). The driver writes both atomically
the moment they arrive. A game depends only on its seed and a chunk only on its seeds, so the
files are identical whatever the number of workers, and rows hold no wall-clock timings.

A rerun verifies every finished chunk against its record and plays again any that is missing,
truncated, altered or another chunk's file (named on stderr); the summary counts chunks verified,
replayed and new. One run at a time per directory (a lock). Agents with a compiled game loop
(random, greedy) play a whole chunk in one numba call in the worker and get their rows from arrays
(:mod:`experiments.sim.compiled`), identical to the Python engine's. The final summary merges the
chunks' records (:mod:`experiments.sim.summary`), so the driver's memory does not grow with the
number of games.

A local run plays its first chunks in this process and starts its own Ray
(:func:`experiments.common.ray_setup.init_ray`, loopback only) for the rest only when the rest would
finish sooner there, start-up included (:mod:`experiments.common.local_first`; ``--workers 1``
never starts Ray). ``--address`` (or ``RAY_ADDRESS``) plays every chunk on that cluster.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import click
import pandas as pd
from tqdm import tqdm

from agents.base import agent_label
from envs.core.errors import ConfigError
from envs.core.registry import GAMES, make_game
from envs.core.textfile import parse_json, read_text
from experiments.common.local_first import HereFirst, local_workers
from experiments.common.output_dir import prepare_out_dir
from experiments.common.ray_options import address_option, check_workers, workers_option
from experiments.common.ray_setup import init_ray, where_running
from experiments.common.runner import build_agents, play_game
from experiments.common.stdout_guard import stdout_to_stderr
from experiments.common.writes import write_atomic
from experiments.replay.records import record_options, record_request, write_simulation_records
from experiments.sim import compiled as sim_compiled
from experiments.sim.chunks import (
    ChunkCheck,
    RunLock,
    chunk_path,
    encode_chunk,
    read_record,
    verify_chunk,
    write_chunk,
)
from experiments.sim.summary import merge_records, print_summary

MANIFEST = "simulation.json"
FORMAT = "meeplelab-simulation/2"

__all__ = ["SimulationSpec", "SimulationResult", "run_simulation", "load_results", "summarize", "chunk_path"]


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
    """What one call of :func:`run_simulation` did, chunk by chunk."""

    out_dir: Path
    chunks_total: int
    chunks_verified: int = 0
    chunks_replayed: int = 0
    chunks_new: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    problems: list[ChunkCheck] = field(default_factory=list)

    @property
    def chunks_run(self) -> int:
        return self.chunks_replayed + self.chunks_new

    def counts(self) -> dict[str, int]:
        return {"chunks_verified": self.chunks_verified, "chunks_replayed": self.chunks_replayed,
                "chunks_new": self.chunks_new}


def play_chunk(game_name: str, game_target: str, options: dict[str, Any], agents: list[str],
               seeds: list[int], index: int, crash_once_dir: str | None = None,
               engine: str = "auto") -> tuple[bytes, dict[str, Any]]:
    """Play the games of one chunk (runs in a Ray worker); its Parquet bytes and record.

    ``engine``: ``auto`` uses the compiled game loop when every seat's agent has one, ``python``
    always plays through the engine and ``agent.act``. ``crash_once_dir`` is a fault-injection
    hook for tests: the first attempt of each chunk kills its own worker (leaving a marker there),
    so Ray must retry the task."""
    if crash_once_dir is not None:
        _crash_once(Path(crash_once_dir) / f"chunk_{index:05d}.crashed")
    GAMES.setdefault(game_name, game_target)  # games registered only in the driver (tests)
    game = make_game(game_name, **options)
    columns = sim_compiled.play_columns(game, agents, seeds, index) if engine == "auto" else None
    if columns is None:
        columns = python_columns(game, agents, seeds, index)
    return encode_chunk(columns, index, seeds)


def _crash_once(marker: Path) -> None:
    if not marker.exists():
        marker.touch()
        os._exit(1)


def python_columns(game: Any, agents: list[str], seeds: list[int], index: int) -> dict[str, list[Any]]:
    """One chunk's columns played through :func:`experiments.common.runner.play_game`."""
    rows: list[dict[str, Any]] = []
    for seed in seeds:
        rows.extend({"chunk": index, **row} for row in play_game(game, agents, seed).seat_rows(timing=False))
    return {key: [row.get(key) for row in rows] for key in rows[0]}


def prepare_directory(spec: SimulationSpec, out_dir: Path) -> None:
    """Create ``out_dir`` with its manifest, or check that an existing one is the same run."""
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / MANIFEST
    wanted = spec.manifest()
    if manifest_path.exists():
        try:
            found = parse_json(read_text(manifest_path, "manifest"), f"manifest {manifest_path}")
        except ConfigError as exc:
            raise ConfigError(f"{exc}; use another --out") from None
        if isinstance(found, dict) and found.get("format") != FORMAT:
            raise ConfigError(f"{out_dir} holds a simulation in format {found.get('format')!r}, not {FORMAT} "
                              "(chunks without verifiable records); use another --out")
        if found != wanted:
            differing = sorted(k for k in set(found) | set(wanted) if found.get(k) != wanted.get(k))
            raise ConfigError(f"{out_dir} holds a different simulation (differs in: {', '.join(differing)}); "
                              "use another --out or the same settings to resume")
    else:
        write_atomic(manifest_path, json.dumps(wanted, indent=2) + "\n")
    for stale in out_dir.glob("chunk_*.tmp"):  # half-written by a crashed driver (we hold the lock)
        stale.unlink()


def check_chunks(spec: SimulationSpec, out_dir: Path) -> tuple[list[ChunkCheck], list[ChunkCheck]]:
    """(trusted chunks, chunks to play): every chunk on disk is verified against its record."""
    chunks = spec.chunks()
    digests = {}
    for index, _ in chunks:
        record = read_record(out_dir, index)
        if record is not None and isinstance(record.get("sha256"), str):
            digests.setdefault(record["sha256"], index)
    checks = [verify_chunk(out_dir, index, seeds, digests) for index, seeds in chunks]
    return [c for c in checks if c.problem is None], [c for c in checks if c.problem is not None]


def validate(spec: SimulationSpec) -> str:
    """Check names and options in the driver (before any task starts); return the game's target."""
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
                   crash_once_dir: str | None = None, engine: str = "auto") -> SimulationResult:
    """Run (or resume) ``spec`` into ``out_dir``; ``workers`` bounds the tasks in flight."""
    target = validate(spec)
    check_workers(workers)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(out_dir):
        prepare_directory(spec, out_dir)
        trusted, todo = check_chunks(spec, out_dir)
        result = SimulationResult(out_dir, len(trusted) + len(todo), chunks_verified=len(trusted),
                                  problems=[c for c in todo if c.problem != "missing"])
        if todo:
            seeds = dict(spec.chunks())
            _play(spec, out_dir, target, [(c.index, seeds[c.index]) for c in todo], result, workers, address,
                  progress, max_retries, crash_once_dir, engine)
    return result


def _play(spec: SimulationSpec, out_dir: Path, target: str, todo: list[tuple[int, list[int]]],
          result: SimulationResult, workers: int | None, address: str | None, progress: bool,
          max_retries: int, crash_once_dir: str | None, engine: str) -> None:
    """Play ``todo``, writing each chunk as it arrives (counts go into ``result``).

    A local run plays here first and starts Ray for the rest only when that pays
    (:mod:`experiments.common.local_first`); ``--address`` (and the crash-injection hook, which
    needs workers to kill) always plays on Ray."""
    replay = {c.index for c in result.problems}
    started = time.perf_counter()
    here = address is None and crash_once_dir is None
    if here:
        click.echo("simulate: playing in this process", err=True)
    else:
        init_ray(num_cpus=workers, address=address)
        click.echo(f"simulate: {where_running(address)}", err=True)
    bar = tqdm(total=result.chunks_total, initial=result.chunks_verified, desc=f"{spec.game} simulate",
               unit="chunk", disable=not progress, dynamic_ncols=True)

    def finished(index: int, payload: tuple[bytes, dict[str, Any]]) -> None:
        write_chunk(out_dir, *payload)
        if index in replay:
            result.chunks_replayed += 1
        else:
            result.chunks_new += 1
        bar.update(1)

    try:
        if here:
            _play_here(spec, target, todo, finished, local_workers(workers), engine)
        if todo:
            _play_on_ray(spec, target, todo, finished, workers, address, max_retries, crash_once_dir, engine)
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        bar.close()
        result.seconds = time.perf_counter() - started


def _play_here(spec: SimulationSpec, target: str, todo: list[tuple[int, list[int]]],
               finished: Callable[[int, tuple[bytes, dict[str, Any]]], None], workers: int,
               engine: str) -> None:
    """Play chunks of ``todo`` in this process (popping them) until Ray would finish the rest
    sooner; with one worker, all of them."""
    timer = HereFirst(workers)
    while todo:
        if timer.move_to_ray(len(todo)):
            tqdm.write(f"simulate: {len(todo)} chunks left at {timer.seconds_per_unit:.1f} s each; "
                       "starting Ray for them", file=sys.stderr)
            return
        index, seeds = todo.pop(0)
        begun = time.perf_counter()
        payload = play_chunk(spec.game, target, spec.options, spec.agents, seeds, index, engine=engine)
        timer.add(time.perf_counter() - begun)
        finished(index, payload)


def _play_on_ray(spec: SimulationSpec, target: str, todo: list[tuple[int, list[int]]],
                 finished: Callable[[int, tuple[bytes, dict[str, Any]]], None], workers: int | None,
                 address: str | None, max_retries: int, crash_once_dir: str | None, engine: str) -> None:
    """Play ``todo`` as Ray tasks, at most ``workers`` in flight (default: every CPU of the Ray
    instance); a failure or Ctrl-C cancels the tasks still running."""
    ray = init_ray(num_cpus=workers, address=address)
    limit = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    remote = ray.remote(num_cpus=1, max_retries=max_retries)(play_chunk)
    in_flight: dict[Any, int] = {}
    try:
        while todo or in_flight:
            while todo and len(in_flight) < limit:
                index, seeds = todo.pop(0)
                ref = remote.remote(spec.game, target, spec.options, spec.agents, seeds, index,
                                    crash_once_dir, engine)
                in_flight[ref] = index
            done, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                finished(in_flight.pop(ref), ray.get(ref))
    finally:  # Ctrl-C, a full disk (DiskFullError) or any failure: stop the tasks, then report
        for ref in in_flight:
            ray.cancel(ref, force=True)


def summarize(spec: SimulationSpec, out_dir: Path) -> dict[str, Any]:
    """The summary of every chunk of ``spec`` in ``out_dir``, from the chunks' records."""
    records = (read_record(out_dir, index) for index, _ in spec.chunks())
    game = make_game(spec.game, **spec.options)
    order = list(game.scores(game.new_game(spec.seed))[0].categories)  # the game's own order
    return merge_records((r for r in records if r is not None), [agent_label(a) for a in spec.agents], order)


def load_results(out_dir: Path) -> pd.DataFrame:
    """Every finished chunk of ``out_dir`` as one frame, in seed order (for analysis; the
    summary never loads the rows)."""
    files = sorted(Path(out_dir).glob("chunk_*.parquet"))
    if not files:
        raise ConfigError(f"no finished chunks in {out_dir}")
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def ray_running() -> bool:
    """Whether this process is connected to a Ray instance (without importing Ray)."""
    ray = sys.modules.get("ray")
    return ray is not None and ray.is_initialized()


def peak_rss_mb() -> float:
    """The driver's peak resident memory so far (MiB; Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def report_problems(result: SimulationResult) -> None:
    """One stderr line per chunk on disk that could not be trusted and was played again."""
    for check in result.problems:
        click.echo(f"{chunk_path(result.out_dir, check.index).name}: {check.problem}; played again", err=True)


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
@workers_option(None, "every CPU; short jobs play in this process, Ray starts once it is faster")
@address_option
@click.option("--engine", type=click.Choice(["auto", "python"]), default="auto", show_default=True,
              help="auto: compiled game loops for agents that have one (same rows); python: agent.act.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary as one JSON object (nothing else on stdout).")
@click.option("--crash-once-dir", hidden=True,
              help="Fault injection for tests: kill each chunk's first attempt.")
@record_options
def simulate(game: str, agent: str, games: int, seed: int, players: int | None, chunk: int, out: str | None,
             workers: int | None, address: str | None, engine: str, as_json: bool,
             crash_once_dir: str | None, record_first: int | None, record_seeds: str | None) -> None:
    """Play GAMES games of GAME, one Parquet file per chunk of seeds (here, on Ray once it is faster,
    or on --address); reruns verify and resume."""
    options = {"players": players} if players is not None else {}
    seats = make_game(game, **options).num_players()
    specs = [s.strip() for s in agent.split(";") if s.strip()]
    if len(specs) == 1:
        specs = specs * seats
    spec = SimulationSpec(game=game, agents=specs, games=games, seed=seed, chunk=chunk, options=options)
    out_dir = prepare_out_dir(out or f"runs/simulate-{game}")
    recording = record_request(record_first, record_seeds, out_dir)
    ray_before = ray_running()
    with stdout_to_stderr(as_json):
        result = run_simulation(spec, out_dir, workers=workers, address=address, progress=not as_json,
                                engine=engine, crash_once_dir=crash_once_dir)
        if as_json and not ray_before and ray_running():
            # Ray prints some notices (a task retried after its worker died) late, from a thread and
            # on stdout: stop the Ray this command started while stdout still points at stderr
            import ray

            ray.shutdown()
    report_problems(result)
    if result.interrupted:
        done = result.chunks_verified + result.chunks_run
        click.echo(f"interrupted: {done} of {result.chunks_total} chunks "
                   f"are on disk in {out_dir}; run the same command again to resume", err=True)
        raise SystemExit(130)
    summary = summarize(spec, out_dir)
    if recording is not None:  # after the results, from a second play of each game (see records.py)
        written = write_simulation_records(game, options, specs, seed, games, *recording, out_dir)
        click.echo(f"wrote {len(written)} game records in {out_dir}/records", err=as_json)
    if as_json:
        click.echo(json.dumps({**summary, **result.counts(), "seconds": result.seconds,
                               "driver_peak_rss_mb": peak_rss_mb()}, indent=2))
    else:
        c = result.counts()
        print_summary(summary, f"{summary['games']} games in {out_dir} ({c['chunks_verified']} chunks "
                               f"verified, {c['chunks_replayed']} replayed, {c['chunks_new']} new; "
                               f"{result.seconds:.1f} s)")
