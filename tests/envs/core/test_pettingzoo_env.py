"""The PettingZoo AEC envs (envs/core/pettingzoo_env.py, envs/<game>/pettingzoo.py): PettingZoo's own
API and seed tests, and the same game as the plain engine for the same seed and actions."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

# api_test warns about every Dict observation, action masks included (its own classic envs too)
pytestmark = pytest.mark.filterwarnings("ignore:Observation:UserWarning")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from envs.cartographers import pettingzoo as cartographers_pz  # noqa: E402
from envs.cascadia import pettingzoo as cascadia_pz  # noqa: E402
from envs.core.errors import IllegalActionError  # noqa: E402
from envs.core.registry import make_game  # noqa: E402
from envs.dorfromantik import pettingzoo as dorfromantik_pz  # noqa: E402

CASES = {
    "cartographers-1": (cartographers_pz, "cartographers", {"players": 1}),
    "cartographers-3": (cartographers_pz, "cartographers", {"players": 3}),
    "cascadia-2": (cascadia_pz, "cascadia", {"players": 2}),
    "dorfromantik-1": (dorfromantik_pz, "dorfromantik", {}),
    "dorfromantik-2": (dorfromantik_pz, "dorfromantik", {"players": 2}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_api(case):
    module, _, options = CASES[case]
    api_test(module.env(**options), num_cycles=100)  # whole games, dead steps included


def test_seed():
    seed_test(lambda: cascadia_pz.env(players=2), num_cycles=40)


def play_aec(env, seed: int, rng: np.random.Generator) -> tuple[list[int], dict[str, float]]:
    """A whole game through the AEC env with actions drawn from the mask: (actions, reward sums)."""
    env.reset(seed=seed)
    actions, returns = [], {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        returns[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        actions.append(action)
        env.step(action)
    return actions, returns


@pytest.mark.parametrize("case", ["cartographers-3", "cascadia-2", "dorfromantik-2"])
def test_same_game_as_the_engine(case):
    module, name, options = CASES[case]
    actions, returns = play_aec(module.env(**options), seed=7, rng=np.random.default_rng(3))
    game = make_game(name, **options)
    state = game.new_game(7)
    start = game.returns(state)  # Cascadia's starting tiles already score
    rng = np.random.default_rng(3)
    for action in actions:
        legal = np.flatnonzero(game.legal_mask(state))
        assert int(rng.choice(legal)) == action
        game.step(state, action)
    assert game.is_over(state)
    gained = (game.returns(state) - start).tolist()
    assert [returns[f"player_{i}"] for i in range(game.num_players())] == pytest.approx(gained)


def test_masks_spaces_and_dead_steps():
    env = cascadia_pz.env(players=2, render_mode="ansi")
    env.reset(seed=5)
    mover = env.agent_selection
    other = next(a for a in env.agents if a != mover)
    obs = env.observe(mover)
    assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].any()
    assert not env.observe(other)["action_mask"].any()
    assert env.observation_space(mover).contains(obs)
    assert env.action_space(mover).n == obs["action_mask"].size
    assert isinstance(env.render(), str)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step(illegal)
    env.close()

    env = dorfromantik_pz.env(players=2)
    play_aec(env, seed=1, rng=np.random.default_rng(0))
    assert env.agents == []  # every terminated agent was removed by its dead step
    env.reset(seed=1)
    assert env.agents == env.possible_agents and not any(env.terminations.values())
