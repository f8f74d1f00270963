"""The single-agent env contract, checked on every env (see tests/envs/cases.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from envs.core.errors import ConfigError, IllegalActionError
from envs.core.gym_env import GameEnv
from tests.envs.cases import case_id, single_agent_cases
from tests.envs.nim_game import NimGame

CASES = single_agent_cases()


def make(case, **extra):
    env_id, kwargs = case
    return gym.make(env_id, **{**kwargs, **extra})


def play_masked_episode(env, seed: int, policy_seed: int = 0, max_steps: int = 5000):
    """Play one episode with uniformly random legal actions; returns the trajectory."""
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    trajectory = {"obs": [obs], "rewards": [], "actions": [], "infos": [info]}
    for _ in range(max_steps):
        legal = np.flatnonzero(obs["action_mask"])
        assert legal.size > 0, "a live episode must offer a legal action"
        action = int(rng.choice(legal))
        obs, reward, terminated, truncated, info = env.step(action)
        trajectory["actions"].append(action)
        trajectory["rewards"].append(reward)
        trajectory["obs"].append(obs)
        trajectory["infos"].append(info)
        assert not truncated
        if terminated:
            return trajectory
    raise AssertionError(f"episode did not end within {max_steps} steps")


def first_obs_with_an_illegal_action(env, seed: int = 5):
    """Reset, then play legal moves until some action is illegal; that observation."""
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=seed)
    while obs["action_mask"].all():
        obs, _, terminated, _, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert not terminated, "no state with an illegal action was found"
    return obs


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_check_env_passes(case):
    env = make(case)
    # check_env steps with unmasked action_space.sample(): penalize instead of raising (module doc)
    env.unwrapped.illegal_action = "penalize"
    check_env(env.unwrapped)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_mask_in_obs_equals_info_equals_game_mask(case):
    env = make(case)
    obs, info = env.reset(seed=3)
    game, state = env.unwrapped.game, env.unwrapped.state
    assert env.observation_space.contains(obs)
    assert obs["action_mask"].dtype == np.float32
    np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
    np.testing.assert_array_equal(obs["action_mask"].astype(bool), game.legal_mask(state))
    assert obs["action_mask"].sum() > 0
    assert info["player"] == env.unwrapped.seat
    assert info["score"]["total"] == game.scores(state)[env.unwrapped.seat].total
    np.testing.assert_array_equal(env.unwrapped.action_masks(), game.legal_mask(state))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_random_masked_episode_rewards_add_up_to_the_score_change(case):
    env = make(case)
    obs, info = env.reset(seed=11)
    start = info["score"]["total"]
    trajectory = play_masked_episode(env, seed=11)
    final = env.unwrapped.game.scores(env.unwrapped.state)[env.unwrapped.seat].total
    assert sum(trajectory["rewards"]) == pytest.approx(final - start)
    assert trajectory["infos"][-1]["score"]["total"] == final
    assert trajectory["obs"][-1]["action_mask"].sum() == 0  # nothing is legal once it is over
    for obs, info in zip(trajectory["obs"], trajectory["infos"], strict=True):
        np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
        assert env.observation_space.contains(obs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_illegal_action_raises_naming_it(case):
    env = make(case)
    obs = first_obs_with_an_illegal_action(env)
    illegal = np.flatnonzero(obs["action_mask"] == 0)
    action = int(illegal[-1])
    with pytest.raises(IllegalActionError, match=f"action {action}"):
        env.step(action)
    with pytest.raises(IllegalActionError, match="outside the action space"):
        env.step(env.action_space.n)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_penalize_mode_keeps_the_state(case):
    env = make(case)
    env.unwrapped.illegal_action = "penalize"
    obs = first_obs_with_an_illegal_action(env)
    action = int(np.flatnonzero(obs["action_mask"] == 0)[-1])
    obs2, reward, terminated, truncated, info = env.step(action)
    assert reward == env.unwrapped.illegal_penalty and not terminated and not truncated
    assert f"action {action}" in info["illegal_action"]
    np.testing.assert_array_equal(obs["observations"], obs2["observations"])
    np.testing.assert_array_equal(obs["action_mask"], obs2["action_mask"])


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_same_seed_same_episode(case):
    first = play_masked_episode(make(case), seed=21, policy_seed=4)
    second = play_masked_episode(make(case), seed=21, policy_seed=4)
    assert first["actions"] == second["actions"]
    assert first["rewards"] == second["rewards"]
    for a, b in zip(first["obs"], second["obs"], strict=True):
        np.testing.assert_array_equal(a["observations"], b["observations"])


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_reset_without_seed_follows_the_env_rng(case):
    env = make(case)
    env.reset(seed=8)
    obs_a, _ = env.reset()
    seed_a = env.unwrapped.game_seed
    env.reset(seed=8)
    obs_b, _ = env.reset()
    assert env.unwrapped.game_seed == seed_a
    np.testing.assert_array_equal(obs_a["observations"], obs_b["observations"])


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_render_modes(case):
    env = make(case, render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert isinstance(text, str) and text.strip()
    env = make(case, render_mode="rgb_array")
    env.reset(seed=1)
    image = env.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape[0] > 0 and image.shape[1] > 0


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_step_after_the_end_raises(case):
    env = make(case)
    play_masked_episode(env, seed=2)
    with pytest.raises(IllegalActionError, match="over"):
        env.step(0)


def test_step_before_reset_raises():
    env = GameEnv(NimGame(1))
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)


def test_nim_rewards_by_hand():
    env = GameEnv(NimGame(1))
    obs, info = env.reset(seed=0)
    heap = env.unwrapped.state.heap
    assert 10 <= heap <= 20
    total = 0.0
    terminated = False
    while not terminated:
        take = min(3 if env.state.heap % 2 else 2, env.state.heap)
        _, reward, terminated, _, _ = env.step(take - 1)
        total += reward
        assert reward == take + (5 if terminated else 0)
    assert total == heap + 5


def test_opponents_play_between_learner_turns():
    env = GameEnv(NimGame(2), seat=1, opponent="random")
    obs, info = env.reset(seed=0)
    state = env.state
    assert state.turn == 1  # seat 0 (the opponent) has moved
    assert NimGame(2).current_player(state) == 1
    env.step(0)
    assert env.state.turn == 3 or NimGame(2).is_over(env.state)  # learner, then opponent again


def test_bad_options_are_named():
    with pytest.raises(ConfigError, match="seat"):
        GameEnv(NimGame(2), seat=2)
    with pytest.raises(ConfigError, match="render_mode"):
        GameEnv(NimGame(1), render_mode="human")
    with pytest.raises(ConfigError, match="illegal_action"):
        GameEnv(NimGame(1), illegal_action="ignore")
    with pytest.raises(ConfigError, match="unknown agent"):
        GameEnv(NimGame(2), opponent="nobody")
    with pytest.raises(ConfigError, match="Game"):
        GameEnv("nim")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_mask_agrees_with_step(case):
    # along an episode: sampled masked-legal actions step a copy cleanly, masked-illegal ones raise
    env = make(case)
    game = env.unwrapped.game
    rng = np.random.default_rng(6)
    obs, _ = env.reset(seed=17)
    terminated = False
    steps = 0
    while not terminated and steps < 60:
        mask = obs["action_mask"].astype(bool)
        legal, illegal = np.flatnonzero(mask), np.flatnonzero(~mask)
        for action in rng.choice(legal, size=min(3, legal.size), replace=False):
            game.step(env.unwrapped.state.copy(), int(action))
        for action in rng.choice(illegal, size=min(3, illegal.size), replace=False):
            with pytest.raises(IllegalActionError):
                game.step(env.unwrapped.state.copy(), int(action))
        obs, _, terminated, _, _ = env.step(int(rng.choice(legal)))
        steps += 1


def test_opponent_may_be_an_agent_object():
    class TakeOne:
        name = "take-one"

        def act(self, state, legal_mask, rng):
            return 0

    env = GameEnv(NimGame(2), seat=1, opponent=TakeOne())
    env.reset(seed=0)
    assert env.state.stones[0] == 1  # the opponent took one stone
    with pytest.raises(ConfigError, match="opponent"):
        GameEnv(NimGame(2), opponent=42)
