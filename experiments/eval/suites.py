"""Named seed suites (``configs/suites.yaml``): ``--suite dev`` instead of ``--seed/--games``.

A suite is a fixed list of game seeds, so anyone can reproduce a published figure by naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from envs.core.errors import ConfigError
from envs.core.install import shipped_file
from envs.core.textfile import read_yaml

#: the shipped suites (the checkout's configs/, or the installed data package)
SUITES_FILE = shipped_file("configs", "suites.yaml")


@dataclass(frozen=True)
class SeedSuite:
    """A named list of seeds."""

    name: str
    seeds: tuple[int, ...]
    description: str = ""


#: the most games one evaluation lists (its seeds are held in memory; simulate streams larger runs)
MAX_GAMES = 10_000_000
#: the largest seed: seeds are written as int64 columns (games.csv, Parquet)
MAX_SEED = 2**63 - 1


def seed_range(seed: int, games: int) -> tuple[int, ...]:
    """The seeds ``seed .. seed + games - 1`` (validated)."""
    if games < 1:
        raise ConfigError(f"games must be at least 1, got {games}")
    if games > MAX_GAMES:
        raise ConfigError(f"games must be at most {MAX_GAMES:,} (use simulate for more), got {games}")
    if seed < 0:
        raise ConfigError(f"seed must be >= 0, got {seed}")
    if seed + games - 1 > MAX_SEED:
        raise ConfigError(f"seeds must stay below 2**63 (they are stored as int64), "
                          f"got {seed}..{seed + games - 1}")
    return tuple(range(seed, seed + games))


def load_suites(path: Path = SUITES_FILE) -> dict[str, SeedSuite]:
    """Every suite in ``path``; a malformed entry raises ConfigError naming it and the key."""
    data = read_yaml(path, "seed suites file")
    if not isinstance(data, dict) or not isinstance(data.get("suites"), dict):
        raise ConfigError(f"{path}: expected a mapping with key 'suites'")
    suites = {}
    for name, entry in data["suites"].items():
        where = f"{path}: suites.{name}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: expected a mapping")
        unknown = set(entry) - {"description", "seed", "games", "seeds"}
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        if "seeds" in entry:
            seeds = entry["seeds"]
            if not isinstance(seeds, list) or not seeds or not all(
                    isinstance(s, int) and s >= 0 for s in seeds):
                raise ConfigError(f"{where}.seeds: expected a non-empty list of integers >= 0")
            seeds = tuple(seeds)
        else:
            for key in ("seed", "games"):
                if not isinstance(entry.get(key), int) or isinstance(entry.get(key), bool):
                    raise ConfigError(f"{where}.{key}: expected an integer")
            seeds = seed_range(entry["seed"], entry["games"])
        suites[str(name)] = SeedSuite(str(name), seeds, str(entry.get("description", "")))
    return suites


def load_suite(name: str, path: Path = SUITES_FILE) -> SeedSuite:
    """The suite called ``name``; an unknown name raises ConfigError listing the known ones."""
    suites = load_suites(path)
    if name not in suites:
        raise ConfigError(f"unknown seed suite {name!r}; known suites: {', '.join(sorted(suites))}")
    return suites[name]


def resolve_seeds(suite: str | None, seed: int | None, games: int | None,
                  default_seed: int = 0, default_games: int = 100) -> tuple[tuple[int, ...], str]:
    """Seeds from ``--suite`` or ``--seed/--games`` (not both) and a label saying which."""
    if suite is not None:
        if seed is not None or games is not None:
            raise ConfigError("give either --suite or --seed/--games, not both")
        chosen = load_suite(suite)
        return chosen.seeds, f"suite {chosen.name}"
    seed = default_seed if seed is None else seed
    games = default_games if games is None else games
    return seed_range(seed, games), f"seeds {seed}..{seed + games - 1}"
