"""Shared fixtures: the dice-race test game and test agent in the registries, one Ray session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.base import AGENTS
from envs.core.registry import GAMES

REPO_ROOT = Path(__file__).resolve().parents[2]

GAMES.setdefault("dice-race", "tests.experiments.dice_game:DiceRaceGame")
AGENTS.setdefault("prefer", "tests.experiments.dice_game:PreferAgent")


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray (2 CPUs) for every test that needs it; workers can import ``tests``."""
    from experiments.simulate import start_ray

    path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + path if path else "")
    ray = start_ray(num_cpus=2, address=None)  # init_ray(num_cpus=2), forced onto loopback
    yield ray
    ray.shutdown()
