"""Shared fixtures: the dice-race test game and test agent in the registries, one Ray session."""

from __future__ import annotations

import os

import pytest

from agents.base import AGENTS
from envs.core.registry import GAMES
from tests.paths import REPO_ROOT

TEST_GAMES = {"dice-race": "tests.experiments.dice_game:DiceRaceGame"}
TEST_AGENTS = {"prefer": "tests.experiments.dice_game:PreferAgent"}


@pytest.fixture(scope="package", autouse=True)
def registered_test_game():
    """dice-race and the ``prefer`` agent exist while this package's tests run, and only then."""
    GAMES.update(TEST_GAMES)
    AGENTS.update(TEST_AGENTS)
    yield
    for name in TEST_GAMES:
        GAMES.pop(name, None)
    for name in TEST_AGENTS:
        AGENTS.pop(name, None)


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray (2 CPUs) for every test that needs it; workers can import ``tests``."""
    from experiments.common.ray_setup import init_ray

    path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + path if path else "")
    ray = init_ray(num_cpus=2)
    yield ray
    ray.shutdown()
