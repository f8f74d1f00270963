"""Expert iteration's data: seeds per generation, self-play on Ray, the per-generation files.

Seeds: every generation plays its own self-play seeds and its own gating seeds, from a range
far above the evaluation suite (0..), the test suite (1,000,000..) and imitation's warm start
(10,000,000 + 100,000 x run seed): ``EXIT_SEED_BASE + ((run_seed x MAX_GENERATIONS + generation)
x 2 + kind) x MAX_GAMES + i`` (kind 0: self-play, 1: gating), so no two generations, runs of
another seed or kinds ever share a game. A gate's confirmation (``gating.confirm_games``) plays
the gating range's next seeds, after the first ``gating.games``.

Self-play is :func:`experiments.train.imitation.collect` with the search as teacher in every seat and
``top_k`` > 0 (the root visit distribution kept as a soft target); each generation's decisions
go to ``OUT/data/gen_NNN.npz`` as they are made, so a resumed run needs nothing in memory and an
interrupted generation's finished self-play is reused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.base import make_agent
from envs.core.registry import make_game
from experiments.train.exit_config import MAX_GAMES, MAX_GENERATIONS
from experiments.train.imitation import Demonstrations, collect

EXIT_SEED_BASE = 100_000_000
SELFPLAY, GATING = 0, 1


def generation_seeds(run_seed: int, generation: int, kind: int, count: int) -> list[int]:
    """The ``count`` seeds of one generation's self-play (kind 0) or gating (kind 1)."""
    if not 0 <= generation < MAX_GENERATIONS or not 0 < count <= MAX_GAMES:
        raise ValueError(f"generation {generation} / {count} games out of range")
    start = EXIT_SEED_BASE + ((run_seed * MAX_GENERATIONS + generation) * 2 + kind) * MAX_GAMES
    return list(range(start, start + count))


def search_spec(template: str, policy: Path, label: str | None = None, noise: float = 0.0) -> str:
    """The search agent spec playing with the network in ``policy`` (an absolute path, so Ray
    workers find it whatever their working folder); ``noise`` > 0 adds root Dirichlet noise."""
    spec = template.replace("{policy}", str(Path(policy).resolve()))
    if noise > 0:
        spec += f",noise={noise}"
    return f"{spec},label={label}" if label else spec


def selfplay_spec(config: dict[str, Any], policy: Path) -> str:
    return search_spec(config["search"], policy, noise=config["selfplay"]["noise"])


def check_search(config: dict[str, Any], policy: Path) -> None:
    """Build the self-play and the gating search once here, so a bad spec fails in one line before
    any game is played."""
    game = make_game(config["game"], **config["game_options"])
    for spec in {selfplay_spec(config, policy), search_spec(config["search"], policy)}:
        make_agent(spec, game)


def data_path(out: Path, generation: int) -> Path:
    return out / "data" / f"gen_{generation:03d}.npz"


def self_play(config: dict[str, Any], out: Path, generation: int, policy: Path, seed: int,
              progress: bool = True) -> Demonstrations:
    """Generation ``generation``'s self-play games (saved to ``data/gen_NNN.npz``); a file already
    holding exactly these seeds (an interrupted generation) is read back instead of replayed."""
    sp = config["selfplay"]
    seeds = generation_seeds(seed, generation, SELFPLAY, sp["games"])
    path = data_path(out, generation)
    if path.is_file():
        data = Demonstrations.load(path)
        if data.target_actions is not None and sorted(np.unique(data.games).tolist()) == seeds:
            return data
    data = collect(config["game"], config["game_options"], selfplay_spec(config, policy), seeds,
                   sp["workers"], progress, top_k=sp["top_k"], desc=f"gen {generation} self-play")
    data.save(path)
    return data


def load_window(out: Path, generation: int, window: int) -> Demonstrations:
    """The self-play data of the last ``window`` generations up to ``generation`` (those on disk)."""
    paths = [data_path(out, g) for g in range(max(0, generation - window + 1), generation + 1)]
    parts = [Demonstrations.load(p) for p in paths if p.is_file()]
    return Demonstrations.concat(parts)
