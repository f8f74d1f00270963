"""The Gymnasium env (check_env, team play, rewards = score change, renders) and the multi-agent env."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs  # noqa: F401  (registers the ids)
from envs.core.errors import ConfigError, IllegalActionError
from envs.dorfromantik.env import DorfromantikEnv


def test_check_env_clean():
    env = gym.make("meeplelab/Dorfromantik-v0", illegal_action="penalize", render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)


def test_registered_id_and_episode_rewards_sum_to_score():
    env = gym.make("meeplelab/Dorfromantik-v0", players=3, render_mode="rgb_array")
    obs, info = env.reset(seed=6)
    assert obs["observations"].shape == env.observation_space["observations"].shape
    rng = np.random.default_rng(0)
    total, steps, done = 0.0, 0, False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        assert legal.size and np.array_equal(obs["action_mask"], info["action_mask"])
        obs, reward, done, truncated, info = env.step(int(rng.choice(legal)))
        assert reward >= 0 and not truncated
        total += reward
        steps += 1
    assert total == info["score"]["total"]
    assert set(info["score"]) >= {"tasks", "flags", "longest_rail", "longest_river"}
    assert steps == info["score"]["tiles_placed"]        # the team decides every turn
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    env.close()


def test_illegal_action_raises_with_reason():
    env = DorfromantikEnv()
    env.reset(seed=1)
    with pytest.raises(IllegalActionError, match="origin"):
        env.step(0)


def test_team_false_lets_opponents_play_other_seats():
    env = DorfromantikEnv(players=2, team=False, opponent="random")
    obs, info = env.reset(seed=2)
    obs, reward, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert info["score"]["tiles_placed"] == 2


def test_bad_options():
    with pytest.raises(ConfigError):
        DorfromantikEnv(players=0)
    with pytest.raises(ConfigError):
        DorfromantikEnv(window_radius=2)


def test_multiagent_shared_reward():
    from envs.dorfromantik.env import DorfromantikMultiAgentEnv

    env = DorfromantikMultiAgentEnv(players=2)
    assert pickle.loads(pickle.dumps(env.__class__)) is env.__class__
    obs, infos = env.reset(seed=3)
    assert list(obs) == ["player_0"]
    rng = np.random.default_rng(1)
    totals = {"player_0": 0.0, "player_1": 0.0}
    while True:
        agent = env.current_agent()
        mask = obs[agent]["action_mask"]
        obs, rewards, terms, truncs, infos = env.step({agent: int(rng.choice(np.flatnonzero(mask)))})
        for a, r in rewards.items():
            totals[a] += r
        if terms["__all__"]:
            break
    final = infos["player_0"]["score"]["total"]
    assert infos["player_1"]["score"]["total"] == final
    # each seat's rewards add up to the shared final score
    assert totals["player_0"] == pytest.approx(final) and totals["player_1"] == pytest.approx(final)


def test_observation_planes_of_a_known_position():
    from envs.dorfromantik.game import DorfromantikGame
    from envs.dorfromantik.layout import PLANES

    game = DorfromantikGame(window_radius=5)
    state = game.new_game_with_stacks(3, tasks=["T03"], markers={"forest": [4]})
    game.place_at(state, 0, 0, 0)                    # T03 rotation 0: forest toward NE (1) and SW (4)
    obs = game.observation(state, 0)
    side = game.side
    planes = obs[:PLANES * side * side].reshape(PLANES, side, side)
    centre = (5, 5)
    assert planes[0][centre] == 1 and planes[0].sum() == 1
    forest = [d for d in range(6) if planes[1 + 5 * d + 0][centre] == 1]
    assert forest == [1, 4]
    assert planes[32][centre] == pytest.approx(3 / 6)          # forest 4 task, 1 tile so far
    assert planes[31].sum() == 6 and planes[31][centre] == 0   # the six neighbours are legal
    assert obs.shape == game.observation_shape()
    text = game.render_ansi(state)
    assert "open task forest 4 at (0, 0): 1 tiles" in text


def test_mask_cache_follows_the_state():
    from envs.dorfromantik.game import DorfromantikGame

    game = DorfromantikGame()
    state = game.new_game(1)
    first = game.legal_mask(state)
    first[:] = False                                  # a caller's copy: the cache is unaffected
    assert game.legal_mask(state).sum() == 6
    game.step(state, int(np.flatnonzero(game.legal_mask(state))[0]))
    assert game.legal_mask(state).sum() > 6
    other = game.new_game(2)
    assert game.legal_mask(other).sum() == 6


def test_rllib_style_env_config_mapping():
    env = DorfromantikEnv({"players": 2, "window_radius": 10, "illegal_action": "penalize"})
    assert env.game.players == 2 and env.game.window_radius == 10
    assert env.action_space.n == 21 * 21 * 6
    obs, info = env.reset(seed=1)
    obs, reward, done, _, info = env.step(0)                # not the origin: penalised, state unchanged
    assert reward == -1.0 and "illegal_action" in info and info["score"]["tiles_placed"] == 0
