"""Every script in examples/ runs from the repository root with a tiny budget and prints its result
(``RUNS``: its arguments and a pattern its output must hold)."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from agents.base import make_agent
from envs.core.registry import make_game
from tests.paths import REPO_ROOT

RUNS = {
    "random_masked.py": (["--games", "1"], "game 0:"),
    "pettingzoo_loop.py": (["--seed", "1"], "'player_2':"),
    "agents_api.py": (["--games", "2"], "learned - greedy"),
    "candidates_linear.py": (["--seed", "3"], "seed 3: score"),
    # two PPO updates on 4 envs; the vector env raises on an illegal action, and the script counts them
    "ppo_minimal.py": (["--total-timesteps", "256", "--num-envs", "4", "--num-steps", "32", "--hidden", "64"],
                       r"\d[\d,]* env steps/s with learning, \d+ games, illegal actions 0\n"),
}


def test_every_example_is_run_here():
    assert sorted(p.name for p in (REPO_ROOT / "examples").glob("*.py")) == sorted(RUNS)


@pytest.mark.parametrize("script", sorted(RUNS))
def test_example_runs(script):
    args, expected = RUNS[script]
    out = subprocess.run([sys.executable, str(REPO_ROOT / "examples" / script), *args], cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert re.search(expected, out.stdout), out.stdout[-2000:]



def test_candidates_example_plays_the_learned_agent():
    """On seed 3 (no decision where the env's 256-row cut drops the model's choice) the env loop of
    candidates_linear.py plays the learned agent's game: the same final score."""
    script = str(REPO_ROOT / "examples" / "candidates_linear.py")
    out = subprocess.run([sys.executable, script, "--seed", "3"], cwd=REPO_ROOT, capture_output=True,
                         text=True, timeout=600)
    game = make_game("cartographers")
    agent = make_agent("learned:models/cartographers_solo", game)
    state, rng = game.new_game(3), np.random.default_rng(0)
    while not game.is_over(state):
        game.step(state, agent.act(state, game.legal_mask(state), rng))
    assert f"seed 3: score {int(game.returns(state)[0])}" in out.stdout
