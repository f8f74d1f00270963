"""Fuzz every env (single-agent ``gymnasium.make`` envs and the multi-agent envs) with random action
sequences, legal and illegal: a legal action always steps, an illegal one always raises
IllegalActionError and leaves the game state exactly as it was (every array compared)."""

from __future__ import annotations

import dataclasses
import functools

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envs.core.errors import IllegalActionError
from tests.envs.cases import case_id, multi_agent_cases, single_agent_cases

SINGLE = single_agent_cases()
MULTI = multi_agent_cases()
FAST = settings(max_examples=4, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])


def snapshot(state) -> dict:
    """A deep copy of every field of a game state (the arrays copied)."""
    return {f.name: np.array(v, copy=True) if isinstance(v := getattr(state, f.name), np.ndarray) else v
            for f in dataclasses.fields(state)}


def assert_same_state(state, before: dict, where: str) -> None:
    for name, old in before.items():
        new = getattr(state, name)
        same = np.array_equal(new, old) and (not isinstance(old, np.ndarray) or new.dtype == old.dtype) \
            if isinstance(old, np.ndarray) else new == old
        assert same, f"{where}: field {name!r} changed after an illegal action"


#: action values that are no action at all
ODD_ACTIONS = [None, "3", 2.5, True, float("nan"), [1]]


def moves(n_actions: int):
    """One move: ("legal", k) picks the k-th legal action; ("any", a) any integer, in range or not;
    ("odd", v) a value that is not an integer."""
    return st.one_of(
        st.tuples(st.just("legal"), st.integers(0, 10**6)),
        st.tuples(st.just("odd"), st.sampled_from(ODD_ACTIONS)),
        st.tuples(st.just("any"), st.one_of(st.integers(0, n_actions - 1), st.integers(-10, -1),
                                            st.integers(n_actions, n_actions + 10),
                                            st.sampled_from([2**31, -(2**31), 2**62]))),
    )


def pick(move: tuple[str, object], mask: np.ndarray) -> tuple[object, bool]:
    """The action of ``move`` and whether it is legal under ``mask``."""
    kind, value = move
    if kind == "legal":
        legal = np.flatnonzero(mask)
        return int(legal[value % len(legal)]), True
    if kind == "odd":
        return value, False
    return int(value), 0 <= int(value) < mask.size and bool(mask[int(value)])


def run_single(env_id: str, kwargs: dict, seed: int, sequence: list, penalize: bool = False) -> None:
    """Step the env through ``sequence``; with ``penalize`` an illegal action must return the penalty
    and leave the state alone instead of raising."""
    env = gym.make(env_id, **kwargs, **({"illegal_action": "penalize"} if penalize else {})).unwrapped
    obs, info = env.reset(seed=seed)
    for step, move in enumerate(sequence):
        mask = info["action_mask"].astype(bool)
        action, legal = pick(move, mask)
        where = f"{env_id} seed {seed} step {step} action {action}"
        if legal:
            obs, reward, terminated, truncated, info = env.step(action)
            assert np.isfinite(reward) and not truncated, where
            if terminated:
                before = snapshot(env.state)
                with pytest.raises(IllegalActionError, match="game is over"):
                    env.step(action)
                assert_same_state(env.state, before, where)
                return
        elif penalize:
            before = snapshot(env.state)
            obs, reward, terminated, truncated, info = env.step(action)
            assert reward == env.illegal_penalty and not terminated and "illegal_action" in info, where
            assert_same_state(env.state, before, where)
        else:
            before = snapshot(env.state)
            with pytest.raises(IllegalActionError):
                env.step(action)
            assert_same_state(env.state, before, where)


def run_multi(factory, players: int, seed: int, sequence: list) -> None:
    env = factory(players=players)
    obs, infos = env.reset(seed=seed)
    for step, move in enumerate(sequence):
        (mover,) = obs.keys()
        mask = infos[mover]["action_mask"].astype(bool)
        action, legal = pick(move, mask)
        where = f"{type(env).__name__} {players}p seed {seed} step {step} action {action}"
        if legal:
            obs, rewards, terminateds, truncateds, infos = env.step({mover: action})
            assert all(np.isfinite(r) for r in rewards.values()), where
            if terminateds["__all__"]:
                return
            assert len(obs) == 1, where
        else:
            before = snapshot(env.state)
            with pytest.raises(IllegalActionError):
                env.step({mover: action})
            assert_same_state(env.state, before, where)
            assert env.current_agent() == mover, where


def single_case_test(settings_):
    @pytest.mark.parametrize("case", SINGLE, ids=case_id)
    @settings_
    @given(data=st.data())
    def test(case, data):
        env_id, kwargs = case
        n_actions = gym.make(env_id, **kwargs).unwrapped.action_space.n
        seed = data.draw(st.integers(0, 2**31 - 1), label="seed")
        sequence = data.draw(st.lists(moves(n_actions), max_size=40), label="moves")
        run_single(env_id, kwargs, seed, sequence, penalize=data.draw(st.booleans(), label="penalize"))
    return test


def multi_case_test(settings_):
    @pytest.mark.parametrize("case", MULTI, ids=case_id)
    @settings_
    @given(data=st.data())
    def test(case, data):
        _, factory, players = case
        n_actions = factory(players=players).game.num_actions
        seed = data.draw(st.integers(0, 2**31 - 1), label="seed")
        sequence = data.draw(st.lists(moves(n_actions), max_size=40), label="moves")
        run_multi(factory, players, seed, sequence)
    return test


test_single_agent_envs_fuzz = single_case_test(FAST)
test_multi_agent_envs_fuzz = multi_case_test(FAST)
test_single_agent_envs_fuzz_long = pytest.mark.slow(single_case_test(SLOW))
test_multi_agent_envs_fuzz_long = pytest.mark.slow(multi_case_test(SLOW))


@functools.cache
def game_named(name: str):
    from envs.core.registry import make_game

    return make_game(name)


@pytest.mark.parametrize("name", ["cartographers", "cascadia", "dorfromantik"])
@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(value=st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.floats(allow_nan=True),
                       st.integers(-(2**70), 2**70), st.sampled_from([2**63, 2**64, -(2**63) - 1])))
def test_games_refuse_odd_action_values_with_a_clear_error(name, value):
    # found by this fuzz: 2**64 crashed the Cartographers kernel call, None raised TypeError
    game = game_named(name)
    state = game.new_game(1)
    before = snapshot(state)
    integral = isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer()
    if integral and 0 <= int(value) < game.num_actions and game.legal_mask(state)[int(value)]:
        game.step(state, value)
        return
    with pytest.raises(IllegalActionError):
        game.step(state, value)
    assert_same_state(state, before, f"{name} action {value!r}")
