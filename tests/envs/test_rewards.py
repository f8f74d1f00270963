"""Reward options ("score", "margin", "win") of the single- and multi-agent envs."""

from __future__ import annotations

import numpy as np
import pytest

from envs.core.errors import ConfigError
from envs.core.gym_env import GameEnv
from envs.core.rewards import rank_rewards
from tests.envs.nim_game import NimGame


def play_single(env, seed: int) -> tuple[list[float], np.ndarray]:
    """Rewards of one episode with random legal actions, and the final totals of every seat."""
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rewards, done = [], False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, reward, done, _, info = env.step(action)
        rewards.append(reward)
    return rewards, np.asarray(env.game.returns(env.state))


def play_multi(env, seed: int) -> tuple[dict[str, list[float]], np.ndarray]:
    """Per agent the rewards it received in one random episode, and the final totals."""
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rewards: dict[str, list[float]] = {a: [] for a in env.possible_agents}
    while True:
        (agent, o), = obs.items()
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rew, term, _, _ = env.step({agent: action})
        for a, r in rew.items():
            rewards[a].append(r)
        if term["__all__"]:
            return rewards, np.asarray(env.game.returns(env.state))


def margin(totals: np.ndarray, seat: int) -> float:
    others = np.delete(totals, seat)
    return float(totals[seat] - others.mean()) if others.size else float(totals[seat])


def test_rank_rewards_first_to_last_with_shared_ties():
    assert rank_rewards(np.array([10, 5, 5, 0])).tolist() == [1.0, 0.0, 0.0, -1.0]
    assert rank_rewards(np.array([1, 2, 3])).tolist() == [-1.0, 0.0, 1.0]
    assert rank_rewards(np.array([7, 7])).tolist() == [0.0, 0.0]
    assert rank_rewards(np.array([4, 9, 9])).tolist() == [-1.0, 0.5, 0.5]
    totals = np.random.default_rng(0).integers(0, 4, size=(50, 4))
    assert np.allclose([rank_rewards(t).sum() for t in totals], 0.0)


@pytest.mark.parametrize(("players", "seat"), [(1, 0), (2, 1), (3, 0)])
def test_single_agent_score_and_margin_add_up(players, seat):
    for seed in range(6):
        rewards, totals = play_single(GameEnv(NimGame(players), seat=seat, reward="score"), seed)
        assert sum(rewards) == pytest.approx(totals[seat])
        rewards, totals = play_single(GameEnv(NimGame(players), seat=seat, reward="margin"), seed)
        assert sum(rewards) == pytest.approx(margin(totals, seat))


@pytest.mark.parametrize(("players", "seat"), [(2, 0), (3, 2)])
def test_single_agent_win_pays_the_rank_at_the_end_only(players, seat):
    outcomes = set()
    for seed in range(12):
        rewards, totals = play_single(GameEnv(NimGame(players), seat=seat, reward="win"), seed)
        assert all(r == 0.0 for r in rewards[:-1])
        others = np.delete(totals, seat)
        expected = 1.0 if totals[seat] > others.max() else -1.0 if totals[seat] < others.min() else None
        if expected is not None:
            assert rewards[-1] == expected
        outcomes.add(rewards[-1])
    assert {1.0, -1.0} <= outcomes


@pytest.mark.parametrize("players", [2, 3])
def test_multi_agent_rewards_per_mode(players):
    from envs.core.multiagent_env import GameMultiAgentEnv

    for seed in range(5):
        rewards, totals = play_multi(GameMultiAgentEnv(NimGame(players), reward="score"), seed)
        for s in range(players):
            assert sum(rewards[f"player_{s}"]) == pytest.approx(totals[s])
        rewards, totals = play_multi(GameMultiAgentEnv(NimGame(players), reward="margin"), seed)
        for s in range(players):
            assert sum(rewards[f"player_{s}"]) == pytest.approx(margin(totals, s))
        rewards, totals = play_multi(GameMultiAgentEnv(NimGame(players), reward="win"), seed)
        finals = np.array([rewards[f"player_{s}"][-1] for s in range(players)])
        assert all(r == 0.0 for s in range(players) for r in rewards[f"player_{s}"][:-1])
        best, worst = int(np.argmax(totals)), int(np.argmin(totals))
        if np.sum(totals == totals[best]) == 1:
            assert finals[best] == 1.0
        if np.sum(totals == totals[worst]) == 1:
            assert finals[worst] == -1.0
        order = np.argsort(totals)
        assert np.all(np.diff(finals[order]) >= 0) and finals.sum() == pytest.approx(0.0)


def test_cartographers_solo_fused_step_follows_the_reward_option():
    from envs.cartographers.env import CartographersEnv

    rewards, totals = play_single(CartographersEnv(reward="score"), 3)
    assert sum(rewards) == pytest.approx(totals[0])
    env = CartographersEnv(reward="win")
    rewards, _ = play_single(env, 3)
    assert all(r == 0.0 for r in rewards[:-1])
    assert rewards[-1] == float(np.sign(env.game.evaluation(env.state)))


def test_cascadia_two_players_margin_and_solo_win():
    from envs.cascadia.env import CascadiaEnv

    rewards, totals = play_single(CascadiaEnv(players=2, reward="margin"), 1)
    assert sum(rewards) == pytest.approx(totals[0] - totals[1])
    rewards, _ = play_single(CascadiaEnv(players=1, reward="win"), 1)
    assert rewards == [0.0] * len(rewards)  # Cascadia has no solo evaluation: "win" pays 0


@pytest.mark.parametrize("make", [
    lambda: GameEnv(NimGame(2), reward="wins"),
    lambda: __import__("envs.cascadia.env", fromlist=["x"]).CascadiaEnv(reward=1),
    lambda: __import__("envs.cartographers.env", fromlist=["x"]).CartographersMultiAgentEnv(reward="rank"),
])
def test_bad_reward_value_is_one_clear_error(make):
    with pytest.raises(ConfigError, match=r"^reward must be one of \('score', 'margin', 'win'\), got "):
        make()


def test_cooperative_envs_take_only_the_score_reward():
    from envs.core.multiagent_env import GameMultiAgentEnv
    from envs.dorfromantik.env import DorfromantikEnv

    with pytest.raises(ConfigError, match="dorfromantik is cooperative"):
        DorfromantikEnv(players=2, reward="margin")
    with pytest.raises(ConfigError, match="shared_reward=True"):
        GameMultiAgentEnv(NimGame(2), shared_reward=True, reward="win")
    assert DorfromantikEnv(reward="score").reward_mode == "score"


def test_dorfromantik_multi_agent_takes_the_trainers_env_config():
    from envs.dorfromantik.env import DorfromantikMultiAgentEnv

    config = {"players": 2, "reward": "score", "shared_reward": True, "window_radius": 6}
    env = DorfromantikMultiAgentEnv(config)
    rewards, totals = play_multi(env, 2)
    assert env.shared_reward and totals[0] == totals[1]
    assert sum(rewards["player_0"]) == pytest.approx(totals[0]) == pytest.approx(sum(rewards["player_1"]))
    with pytest.raises(ConfigError, match="dorfromantik is cooperative"):
        DorfromantikMultiAgentEnv({"players": 2, "reward": "win"})
