"""``action_space="candidates"``: the candidate-index env plays the plain env's games, row 0 is
the greedy agent's move, and masked rows, truncation and the view registry say what they do."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs  # noqa: F401  (registers the meeplelab ids)
from agents.base import make_agent
from envs.core import policies
from envs.core.candidate_env import CandidateEnv, make_env
from envs.core.errors import ConfigError, IllegalActionError
from tests.paths import REPO_ROOT

CARTO, DORF = "meeplelab/Cartographers-v0", "meeplelab/Dorfromantik-v0"
CASC = "meeplelab/Cascadia-v0"
#: the preset of each game's view (its ranking is this greedy agent's)
PRESETS = {CARTO: "progress", DORF: "selfplay"}


class FirstOfTies:
    """An rng stand-in whose ``integers`` always draws 0: the greedy agent keeps the first of tied
    moves (with a real rng it breaks ties at random, and tied moves differ later)."""

    def integers(self, *args, **kwargs) -> int:
        return 0


def make(env_id: str, **kwargs) -> CandidateEnv:
    return gym.make(env_id, action_space="candidates", **kwargs).unwrapped


def play(env, seed: int, choose, steps: int = 10_000) -> list[tuple]:
    """(obs, reward, terminated, info) of every step of one episode; ``choose(obs, info) -> index``."""
    obs, info = env.reset(seed=seed)
    out = [(obs, 0.0, False, info)]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(choose(obs, info))
        assert not truncated
        out.append((obs, reward, terminated, info))
        if terminated:
            return out
    raise AssertionError("episode did not end")


def random_rows(seed: int):
    rng = np.random.default_rng(seed)
    return lambda obs, info: int(rng.choice(np.flatnonzero(obs["candidate_mask"])))


def recording(choose):
    """``choose`` that also appends the plain action of every row it picks to a list (returned)."""
    chosen: list[int] = []

    def wrapped(obs, info):
        index = choose(obs, info)
        chosen.append(int(info["candidate_actions"][index]))
        return index

    return wrapped, chosen


@pytest.mark.parametrize("env_id", [CARTO, DORF, CASC])
def test_check_env_passes(env_id):
    env = make(env_id, illegal_action="penalize")  # check_env steps unmasked sampled rows
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    assert not [str(w.message) for w in caught]
    assert isinstance(env, CandidateEnv)


@pytest.mark.parametrize("env_id", [CARTO, DORF])
@pytest.mark.parametrize("seed", [0, 1])
def test_row_zero_plays_the_greedy_agents_game(env_id, seed):
    env = make(env_id)
    steps = play(env, seed, lambda obs, info: 0)
    plain = gym.make(env_id).unwrapped
    agent = make_agent(f"greedy:preset={PRESETS[env_id]}", plain.game)
    obs, info = plain.reset(seed=seed)
    total, terminated = 0.0, False
    while not terminated:
        action = agent.act(plain.state, obs["action_mask"].astype(bool), FirstOfTies())
        obs, reward, terminated, _, info = plain.step(action)
        total += reward
    assert sum(s[1] for s in steps) == total == info["score"]["total"] == steps[-1][3]["score"]["total"]


@pytest.mark.parametrize("env_id", [CARTO, DORF])
def test_the_plain_env_replays_the_chosen_actions(env_id):
    env, plain = make(env_id), gym.make(env_id).unwrapped
    for seed in (3, 4):
        choose, chosen = recording(random_rows(seed))
        steps = play(env, seed, choose)
        obs, info = plain.reset(seed=seed)
        assert plain.game_seed == env.env.game_seed == seed
        assert info["score"] == steps[0][3]["score"]
        for action, (_, reward, terminated, after) in zip(chosen, steps[1:], strict=True):
            obs, p_reward, p_terminated, _, info = plain.step(action)
            assert (p_reward, p_terminated, info["score"]) == (reward, terminated, after["score"])
            np.testing.assert_array_equal(info["action_mask"], after["action_mask"])
        assert p_terminated


@pytest.mark.parametrize("env_id", [CARTO, DORF])
def test_same_seed_same_observations(env_id):
    first, second = (play(make(env_id), 7, random_rows(0)) for _ in range(2))
    assert len(first) == len(second)
    for (obs_a, r_a, t_a, info_a), (obs_b, r_b, t_b, info_b) in zip(first, second, strict=True):
        assert (r_a, t_a, info_a["score"]) == (r_b, t_b, info_b["score"])
        for key in obs_a:
            np.testing.assert_array_equal(obs_a[key], obs_b[key])
        np.testing.assert_array_equal(info_a["candidate_actions"], info_b["candidate_actions"])


@pytest.mark.parametrize("env_id", [CARTO, DORF])
def test_rows_are_the_views_candidates_best_first(env_id):
    env = make(env_id)
    obs, info = env.reset(seed=2)
    view = policies.candidate_view(env.game.name)
    actions, features = view.candidates(env.game, env.state)
    n = min(actions.size, env.max_candidates)
    assert env.observation_space.contains(obs)
    assert info["num_candidates"] == actions.size and obs["candidate_mask"].sum() == n
    rows = info["candidate_actions"]
    assert (rows[n:] == -1).all() and (obs["candidates"][n:] == 0).all()
    assert set(rows[:n].tolist()) <= set(actions.tolist())
    values = view.greedy_values(env.game, env.state, obs["candidates"][:n])
    assert (np.diff(values) <= 0).all()
    for i in (0, n - 1):
        np.testing.assert_array_equal(obs["candidates"][i], features[list(actions).index(rows[i])])
    assert obs["context"].shape == (len(view.context_names),)
    assert obs["context"][view.context_names.index(f"phase_{view.phase(env.game, env.state)}")] == 1.0
    assert env.game.legal_mask(env.state)[rows[:n]].all()


@pytest.mark.parametrize("env_id", [CARTO, DORF])
def test_masked_row_raises_naming_it_or_is_penalized(env_id):
    env = make(env_id, max_candidates=1024)
    obs, info = env.reset(seed=1)
    bad = int(np.flatnonzero(obs["candidate_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match=f"candidate index {bad} is masked out"):
        env.step(bad)
    with pytest.raises(IllegalActionError, match="outside the action space"):
        env.step(1024)
    env.env.illegal_action = "penalize"
    again, reward, terminated, _, info = env.step(bad)
    assert (reward, terminated) == (-1.0, False) and f"candidate index {bad}" in info["illegal_action"]
    for key in obs:
        np.testing.assert_array_equal(obs[key], again[key])


def test_more_candidates_than_k_keeps_the_best_k_and_says_so():
    full, small, default = make(CARTO, max_candidates=4096), make(CARTO, max_candidates=8), make(CARTO)
    obs_full, info_full = full.reset(seed=0)
    obs, info = small.reset(seed=0)
    assert info["num_candidates"] == info["candidates_truncated"] == info_full["num_candidates"] > 256
    assert info_full["candidates_truncated"] == 0
    assert default.reset(seed=0)[1]["candidates_truncated"] == info["num_candidates"]
    assert default.action_space.n == 256
    assert obs["candidates"].shape[0] == 8 and obs["candidate_mask"].all()
    np.testing.assert_array_equal(info["candidate_actions"], info_full["candidate_actions"][:8])
    np.testing.assert_array_equal(obs["candidates"], obs_full["candidates"][:8])
    assert small.action_space.n == 8


def test_a_view_with_its_own_play_steps_like_the_plain_env():
    """A view whose candidates are not plain actions (Cascadia's whole turns) plays them with
    ``play``; here ``play`` is game.step, so the games must be those of the plain path."""
    base = policies.candidate_view("cartographers")
    view = base._replace(play=lambda game, state, action: game.step(state, action))
    ours = CandidateEnv(gym.make(CARTO).unwrapped, view=view)
    theirs = make(CARTO)
    for (o_a, r_a, t_a, i_a), (o_b, r_b, t_b, i_b) in zip(play(ours, 5, random_rows(1)),
                                                          play(theirs, 5, random_rows(1)), strict=True):
        assert (r_a, t_a, i_a["score"]) == (r_b, t_b, i_b["score"])
        np.testing.assert_array_equal(o_a["candidates"], o_b["candidates"])


def test_multiplayer_ambushes_are_played_by_the_fallback_agent():
    env = make(CARTO, players=2, opponent="random")
    steps = play(env, 11, random_rows(2))
    final = steps[-1][3]["score"]["total"]
    assert sum(s[1] for s in steps) == final
    assert all(s[3]["num_candidates"] > 0 for s in steps[:-1])
    assert env.game.returns(env.state)[env.seat] == final
    assert env._fallback_agent is not None  # the learner drew at least one ambush


def test_render_is_the_plain_envs():
    env = make(CARTO, render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == env.env.render() and isinstance(env.render(), str)


def test_options_are_checked():
    with pytest.raises(ConfigError, match="action_space must be one of"):
        gym.make(CARTO, action_space="cells")
    with pytest.raises(ConfigError, match="max_candidates needs action_space='candidates'"):
        gym.make(CARTO, max_candidates=8)
    with pytest.raises(ConfigError, match="max_candidates must be an integer >= 1"):
        make(DORF, max_candidates=0)
    assert type(gym.make(CARTO).unwrapped).__name__ == "CartographersEnv"
    rllib = make_env({"action_space": "candidates", "max_candidates": 32, "players": 2},
                     env_class="envs.cartographers.env:CartographersEnv")
    assert isinstance(rllib, CandidateEnv) and rllib.action_space.n == 32 and rllib.game.num_players() == 2


def test_a_game_without_a_view_names_the_games_with_one():
    with pytest.raises(ConfigError, match="no candidate view for game 'nim'; games with one: .*cartogr"):
        policies.candidate_view("nim")


def test_envs_alone_find_the_views_through_the_entry_point():
    code = ("import gymnasium, envs, sys\n"
            "env = gymnasium.make('meeplelab/Dorfromantik-v0', action_space='candidates')\n"
            "obs, info = env.reset(seed=1)\n"
            "print('agents' in sys.modules, int(obs['candidate_mask'].sum()) == info['num_candidates'])\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "True"]


def test_cascadia_candidates_are_whole_turns():
    """A Cascadia step plays a whole turn: every observation is a turn start, and the rewards of
    a game add up to the final score less the starting tiles' points."""
    env = make(CASC)
    obs, info = env.reset(seed=3)
    start = float(env.env.game.returns(env.env.state)[0])
    total, steps, done = 0.0, 0, False
    while not done:
        assert info["num_candidates"] > 0
        obs, reward, terminated, truncated, info = env.step(0)
        total += reward
        steps += 1
        done = terminated or truncated
    game, state = env.env.game, env.env.state
    assert game.is_over(state)
    assert steps == 20  # the solo game's 20 turns
    assert total == pytest.approx(float(game.returns(state)[0]) - start)
