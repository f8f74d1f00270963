"""``meeplelab decision-time``: time agents on the same positions, side by side.

"At equal time per decision" needs the agents timed on identical positions: the time an agent
spends in its own games also depends on where its play leads (a better Dorfromantik landscape is a
longer game). This command plays ``--from`` games from consecutive seeds, keeps every ``--every``-th
decision as a position until it has ``--positions``, then asks each agent for its move on each
position (a copy), in alternating order (ABAB, BABA, ... so neither always runs on a warmer cache),
after one untimed decision each (numba compiles there). It reports the CPU and wall milliseconds per
decision of each agent and the ratio of each to the first with a 95% bootstrap interval over the
positions; ``--out`` writes one row per position and agent.
"""

from __future__ import annotations

import csv
import time
from dataclasses import dataclass
from pathlib import Path

import click
import numpy as np
from tqdm import tqdm

from agents.base import Agent, agent_label, make_agent
from agents.labels import unique_labels
from envs.core.errors import ConfigError
from envs.core.game import Game, State
from envs.core.registry import GAMES, make_game
from envs.core.rng import numpy_generator
from experiments.common.output_dir import prepare_out_dir
from experiments.eval.config import split_agents


@dataclass(frozen=True)
class Timing:
    """One agent's decision on one position: its move and the CPU and wall seconds it took."""

    position: int
    agent: str
    action: int
    cpu_seconds: float
    wall_seconds: float


def sample_positions(game: Game, spec: str, seed: int, count: int, every: int) -> list[State]:
    """``count`` positions: every ``every``-th decision of games played by ``spec`` in every seat,
    from seed ``seed`` on (a finished game moves on to the next seed)."""
    if count < 1 or every < 1:
        raise ConfigError("--positions and --every must be at least 1")
    agents = [make_agent(spec, game) for _ in range(game.num_players())]
    positions: list[State] = []
    while len(positions) < count:
        rngs = [numpy_generator(seed, f"seat{i}") for i in range(len(agents))]
        state = game.new_game(seed)
        decision = 0
        while not game.is_over(state) and len(positions) < count:
            if decision % every == 0:
                positions.append(state.copy())
            seat = game.current_player(state)
            game.step(state, int(agents[seat].act(state, game.legal_mask(state), rngs[seat])))
            decision += 1
        seed += 1
    return positions


def time_decision(game: Game, agent: Agent, state: State,
                  rng: np.random.Generator) -> tuple[int, float, float]:
    """(move, CPU seconds, wall seconds) of ``agent`` on a copy of ``state``."""
    position = state.copy()
    mask = game.legal_mask(position)
    cpu, wall = time.process_time(), time.perf_counter()
    action = int(agent.act(position, mask, rng))
    return action, time.process_time() - cpu, time.perf_counter() - wall


def time_agents(game: Game, specs: list[str], positions: list[State], progress: bool = False) -> list[Timing]:
    """Every agent's decision on every position, the order alternating from one position to the next."""
    labels = unique_labels(specs)
    agents = [make_agent(spec, game) for spec in specs]
    for agent in agents:
        time_decision(game, agent, positions[0], numpy_generator(0, "decision-time warm-up"))
    timings = []
    for i, state in enumerate(tqdm(positions, desc="decision-time", unit="position", disable=not progress)):
        order = range(len(agents)) if i % 2 == 0 else reversed(range(len(agents)))
        for k in order:
            action, cpu, wall = time_decision(game, agents[k], state, numpy_generator(i, "decision-time"))
            timings.append(Timing(i, labels[k], action, cpu, wall))
    return timings


def ratio_interval(values: np.ndarray, base: np.ndarray, resamples: int = 2000,
                   seed: int = 0) -> tuple[float, float, float]:
    """mean(values) / mean(base) and its 95% bootstrap interval, resampling positions in pairs."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(values), size=(resamples, len(values)))
    ratios = values[picks].mean(axis=1) / base[picks].mean(axis=1)
    low, high = np.quantile(ratios, [0.025, 0.975])
    return float(values.mean() / base.mean()), float(low), float(high)


def summary_rows(timings: list[Timing], labels: list[str]) -> list[dict[str, float | str]]:
    """Per agent: CPU and wall ms per decision and the CPU and wall ratios to the first agent."""
    def column(label: str, field: str) -> np.ndarray:
        return np.array([getattr(t, field) for t in timings if t.agent == label]) * 1000.0

    rows = []
    for label in labels:
        row: dict[str, float | str] = {"agent": label}
        for field, name in (("cpu_seconds", "cpu"), ("wall_seconds", "wall")):
            values = column(label, field)
            row[f"{name}_ms"] = float(values.mean())
            row[f"{name}_ratio"], row[f"{name}_low"], row[f"{name}_high"] = ratio_interval(
                values, column(labels[0], field))
        rows.append(row)
    return rows


@click.command(name="decision-time")
@click.argument("game_name", metavar="GAME")
@click.option("--agents", required=True, help="Comma-separated agent specs; ratios are to the first.")
@click.option("--positions", type=int, default=40, show_default=True,
              help="Positions to time each agent on.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="First seed of the games the positions come from.")
@click.option("--every", type=int, default=5, show_default=True,
              help="Keep every N-th decision as a position.")
@click.option("--from", "source", default="greedy", show_default=True,
              help="Agent spec that plays the games the positions come from (every seat).")
@click.option("--players", type=int, help="Number of seats (default: the game's default).")
@click.option("--out", type=click.Path(file_okay=False),
              help="Folder for timings.csv (one row per position and agent).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def decision_time(game_name: str, agents: str, positions: int, seed: int, every: int, source: str,
                  players: int | None, out: str | None, no_progress: bool) -> None:
    """Time AGENTS' decisions on the same positions of GAME (CPU and wall ms, ratios to the first)."""
    if game_name not in GAMES:
        raise ConfigError(f"unknown game {game_name!r}; known: {', '.join(sorted(GAMES))}")
    game = make_game(game_name, **({"players": players} if players else {}))
    specs = split_agents(agents)
    labels = unique_labels(specs)
    states = sample_positions(game, source, seed, positions, every)
    timings = time_agents(game, specs, states, progress=not no_progress)
    folder = prepare_out_dir(out)
    if folder is not None:
        with open(folder / "timings.csv", "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["position", "agent", "action", "cpu_ms", "wall_ms"])
            for t in timings:
                writer.writerow([t.position, t.agent, t.action, f"{t.cpu_seconds * 1000:.3f}",
                                 f"{t.wall_seconds * 1000:.3f}"])
    click.echo(f"{game_name}: {len(states)} positions (one decision in {every} of "
               f"{agent_label(source)} games from seed {seed}), each agent on each")
    width = max(len(label) for label in ["agent", *labels])
    click.echo(f"{'agent':<{width}} {'CPU ms':>9} {'CPU / first [95% CI]':>26} {'wall ms':>9} "
               f"{'wall / first [95% CI]':>26}")
    for row in summary_rows(timings, labels):
        cpu = f"{row['cpu_ratio']:.3f} [{row['cpu_low']:.3f}, {row['cpu_high']:.3f}]"
        wall = f"{row['wall_ratio']:.3f} [{row['wall_low']:.3f}, {row['wall_high']:.3f}]"
        click.echo(f"{row['agent']:<{width}} {row['cpu_ms']:>9.1f} {cpu:>26} "
                   f"{row['wall_ms']:>9.1f} {wall:>26}")
    if folder is not None:
        click.echo(f"timings: {Path(folder) / 'timings.csv'}")
