"""The Game contract (envs/core/game.py) on every registered game and every seat count it accepts.

Each case plays a few seeded games with a seeded uniform random policy over ``legal_mask`` and checks,
at many of their decisions: the action codec round trip, determinization (keeps what the acting player
sees, resamples only the hidden part, never reads the real hidden order), copy independence, score
categories adding up to the total, the legal mask until the end, illegal actions raising without a
trace, and reproducibility from the seeds. What each game hides and how its categories add up lives in
``tests/envs/contract/games.py``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from envs.core.errors import ConfigError, IllegalActionError
from envs.core.game import Game, State
from envs.core.registry import GAMES, make_game
from tests.envs.contract.games import FACTS, GameFacts, HiddenGroup, cases

CASES = cases()
GAME_SEEDS = (3, 17)
POLICY_SEED = 5
DETERMINIZE_SEEDS = range(8)


def case_id(case: tuple[str, int]) -> str:
    return f"{case[0]}-{case[1]}p"


# ---- playing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Playthrough:
    """One game: the state before every decision (copies), the actions taken and the final state."""

    states: tuple[State, ...]
    actions: tuple[int, ...]
    final: State


def play(game: Game, seed: int, policy_seed: int = POLICY_SEED, max_decisions: int = 5000) -> Playthrough:
    """Play a whole game from ``seed`` with uniformly random legal actions drawn from ``policy_seed``."""
    rng = np.random.default_rng(policy_seed)
    state = game.new_game(seed)
    states: list[State] = []
    actions: list[int] = []
    while not game.is_over(state):
        assert len(actions) < max_decisions, f"{game.name}: no end after {max_decisions} decisions"
        legal = np.flatnonzero(game.legal_mask(state))
        assert legal.size > 0, f"{game.name}: decision {len(actions)} of a live game has no legal action"
        states.append(state.copy())
        actions.append(int(legal[rng.integers(legal.size)]))
        game.step(state, actions[-1])
    return Playthrough(tuple(states), tuple(actions), state)


@functools.cache
def game_for(name: str, players: int) -> Game:
    return make_game(name, players=players)


@functools.cache
def recorded(name: str, players: int, seed: int) -> Playthrough:
    """The shared playthrough of a case (tests copy its states before touching them)."""
    return play(game_for(name, players), seed)


def positions(name: str, players: int, every: int = 1) -> list[State]:
    """Every ``every``-th decision state of the case's recorded games (the first one included)."""
    return [s for seed in GAME_SEEDS for s in recorded(name, players, seed).states[::every]]


def setup(case: tuple[str, int]) -> tuple[Game, GameFacts]:
    return game_for(*case), FACTS[case[0]]


# ---- comparing states ---------------------------------------------------------------------------


def snapshot(state: State) -> dict[str, Any]:
    """A deep copy of every field, to compare against later."""
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in vars(state).items()}


def differences(state: State, snap: dict[str, Any]) -> list[str]:
    """The fields of ``state`` that differ from ``snap``."""
    out = []
    for name, before in snap.items():
        now = getattr(state, name)
        if isinstance(before, np.ndarray):
            if now.shape != before.shape or now.dtype != before.dtype or not np.array_equal(now, before):
                out.append(name)
        elif now != before:
            out.append(name)
    return out


def assert_unchanged(state: State, snap: dict[str, Any], what: str) -> None:
    changed = differences(state, snap)
    assert not changed, f"{what} changed the state's {', '.join(changed)}"


def group_values(state: State, group: HiddenGroup) -> np.ndarray:
    """The values of a hidden group, piece after piece."""
    return np.concatenate([getattr(state, name).ravel()[idx] for name, idx in group])


def hidden_indices(facts: GameFacts, state: State) -> dict[str, np.ndarray]:
    """Field -> flat indices that are hidden (all of a chance-stream field)."""
    out: dict[str, list[np.ndarray]] = {}
    for group in facts.hidden(state):
        for name, idx in group:
            out.setdefault(name, []).append(idx)
    return {name: np.concatenate(parts) for name, parts in out.items()}


def assert_visible_equal(facts: GameFacts, real: State, other: State) -> None:
    """Every field of the two states agrees outside the hidden entries and the chance stream."""
    hidden = hidden_indices(facts, real)
    for name, value in vars(real).items():
        if name in facts.streams:
            continue
        mine = getattr(other, name)
        if not isinstance(value, np.ndarray):
            assert mine == value, f"determinize changed the visible field {name}: {value!r} -> {mine!r}"
            continue
        assert mine.shape == value.shape and mine.dtype == value.dtype, f"determinize reshaped {name}"
        keep = np.ones(value.size, dtype=bool)
        keep[hidden.get(name, [])] = False
        changed = np.flatnonzero(keep & (value.ravel() != mine.ravel()))
        assert changed.size == 0, f"determinize changed visible entries {changed.tolist()} of {name}"


def rearranged(facts: GameFacts, state: State, rng: np.random.Generator) -> State:
    """A copy whose hidden pieces are each permuted and whose chance stream is replaced: the same
    position for the acting player, a different real future."""
    new = state.copy()
    for group in facts.hidden(new):
        for name, idx in group:
            array = getattr(new, name)
            np.put(array, idx, rng.permutation(array.ravel()[idx]))
    for name in facts.streams:
        value = getattr(new, name)
        if isinstance(value, np.ndarray):
            value[:] = rng.integers(0, 2**63, size=value.shape, dtype=np.uint64)
        else:  # a scalar seed that would rebuild the real future
            setattr(new, name, int(rng.integers(0, 2**31)))
    return new


# ---- the table ----------------------------------------------------------------------------------


def test_every_registered_game_has_facts():
    assert set(FACTS) == set(GAMES), "tests/envs/contract/games.py must describe every game in GAMES"


@pytest.mark.parametrize("name", sorted(FACTS))
def test_engine_accepts_exactly_the_listed_seats(name):
    seats = FACTS[name].seats
    assert seats == tuple(range(seats[0], seats[-1] + 1)), "seat counts are a range"
    for players in seats:
        assert make_game(name, players=players).num_players() == players
    for players in (seats[0] - 1, seats[-1] + 1):
        with pytest.raises(ConfigError):
            make_game(name, players=players)


# ---- the action codec ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FACTS))
def test_codec_round_trips_over_the_whole_action_space(name):
    game, facts = setup((name, 1))
    state = game.new_game(GAME_SEEDS[0])
    wrong = [a for a in range(game.num_actions) if facts.round_trip(game, state, a) != a]
    assert not wrong, f"encode(decode(a)) != a for {len(wrong)} actions, first {wrong[:5]}"
    for outside in (-1, game.num_actions):
        with pytest.raises(ValueError, match=str(outside)):
            game.decode_action(outside)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_codec_round_trips_and_agrees_with_the_mask_on_legal_actions(case):
    game, facts = setup(case)
    checked = 0
    for state in positions(*case, every=2):
        legal = np.flatnonzero(game.legal_mask(state))
        for action in legal.tolist():
            assert facts.round_trip(game, state, action) == action, f"action {action} does not round trip"
            facts.check_legal_decoded(game, state, action)
        checked += legal.size
        lost = getattr(game, "lost_positions", None)
        if lost is not None:
            assert lost(state) == 0, "the action space cannot express some legal moves"
    assert checked > 0


# ---- determinization ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_determinize_keeps_what_the_acting_player_sees(case):
    game, facts = setup(case)
    for i, state in enumerate(positions(*case, every=2)):
        snap = snapshot(state)
        seat = game.current_player(state)
        det = game.determinize(state, np.random.default_rng(i))
        assert_unchanged(state, snap, "determinize")
        assert det is not state
        assert game.current_player(det) == seat and not game.is_over(det)
        np.testing.assert_array_equal(game.observation(det, seat), game.observation(state, seat))
        np.testing.assert_array_equal(game.legal_mask(det), game.legal_mask(state))
        assert game.scores(det) == game.scores(state)
        assert_visible_equal(facts, state, det)
        for group in facts.hidden(state):
            held, real = np.sort(group_values(det, group)), np.sort(group_values(state, group))
            np.testing.assert_array_equal(held, real, err_msg="determinize changed the hidden contents")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_determinize_resamples_the_hidden_part(case):
    game, facts = setup(case)
    resampled = 0
    for state in positions(*case, every=3):
        dets = [game.determinize(state, np.random.default_rng(seed)) for seed in DETERMINIZE_SEEDS]
        for name in facts.streams:
            assert any(not np.array_equal(getattr(d, name), getattr(state, name)) for d in dets), \
                f"determinize kept the real chance stream {name}"
        for group in facts.hidden(state):
            real = group_values(state, group)
            if np.unique(real).size < 2:
                continue  # nothing to reorder
            orders = {tuple(group_values(d, group).tolist()) for d in dets}
            assert len(orders) > 1, f"{len(dets)} determinizations all gave the hidden order {orders}"
            assert orders != {tuple(real.tolist())}, "determinize always kept the real hidden order"
            resampled += 1
    assert resampled > 0, "no position had hidden information to resample"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_determinize_does_not_read_the_real_hidden_order(case):
    game, facts = setup(case)
    rng = np.random.default_rng(1)
    really_different = 0
    for i, state in enumerate(positions(*case, every=3)):
        other = rearranged(facts, state, rng)
        really_different += any(not np.array_equal(group_values(state, g), group_values(other, g))
                                for g in facts.hidden(state))
        a = game.determinize(state, np.random.default_rng(100 + i))
        b = game.determinize(other, np.random.default_rng(100 + i))
        assert_unchanged(b, snapshot(a), "the real hidden order (determinizing a rearranged copy)")
    assert really_different > 0, "no position had a hidden order to rearrange"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_a_determinized_state_plays_to_the_end(case):
    game, facts = setup(case)
    states = recorded(*case, GAME_SEEDS[0]).states
    for i, state in enumerate((states[0], states[len(states) // 2])):
        rest = play_from(game, game.determinize(state, np.random.default_rng(i)), np.random.default_rng(i))
        assert game.is_over(rest)
        facts.check_scores(game, game.scores(rest))


def play_from(game: Game, state: State, rng: np.random.Generator, max_decisions: int = 5000) -> State:
    """Finish ``state`` in place with uniformly random legal actions."""
    for _ in range(max_decisions):
        if game.is_over(state):
            return state
        legal = np.flatnonzero(game.legal_mask(state))
        assert legal.size > 0, "a live determinized game has no legal action"
        game.step(state, int(legal[rng.integers(legal.size)]))
    raise AssertionError(f"no end after {max_decisions} decisions")


# ---- copies -------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_copies_are_independent(case):
    game, _ = setup(case)
    rng = np.random.default_rng(2)
    for state in positions(*case, every=3):
        original = state.copy()
        snap = snapshot(original)
        clone = original.copy()
        assert_unchanged(clone, snap, "copy")
        for name, value in vars(original).items():
            if isinstance(value, np.ndarray):
                assert not np.shares_memory(value, getattr(clone, name)), f"copy shares {name}"
        legal = np.flatnonzero(game.legal_mask(clone))
        game.step(clone, int(legal[rng.integers(legal.size)]))
        assert differences(clone, snap), "stepping changed nothing"
        assert_unchanged(original, snap, "stepping a copy")
        second = original.copy()
        game.step(original, int(legal[rng.integers(legal.size)]))
        assert_unchanged(second, snap, "stepping the original")


# ---- scores -------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_score_categories_add_up_for_every_seat(case):
    game, facts = setup(case)
    for seed in GAME_SEEDS:
        playthrough = recorded(*case, seed)
        for state in (*playthrough.states, playthrough.final):
            sheets = game.scores(state)
            assert len(sheets) == game.num_players()
            facts.check_scores(game, sheets)
            np.testing.assert_array_equal(game.returns(state), [s.total for s in sheets])
        final = game.scores(playthrough.final)
        assert any(v != 0 for s in final for v in s.categories.values()), "a whole game scored nothing"


# ---- the legal mask and illegal actions ---------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_legal_mask_is_non_empty_until_the_end_and_empty_after(case):
    game, _ = setup(case)
    for seed in GAME_SEEDS:
        playthrough = recorded(*case, seed)
        for state in playthrough.states:
            mask = game.legal_mask(state)
            assert mask.dtype == np.bool_ and mask.shape == (game.num_actions,)
            assert mask.any() and not game.is_over(state)
            assert 0 <= game.current_player(state) < game.num_players()
            mask[:] = ~mask  # a caller may scribble on its mask
            assert not np.array_equal(game.legal_mask(state), mask), "legal_mask handed out its cache"
        final = playthrough.final.copy()
        assert game.is_over(final) and game.current_player(final) == -1
        assert not game.legal_mask(final).any()
        snap = snapshot(final)
        for action in (0, int(playthrough.actions[-1])):
            with pytest.raises(IllegalActionError, match="over"):
                game.step(final, action)
        assert_unchanged(final, snap, "stepping a finished game")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_illegal_actions_raise_and_keep_the_state(case):
    game, _ = setup(case)
    rng = np.random.default_rng(4)
    for state in positions(*case, every=4):
        work = state.copy()
        snap = snapshot(work)
        mask = game.legal_mask(work)
        illegal = rng.choice(np.flatnonzero(~mask), size=4, replace=False).tolist()
        for action in (*illegal, -1, game.num_actions):
            with pytest.raises(IllegalActionError, match=f"action {action}"):
                game.step(work, action)
            assert_unchanged(work, snap, f"the illegal action {action}")
        for action in (2.5, True, None, "0"):
            with pytest.raises(IllegalActionError):
                game.step(work, action)
            assert_unchanged(work, snap, f"the illegal action {action!r}")
        np.testing.assert_array_equal(game.legal_mask(work), mask)
        game.step(work, int(np.flatnonzero(mask)[0]))  # still playable


# ---- reproducibility ----------------------------------------------------------------------------


def initial_state_differs(a: State, b: State) -> bool:
    return bool(differences(b, snapshot(a)))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_same_seeds_same_game_other_seeds_other_game(case):
    name, players = case
    seed = GAME_SEEDS[0]
    first = play(make_game(name, players=players), seed)
    again = play(make_game(name, players=players), seed)
    assert first.actions == again.actions
    assert_unchanged(again.final, snapshot(first.final), "replaying the same seeds")
    game = game_for(*case)
    assert game.scores(first.final) == game.scores(again.final)
    other = play(game, seed + 1)
    assert first.actions != other.actions
    assert initial_state_differs(first.states[0], other.states[0]), "another game seed dealt the same game"
    other_policy = play(game, seed, policy_seed=POLICY_SEED + 1)
    assert_unchanged(other_policy.states[0], snapshot(first.states[0]), "the policy seed")
    assert other_policy.actions != first.actions


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_interleaved_games_on_one_game_object_match_games_played_alone(case):
    """Whatever a game object caches between calls must not leak from one state into another."""
    game = make_game(case[0], players=case[1])
    states = [game.new_game(seed) for seed in GAME_SEEDS]
    rngs = [np.random.default_rng(POLICY_SEED) for _ in GAME_SEEDS]
    actions: list[list[int]] = [[] for _ in GAME_SEEDS]
    while not all(game.is_over(s) for s in states):
        for state, rng, taken in zip(states, rngs, actions, strict=True):
            if not game.is_over(state):
                legal = np.flatnonzero(game.legal_mask(state))
                taken.append(int(legal[rng.integers(legal.size)]))
                game.step(state, taken[-1])
    for seed, state, taken in zip(GAME_SEEDS, states, actions, strict=True):
        alone = recorded(*case, seed)
        assert tuple(taken) == alone.actions, f"seed {seed} played differently when interleaved"
        assert_unchanged(state, snapshot(alone.final), f"interleaving (seed {seed})")


# ---- observations -------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_observations_have_the_declared_shape_and_bounds(case):
    game, _ = setup(case)
    low, high = game.observation_bounds()
    for state in positions(*case, every=4):
        snap = snapshot(state)
        for seat in range(game.num_players()):
            obs = game.observation(state, seat)
            assert obs.shape == game.observation_shape() and obs.dtype == np.float32
            assert np.isfinite(obs).all() and obs.min() >= low and obs.max() <= high, \
                f"player_{seat}'s observation leaves [{low}, {high}]: {obs.min()}..{obs.max()}"
        assert_unchanged(state, snap, "observation")


# ---- a wider sweep (slow) -----------------------------------------------------------------------

SWEEP_SEEDS = range(100, 116)


def check_position(game: Game, facts: GameFacts, state: State, rng: np.random.Generator) -> None:
    """The per-position checks above in one pass, on a sample of the legal actions."""
    mask = game.legal_mask(state)
    assert mask.any() and not game.is_over(state)
    for action in rng.choice(np.flatnonzero(mask), size=min(8, int(mask.sum())), replace=False).tolist():
        assert facts.round_trip(game, state, action) == action
        facts.check_legal_decoded(game, state, action)
    facts.check_scores(game, game.scores(state))
    det = game.determinize(state, rng)
    seat = game.current_player(state)
    np.testing.assert_array_equal(game.observation(det, seat), game.observation(state, seat))
    np.testing.assert_array_equal(game.legal_mask(det), mask)
    assert_visible_equal(facts, state, det)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_sweep_over_more_seeds(case):
    game, facts = setup(case)
    rng = np.random.default_rng(6)
    for seed in SWEEP_SEEDS:
        playthrough = play(game, seed, policy_seed=seed)
        for state in playthrough.states:
            check_position(game, facts, state, rng)
        assert not game.legal_mask(playthrough.final).any()
        facts.check_scores(game, game.scores(playthrough.final))
