"""gymnasium.make_vec: the batched numba vector envs through the vector entry point."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import envs  # noqa: F401  (registers the ids)
from envs.cartographers.vector_env import CartographersVectorEnv
from envs.cascadia.vector_env import CascadiaVectorEnv
from envs.core.errors import ConfigError
from envs.dorfromantik.vector_env import DorfromantikVectorEnv


@pytest.mark.parametrize("env_id, cls", [("meeplelab/Cartographers-v0", CartographersVectorEnv),
                                         ("meeplelab/Cascadia-v0", CascadiaVectorEnv),
                                         ("meeplelab/Dorfromantik-v0", DorfromantikVectorEnv)])
def test_make_vec_returns_the_batched_env_and_plays(env_id, cls):
    vec = gymnasium.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point")
    assert isinstance(vec, cls) and vec.num_envs == 3
    assert vec.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    direct = cls(num_envs=3)
    obs, _ = vec.reset(seed=5)
    expected, _ = direct.reset(seed=5)
    assert np.array_equal(obs["action_mask"], expected["action_mask"])  # the same games for the same seed
    rng = np.random.default_rng(0)
    for _ in range(80):  # past the end of the first games (Cartographers, Dorfromantik): next-step autoreset
        # a finished game's mask is empty and its next action is ignored (that step resets it)
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in obs["action_mask"]])
        obs, rewards, _, _, _ = vec.step(actions)
        expected, expected_rewards, _, _, _ = direct.step(actions)
        assert np.array_equal(rewards, expected_rewards)
        assert np.array_equal(obs["action_mask"], expected["action_mask"])


def test_make_vec_passes_options_and_names_bad_action_spaces():
    vec = gymnasium.make_vec("meeplelab/Cascadia-v0", num_envs=2, players=2)
    assert vec.game.num_players() == 2
    with pytest.raises(ConfigError, match="action_space must be 'plain' or 'candidates'"):
        gymnasium.make_vec("meeplelab/Cartographers-v0", num_envs=2, action_space="rows")
    with pytest.raises(ConfigError, match="max_candidates needs action_space='candidates'"):
        gymnasium.make_vec("meeplelab/Cartographers-v0", num_envs=2, max_candidates=8)


@pytest.mark.parametrize("env_id", ["meeplelab/Cartographers-v0", "meeplelab/Dorfromantik-v0",
                                    "meeplelab/Cascadia-v0"])
def test_the_candidate_vector_env_plays_the_single_candidate_envs_games(env_id):
    """Sub-env i after ``reset(seed=s)`` is the single candidate env seeded ``s + i``: the same rows
    and the same rewards when both play the same row indices; next-step autoreset."""
    vec = gymnasium.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point",
                             action_space="candidates", max_candidates=16)
    singles = [gymnasium.make(env_id, action_space="candidates", max_candidates=16) for _ in range(2)]
    assert vec.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    obs, _ = vec.reset(seed=5)
    single_obs = [env.reset(seed=5 + i)[0] for i, env in enumerate(singles)]
    assert obs["candidates"].shape == (2, 16, singles[0].observation_space["candidates"].shape[1])
    rng = np.random.default_rng(0)
    for _ in range(12):
        for i in range(2):
            np.testing.assert_array_equal(obs["candidates"][i], single_obs[i]["candidates"])
        rows = np.array([rng.choice(np.flatnonzero(obs["candidate_mask"][i])) for i in range(2)])
        obs, rewards, terminated, _, _ = vec.step(rows)
        steps = [env.step(int(row)) for env, row in zip(singles, rows, strict=True)]
        single_obs = [s[0] for s in steps]
        np.testing.assert_array_equal(rewards, [s[1] for s in steps])
        assert not terminated.any()


def test_dorfromantik_vectorizes_its_single_env():
    vec = gymnasium.make_vec("meeplelab/Dorfromantik-v0", num_envs=2, vectorization_mode="sync")
    obs, _ = vec.reset(seed=1)
    assert obs["action_mask"].shape[0] == 2
