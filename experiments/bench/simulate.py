"""``meeplelab bench simulate``: games per second of one ``simulate`` worker, end to end.

One worker's job is :func:`experiments.sim.simulate.play_chunk` (play the chunk, build its columns, encode
Parquet, checksum and aggregates) plus the driver's atomic write; both are timed here in one process
(a Ray task runs exactly this, one per CPU). Random and greedy play go through each game's compiled
chunk loop (:mod:`experiments.sim.compiled`; random target >= 5,000 games/s per worker), greedy
compared with the compiled greedy playout (``game.rollout_returns(state, seed, "greedy")``, the
rate MCTS gets; target: simulate at >= 90% of it). Process CPU time, after a warm-up chunk that
compiles or loads every kernel.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from envs.core.registry import GAMES, make_game
from experiments.sim.chunks import write_chunk
from experiments.sim.simulate import play_chunk

#: (label, game, options) of the tables measured
TABLES = [("cartographers_solo", "cartographers", {"players": 1}),
          ("cascadia_4p", "cascadia", {"players": 4}),
          ("dorfromantik", "dorfromantik", {})]
RANDOM_TARGET = 5000.0
GREEDY_SHARE_TARGET = 0.9


def simulate_rate(game_name: str, options: dict[str, Any], agent: str, games: int, out_dir: Path) -> float:
    """Games per CPU second of play_chunk + write_chunk over ``games`` seeds (after a warm-up)."""
    players = make_game(game_name, **options).num_players()
    agents = [agent] * players
    target = GAMES[game_name]
    write_chunk(out_dir, *play_chunk(game_name, target, options, agents, [10**6, 10**6 + 1], 0))
    started = time.process_time()
    write_chunk(out_dir, *play_chunk(game_name, target, options, agents, list(range(games)), 1))
    return games / max(time.process_time() - started, 1e-9)


def compiled_greedy_rate(game_name: str, options: dict[str, Any], games: int) -> float:
    """Games per CPU second of the compiled greedy playout from a new game (new_game included)."""
    game = make_game(game_name, **options)
    game.rollout_returns(game.new_game(10**6), 0, "greedy")
    started = time.process_time()
    for seed in range(games):
        game.rollout_returns(game.new_game(seed), seed, "greedy")
    return games / max(time.process_time() - started, 1e-9)


def run_bench(quick: bool = False) -> dict[str, Any]:
    """Per table: random and greedy simulate rates, the compiled greedy rate, and the targets."""
    n_random, n_greedy = (300, 10) if quick else (2000, 40)
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-simulate-") as tmp:
        for label, game_name, options in TABLES:
            out = Path(tmp) / label
            out.mkdir()
            random_rate = simulate_rate(game_name, options, "random", n_random, out)
            greedy_rate = simulate_rate(game_name, options, "greedy", n_greedy, out)
            playout_rate = compiled_greedy_rate(game_name, options, n_greedy)
            figures[label] = {
                "random_games_per_s_per_worker": random_rate,
                "random_target_met": random_rate >= RANDOM_TARGET,
                "greedy_games_per_s_per_worker": greedy_rate,
                "compiled_greedy_playouts_per_s": playout_rate,
                "greedy_share_of_compiled": greedy_rate / playout_rate,
                "greedy_target_met": greedy_rate >= GREEDY_SHARE_TARGET * playout_rate,
            }
    return figures
