"""The turn-based multi-agent env, stepped directly and through RLlib's own env check."""

from __future__ import annotations

import numpy as np
import pytest
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from envs.core.errors import ConfigError, IllegalActionError
from envs.core.multiagent_env import GameMultiAgentEnv, agent_id, seat_of
from tests.envs.cases import case_id, multi_agent_cases
from tests.envs.nim_game import NimGame

CASES = multi_agent_cases()


def play_full_game(env, seed: int, policy_seed: int = 0, max_steps: int = 20000):
    """Masked random play to the end, checking the turn-taking protocol on every step."""
    rng = np.random.default_rng(policy_seed)
    obs, infos = env.reset(seed=seed)
    returns = {a: 0.0 for a in env.possible_agents}
    assert len(obs) == 1
    for _ in range(max_steps):
        (mover,) = obs.keys()
        assert mover == env.current_agent()
        np.testing.assert_array_equal(obs[mover]["action_mask"], infos[mover]["action_mask"])
        np.testing.assert_array_equal(obs[mover]["action_mask"].astype(bool), env.game.legal_mask(env.state))
        assert env.observation_spaces[mover].contains(obs[mover])
        action = int(rng.choice(np.flatnonzero(obs[mover]["action_mask"])))
        obs, rewards, terminateds, truncateds, infos = env.step({mover: action})
        for agent, reward in rewards.items():
            returns[agent] += reward
        assert set(rewards) == set(obs) == set(infos)
        assert truncateds["__all__"] is False
        if terminateds["__all__"]:
            return obs, returns
        assert len(obs) == 1, "only the acting agent observes"
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_full_game_only_the_mover_observes_and_returns_add_up(case):
    label, factory, players = case
    env = factory(players=players)
    assert env.possible_agents == [f"player_{i}" for i in range(players)]
    start = [s.total for s in env.game.scores(env.game.new_game(7))]
    final_obs, returns = play_full_game(env, seed=7)
    final = [s.total for s in env.game.scores(env.state)]
    assert set(final_obs) == set(env.possible_agents)  # everyone observed during the game
    for agent in env.possible_agents:
        assert returns[agent] == pytest.approx(final[seat_of(agent)] - start[seat_of(agent)])
        assert final_obs[agent]["action_mask"].sum() == 0


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_same_seed_same_game(case):
    label, factory, players = case
    env_a, env_b = factory(players=players), factory(players=players)
    _, returns_a = play_full_game(env_a, seed=3, policy_seed=9)
    _, returns_b = play_full_game(env_b, seed=3, policy_seed=9)
    assert returns_a == returns_b


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rllib_env_check_passes_in_penalize_mode(case):
    label, factory, players = case
    check_multiagent_environments(factory(players=players, illegal_action="penalize"))


def test_raise_mode_raises_on_an_illegal_action():
    # this is why RLlib's unmasked pre-check needs penalize mode or disable_env_checking=True
    env = GameMultiAgentEnv(NimGame(2))
    obs, _ = env.reset(seed=0)
    while obs[env.current_agent()]["action_mask"].all():
        obs, *_ = env.step({env.current_agent(): 0})
    with pytest.raises(IllegalActionError, match="action 2"):
        env.step({env.current_agent(): 2})


def test_nim_rewards_per_agent_by_hand():
    env = GameMultiAgentEnv(NimGame(2))
    obs, _ = env.reset(seed=0)
    heap = env.state.heap
    assert list(obs) == ["player_0"]
    obs, rewards, *_ = env.step({"player_0": 0})  # player_0 takes 1
    assert list(obs) == ["player_1"] and rewards == {"player_1": 0.0}
    obs, rewards, *_ = env.step({"player_1": 1})  # player_1 takes 2
    assert list(obs) == ["player_0"] and rewards == {"player_0": 1.0}
    assert env.state.heap == heap - 3


def test_shared_reward_uses_the_mean_score():
    env = GameMultiAgentEnv(NimGame(2), shared_reward=True)
    env.reset(seed=0)
    env.step({"player_0": 0})  # +1 to seat 0: mean +0.5
    _, rewards, *_ = env.step({"player_1": 1})  # +2 to seat 1: mean +1.0 since player_0 last saw
    assert rewards == {"player_0": 1.5}


def test_penalize_mode_repeats_the_turn():
    env = GameMultiAgentEnv(NimGame(2), illegal_action="penalize", illegal_penalty=-2.0)
    obs, _ = env.reset(seed=0)
    while obs[env.current_agent()]["action_mask"].all():
        obs, *_ = env.step({env.current_agent(): 0})
    mover = env.current_agent()
    obs2, rewards, terminateds, _, infos = env.step({mover: 2})
    assert rewards == {mover: -2.0} and terminateds["__all__"] is False
    assert "action 2" in infos[mover]["illegal_action"]
    np.testing.assert_array_equal(obs[mover]["observations"], obs2[mover]["observations"])


def test_wrong_agent_and_bad_options_are_named():
    env = GameMultiAgentEnv(NimGame(2))
    env.reset(seed=0)
    with pytest.raises(ConfigError, match="player_0's turn"):
        env.step({"player_1": 0})
    with pytest.raises(ConfigError, match="only player_0"):
        env.step({"player_0": 0, "player_1": 0})
    with pytest.raises(ConfigError, match="illegal_action"):
        GameMultiAgentEnv(NimGame(2), illegal_action="skip")
    assert agent_id(2) == "player_2" and seat_of("player_2") == 2
    with pytest.raises(ValueError, match="player_0"):
        seat_of("bob")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rllib_episode_bookkeeping_accepts_the_turn_protocol(case):
    # record a whole game in RLlib's own MultiAgentEpisode, as its env runner does
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

    label, factory, players = case
    env = factory(players=players)
    rng = np.random.default_rng(1)
    obs, infos = env.reset(seed=5)
    start = sum(s.total for s in env.game.scores(env.state))
    episode = MultiAgentEpisode(observation_space=gym_dict(env.observation_spaces),
                                action_space=gym_dict(env.action_spaces))
    episode.add_env_reset(observations=obs, infos=infos)
    done = False
    while not done:
        (mover,) = obs.keys()
        actions = {mover: int(rng.choice(np.flatnonzero(obs[mover]["action_mask"])))}
        obs, rewards, terminateds, truncateds, infos = env.step(actions)
        episode.add_env_step(obs, actions, rewards, infos, terminateds=terminateds, truncateds=truncateds)
        done = terminateds["__all__"]
    episode.validate()
    assert episode.is_done
    final = sum(s.total for s in env.game.scores(env.state))
    assert episode.get_return(include_hanging_rewards=True) == pytest.approx(final - start)


def gym_dict(spaces_by_agent):
    import gymnasium as gym

    return gym.spaces.Dict(spaces_by_agent)


@pytest.mark.parametrize("game", ["cartographers", "cascadia", "dorfromantik"])
def test_multiagent_classes_pickle_by_reference(game):
    """Ray ships env classes to its workers by reference: each class must be found by its name."""
    import importlib
    import pickle

    module = importlib.import_module(f"envs.{game}.env")
    cls = getattr(module, f"{game.capitalize()}MultiAgentEnv")
    assert cls.__module__ == f"envs.{game}.env" and pickle.loads(pickle.dumps(cls)) is cls
    assert cls.__doc__ and "player_0" in cls.__doc__
