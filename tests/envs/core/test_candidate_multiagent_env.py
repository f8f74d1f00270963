"""``action_space="candidates"`` for the RLlib multi-agent envs: the mover sees its candidate rows,
the plain multi-agent env replays the chosen plain actions (ambushes by the fallback agent aside),
returns add up, and the RLlib pre-check passes."""

from __future__ import annotations

import numpy as np
import pytest
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

import agents  # noqa: F401  (registers the candidate views)
from envs.cartographers.env import CartographersMultiAgentEnv
from envs.cascadia.env import CascadiaMultiAgentEnv
from envs.core.errors import ConfigError, IllegalActionError
from envs.core.multiagent_env import agent_id, seat_of
from envs.core.rng import numpy_generator
from envs.dorfromantik.env import DorfromantikMultiAgentEnv

CASES = {"cartographers_3p": (CartographersMultiAgentEnv, 3), "cascadia_2p": (CascadiaMultiAgentEnv, 2),
         "dorfromantik_2p": (DorfromantikMultiAgentEnv, 2)}


def make(name: str, **options):
    cls, players = CASES[name]
    return cls(players=players, action_space="candidates", **options)


def play(env, seed: int, policy_seed: int = 0):
    """Random rows to the end: (returns per agent, plain actions of the rows chosen, steps)."""
    rng = np.random.default_rng(policy_seed)
    obs, infos = env.reset(seed=seed)
    returns = {a: 0.0 for a in env.possible_agents}
    chosen = []
    for step in range(5000):
        (mover,) = obs.keys()
        assert mover == env.current_agent()
        n = infos[mover]["num_candidates"]
        assert n >= 1 and obs[mover]["candidate_mask"].sum() == min(n, env.max_candidates)
        assert env.observation_spaces[mover].contains(obs[mover])
        index = int(rng.choice(np.flatnonzero(obs[mover]["candidate_mask"])))
        chosen.append((seat_of(mover), int(infos[mover]["candidate_actions"][index])))
        obs, rewards, terminateds, truncateds, infos = env.step({mover: index})
        for agent, reward in rewards.items():
            returns[agent] += reward
        if terminateds["__all__"]:
            for agent in obs:
                assert obs[agent]["candidate_mask"].sum() == 0
            return returns, chosen, step + 1
        assert len(obs) == 1
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("name", CASES)
def test_returns_add_up_and_same_seed_same_game(name):
    env = make(name)
    start = [s.total for s in env.game.scores(env.game.new_game(5))]
    returns, chosen, _ = play(env, 5, policy_seed=1)
    final = [s.total for s in env.game.scores(env.state)]
    for agent in env.possible_agents:
        assert returns[agent] == pytest.approx(final[seat_of(agent)] - start[seat_of(agent)])
    again = play(make(name), 5, policy_seed=1)
    assert again[0] == returns and again[1] == chosen


@pytest.mark.parametrize("name", CASES)
def test_the_mover_sees_its_candidates_best_first(name):
    env = make(name)
    obs, infos = env.reset(seed=2)
    (mover,) = obs.keys()
    actions, features, n = env.view.ranked(env.game, env.state, env.max_candidates)
    assert infos[mover]["num_candidates"] == n
    assert infos[mover]["candidates_truncated"] == (n if n > env.max_candidates else 0)  # said, not hidden
    np.testing.assert_array_equal(infos[mover]["candidate_actions"][:actions.size], actions)
    np.testing.assert_array_equal(obs[mover]["candidates"][:actions.size], features)
    context = env.view.context(env.game, env.state, seat_of(mover))
    np.testing.assert_array_equal(obs[mover]["context"], context)


@pytest.mark.parametrize("name", ["cartographers_3p", "dorfromantik_2p"])
def test_the_plain_env_replays_the_chosen_rows(name):
    """A row is one plain action: the plain multi-agent env stepped with the chosen rows' actions
    (and the fallback agent's ambushes, played inside the candidate env's step) ends the same."""
    env = make(name)
    _, chosen, _ = play(env, 3, policy_seed=4)
    cls, players = CASES[name]
    plain = cls(players=players)
    plain.reset(seed=3)
    fallback, rng = env.view.fallback_agent(plain.game), numpy_generator(3, "candidates/fallback")
    queue = list(chosen)
    while not plain.game.is_over(plain.state):
        seat = plain.game.current_player(plain.state)
        if env.view.ranked(plain.game, plain.state, 1)[2] == 0:  # no candidates: an ambush
            action = env.view.fallback(plain.game, plain.state, rng, fallback)
        else:
            owner, action = queue.pop(0)
            assert owner == seat
        plain.step({agent_id(seat): action})
    assert not queue
    assert [s.total for s in plain.game.scores(plain.state)] == [s.total for s in env.game.scores(env.state)]


def test_a_masked_row_is_named_and_penalize_keeps_the_turn():
    env = make("dorfromantik_2p")
    obs, infos = env.reset(seed=0)
    (mover,) = obs.keys()
    n = infos[mover]["num_candidates"]
    with pytest.raises(IllegalActionError, match=f"candidate index {env.max_candidates - 1} is masked out"):
        env.step({mover: env.max_candidates - 1})
    soft = make("dorfromantik_2p", illegal_action="penalize", illegal_penalty=-3.0)
    obs, _ = soft.reset(seed=0)
    obs2, rewards, *_ , infos2 = soft.step({mover: soft.max_candidates - 1})
    assert rewards == {mover: -3.0} and "masked out" in infos2[mover]["illegal_action"]
    np.testing.assert_array_equal(obs2[mover]["candidates"], obs[mover]["candidates"])
    assert n == infos2[mover]["num_candidates"]


def test_bad_options_are_named():
    with pytest.raises(ConfigError, match="action_space must be one of"):
        CascadiaMultiAgentEnv(players=2, action_space="rows")
    with pytest.raises(ConfigError, match="max_candidates needs action_space='candidates'"):
        CascadiaMultiAgentEnv(players=2, max_candidates=8)
    with pytest.raises(ConfigError, match="max_candidates must be an integer >= 1"):
        CascadiaMultiAgentEnv(players=2, action_space="candidates", max_candidates=0)


@pytest.mark.parametrize("name", CASES)
def test_rllib_env_check_passes_in_penalize_mode(name):
    check_multiagent_environments(make(name, illegal_action="penalize", max_candidates=32))
