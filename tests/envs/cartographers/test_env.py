"""Cartographers-specific env behaviour (the generic contract is in test_gym_env_contract.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import envs  # noqa: F401
from envs.core.errors import ConfigError, IllegalActionError

pytest.importorskip("envs.cartographers.game")

from envs.cartographers.env import CartographersEnv, CartographersMultiAgentEnv  # noqa: E402

SEASONS = ("spring", "summer", "autumn", "winter")


def test_solo_episode_rewards_are_the_season_scores_and_add_up_to_the_final_score():
    env = gym.make("meeplelab/Cartographers-v0")
    obs, info = env.reset(seed=12)
    assert info["score"]["total"] == 0 and info["score"]["seasons_scored"] == 0
    rng = np.random.default_rng(0)
    rewards, terminated = [], False
    while not terminated:
        scored_before = info["score"]["seasons_scored"]
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        scored = info["score"]["seasons_scored"]
        if scored == scored_before:
            assert reward == 0  # nothing is scored inside a season
        else:
            assert scored == scored_before + 1
            assert reward == info["score"][f"{SEASONS[scored - 1]}_total"]
    final = info["score"]
    assert sum(rewards) == final["total"] == sum(final[f"{s}_total"] for s in SEASONS)
    assert final["seasons_scored"] == 4
    assert final["evaluation"] == final["total"] - final["threshold"]


def test_rllib_style_env_config_and_game_options():
    env = CartographersEnv({"players": 1, "side": "B", "coin_cap": None})
    assert env.game.side == "B" and env.game.coin_cap is None
    env = gym.make("meeplelab/Cartographers-v0", side="B", illegal_action="penalize")
    assert env.unwrapped.game.side == "B" and env.unwrapped.illegal_action == "penalize"
    ma = CartographersMultiAgentEnv({"players": 3, "shared_reward": True})
    assert ma.possible_agents == ["player_0", "player_1", "player_2"] and ma.shared_reward
    assert CartographersMultiAgentEnv().game.num_players() == 2
    env = CartographersEnv({"players": 2, "opponent": "greedy", "seat": 1, "render_mode": "ansi"})
    assert env.opponent_spec == "greedy" and env.seat == 1 and env.render_mode == "ansi"
    assert env.game.num_players() == 2


def test_bad_options_name_the_problem():
    with pytest.raises(ConfigError, match="players"):
        CartographersEnv(players=7)
    with pytest.raises(ConfigError, match="side"):
        CartographersEnv(side="C")
    with pytest.raises(ConfigError, match="bad options"):
        CartographersEnv(colour="red")


def test_two_player_env_learner_answers_its_own_ambushes():
    # with 2 players the learner also draws monsters on the neighbour's map (an ambush decision)
    env = CartographersEnv(players=2)
    kinds = set()
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        terminated = False
        rng = np.random.default_rng(seed)
        while not terminated:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            kinds.add(env.game.decode_action(action)["kind"])
            obs, _, terminated, _, info = env.step(action)
            assert env.state is not None and (terminated or env.game.current_player(env.state) == 0)
    assert "place" in kinds and ({"ambush", "ambush_1x1"} & kinds)


def test_solo_fast_path_equals_the_generic_env_step():
    """CartographersEnv's fused solo step gives exactly what GameEnv.step gives."""
    from envs.cartographers.env import CartographersEnv
    from envs.core.gym_env import GameEnv

    fast = CartographersEnv()
    generic = GameEnv(fast.game)
    rng = np.random.default_rng(4)
    for seed in (1, 2):
        obs_f, info_f = fast.reset(seed=seed)
        obs_g, info_g = generic.reset(seed=seed)
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(info_f["action_mask"] > 0)))
            obs_f, rew_f, done, _, info_f = fast.step(action)
            obs_g, rew_g, done_g, _, info_g = generic.step(action)
            assert rew_f == rew_g and done == done_g
            assert np.array_equal(obs_f["observations"], obs_g["observations"])
            assert np.array_equal(obs_f["action_mask"], obs_g["action_mask"])
            assert np.array_equal(info_f["action_mask"], info_g["action_mask"])
            assert info_f["score"] == info_g["score"]
        with pytest.raises(IllegalActionError):
            fast.step(0)  # the game is over: the generic path names the problem
