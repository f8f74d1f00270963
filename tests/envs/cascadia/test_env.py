"""CascadiaEnv and CascadiaMultiAgentEnv: check_env, masks, rewards, renders."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env

import envs  # noqa: F401  (registers the ids)
from envs.cascadia.env import CascadiaEnv, CascadiaMultiAgentEnv


def test_check_env_solo_and_multiplayer():
    check_env(CascadiaEnv(players=1, illegal_action="penalize"), skip_render_check=True)
    check_env(CascadiaEnv(players=3, illegal_action="penalize"), skip_render_check=True)
    check_env(CascadiaEnv(players=2, illegal_action="penalize", render_mode="rgb_array"))
    check_env(CascadiaEnv(players=1, illegal_action="penalize", render_mode="ansi"))


def test_registered_id_plays_a_solo_episode_and_rewards_sum_to_the_score():
    env = gym.make("meeplelab/Cascadia-v0", render_mode="ansi")
    obs, info = env.reset(seed=4)
    start = info["score"]["total"]  # the starter tile's five one-tile corridors
    assert start == 5
    assert obs["observations"].shape == env.observation_space["observations"].shape
    total, steps, done = 0.0, 0, False
    rng = np.random.default_rng(0)
    while not done:
        mask = info["action_mask"].astype(np.int8)
        assert mask.any() and np.array_equal(mask, obs["action_mask"].astype(np.int8))
        action = int(rng.choice(np.flatnonzero(mask)))
        obs, reward, done, truncated, info = env.step(action)
        total += reward
        steps += 1
    assert not truncated
    assert total == info["score"]["total"] - start
    assert "base" in info["score"] and "corridor_river" in info["score"]
    assert "player_0" in env.render()
    env.close()


def test_rgb_render_and_multiplayer_opponents():
    env = CascadiaEnv(players=4, opponent="random", render_mode="rgb_array")
    env.reset(seed=2)
    img = env.render()
    assert img.ndim == 3 and img.shape[2] == 3 and img.dtype == np.uint8 and img.min() < 255


def test_multi_agent_env_turn_based():
    env = CascadiaMultiAgentEnv({"players": 2})
    obs, infos = env.reset(seed=1)
    assert list(obs) == ["player_0"]
    rng = np.random.default_rng(1)
    seen = set()
    while True:
        (agent,) = obs.keys() if len(obs) == 1 else (None,)
        if agent is None:
            break
        seen.add(agent)
        action = int(rng.choice(np.flatnonzero(infos[agent]["action_mask"])))
        obs, rewards, terms, truncs, infos = env.step({agent: action})
        if terms["__all__"]:
            break
    assert terms["__all__"] and seen == {"player_0", "player_1"}


def test_greedy_opponent_plays_the_other_seat():
    env = CascadiaEnv(players=2, opponent="greedy")
    obs, info = env.reset(seed=3)
    for _ in range(6):  # two learner turns: the greedy seat answers after each
        action = int(np.flatnonzero(info["action_mask"])[0])
        obs, reward, done, _, info = env.step(action)
    assert env.state.pinfo[1, 3] == 2  # the opponent played two turns
