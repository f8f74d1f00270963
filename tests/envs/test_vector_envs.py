"""The natively batched vector envs (solo Cartographers, Cascadia, Dorfromantik).

Gymnasium 1.2.2 has no checker for vector envs (``gymnasium.utils.env_checker`` takes single envs
only), so the reference here is gymnasium's own ``SyncVectorEnv`` over the single env in next-step
autoreset mode: the batched env must return the same observations, masks, rewards, terminations,
truncations and final scores step for step, autoresets included, and play the same game seeds.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import DictInfoToList

from envs.cartographers.env import CartographersEnv
from envs.cartographers.vector_env import make_vector_env as make_cartographers
from envs.cascadia.env import CascadiaEnv
from envs.cascadia.vector_env import make_vector_env as make_cascadia
from envs.core.errors import ConfigError, IllegalActionError
from envs.dorfromantik.env import DorfromantikEnv
from envs.dorfromantik.vector_env import make_vector_env as make_dorfromantik
from experiments.bench.vector import random_legal_actions

GAMES = {"cartographers": (make_cartographers, CartographersEnv), "cascadia": (make_cascadia, CascadiaEnv),
         "dorfromantik": (make_dorfromantik, DorfromantikEnv)}


#: (game, options) of the sync comparison: solo both, and Cascadia with opponents in the other seats
SETTINGS = [("cartographers", {}), ("cascadia", {}), ("cascadia", {"players": 3, "opponent": "greedy"}),
            ("cascadia", {"players": 2, "opponent": "random"}), ("dorfromantik", {}),
            ("dorfromantik", {"players": 3}),
            # a window smaller than the board: its centre falls back to the legal positions' box
            ("dorfromantik", {"window_radius": 4})]


def _pair(game: str, n: int, options: dict) -> tuple[gym.vector.VectorEnv, SyncVectorEnv]:
    make, single = GAMES[game]
    sync = SyncVectorEnv([lambda: single(**options) for _ in range(n)],
                         autoreset_mode=AutoresetMode.NEXT_STEP)
    return make({"num_envs": n, **options}), sync


def _assert_same_obs(a: dict, b: dict) -> None:
    assert np.array_equal(a["observations"], b["observations"])
    assert np.array_equal(a["action_mask"], b["action_mask"])


def _run_against_sync(game: str, options: dict, n: int, seed: int, episodes: int) -> None:
    """Random legal actions until every sub-env has ended ``episodes`` games and played a few
    steps of the next; halfway, both envs are reset without a seed (the generators' next games)."""
    vec, sync = _pair(game, n, options)
    rng = np.random.default_rng(seed)
    obs, _ = vec.reset(seed=seed)
    ref, _ = sync.reset(seed=seed)
    _assert_same_obs(obs, ref)
    assert vec.game_seeds.tolist() == [seed + i for i in range(n)]
    ended = np.zeros(n, dtype=int)
    reset_done = False
    since_last = 0
    while ended.min() < episodes or since_last < 3:
        if not reset_done and ended.min() >= 1 and episodes > 1:
            obs, _ = vec.reset()
            ref, _ = sync.reset()
            _assert_same_obs(obs, ref)
            reset_done = True
        actions = random_legal_actions(obs["action_mask"], rng)
        obs, rewards, terms, truncs, info = vec.step(actions)
        ref, ref_rewards, ref_terms, ref_truncs, ref_info = sync.step(actions)
        _assert_same_obs(obs, ref)
        assert np.array_equal(rewards, ref_rewards)
        assert np.array_equal(terms, ref_terms) and np.array_equal(truncs, ref_truncs)
        assert vec.game_seeds.tolist() == [e.game_seed for e in sync.envs]
        if terms.any():
            assert np.array_equal(info["_score"], terms)
            assert np.array_equal(info["score"][terms], ref_info["score"]["total"][terms])
        else:
            assert info == {}
        ended += terms
        since_last = since_last + 1 if ended.min() >= episodes else 0
    assert len(set(vec.game_seeds.tolist())) == n


@pytest.mark.parametrize(("game", "options"), SETTINGS)
def test_sub_envs_play_the_single_envs_games_through_autoresets(game, options):
    episodes = 3 if options.get("players", 1) == 1 and game != "dorfromantik" else 2
    _run_against_sync(game, options, n=4 if episodes == 3 else 3, seed=40, episodes=episodes)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_spaces_metadata_and_fresh_batches(game):
    make, single = GAMES[game]
    vec = make({"num_envs": 4})
    one = single()
    assert vec.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert vec.single_observation_space == one.observation_space
    assert vec.single_action_space == one.action_space
    assert vec.action_space == gym.spaces.MultiDiscrete([one.action_space.n] * 4)
    obs, info = vec.reset(seed=1)
    assert info == {} and vec.observation_space.contains(obs)
    kept = {k: v.copy() for k, v in obs.items()}
    new, *_ = vec.step(random_legal_actions(obs["action_mask"], np.random.default_rng(0)))
    assert vec.observation_space.contains(new)
    _assert_same_obs(obs, kept)  # the last batch is never written again (RLlib keeps views of it)
    assert not np.shares_memory(new["observations"], obs["observations"])


@pytest.mark.parametrize("game", sorted(GAMES))
def test_reset_options_start_the_given_games(game):
    make, single = GAMES[game]
    vec = make({"num_envs": 2})
    obs, _ = vec.reset(seed=0, options={"game_seeds": [123, 5]})
    assert vec.game_seeds.tolist() == [123, 5]
    for i, g in enumerate((123, 5)):
        ref, _ = single().reset(seed=g)
        assert np.array_equal(obs["observations"][i], ref["observations"])
    with pytest.raises(ConfigError, match="game_seeds must list 2"):
        vec.reset(options={"game_seeds": [1]})
    with pytest.raises(ConfigError, match="only hold 'game_seeds'"):
        vec.reset(options={"game_seed": 1})
    vec.reset()
    unseeded = vec.game_seeds.copy()
    vec.reset()
    assert len(set(unseeded.tolist()) | set(vec.game_seeds.tolist())) == 4


@pytest.mark.parametrize("game", sorted(GAMES))
def test_illegal_action_names_the_sub_env_and_changes_nothing(game):
    make, single = GAMES[game]
    vec = make({"num_envs": 3})
    obs, _ = vec.reset(seed=3)
    actions = random_legal_actions(obs["action_mask"], np.random.default_rng(0))
    illegal = int(np.flatnonzero(obs["action_mask"][1] == 0)[-1])
    bad = actions.copy()
    bad[1] = illegal
    with pytest.raises(IllegalActionError, match=r"sub-env 1: ") as err:
        vec.step(bad)
    assert err.value.action == illegal
    assert vec.game.why_illegal(vec.sub_state(1), illegal) in str(err.value)
    bad[1] = vec.game.num_actions
    with pytest.raises(IllegalActionError, match=r"sub-env 1: outside the action space"):
        vec.step(bad)
    with pytest.raises(IllegalActionError, match="one per sub-env"):
        vec.step(actions[:2])
    obs, rewards, *_ = vec.step(actions)  # the failed steps applied nothing anywhere
    for i in range(3):
        env = single()
        env.reset(seed=3 + i)
        ref, reward, *_ = env.step(int(actions[i]))
        assert np.array_equal(obs["observations"][i], ref["observations"]) and rewards[i] == reward


@pytest.mark.parametrize("game", sorted(GAMES))
def test_bad_configs_fail_with_one_clear_line(game):
    make, _ = GAMES[game]
    with pytest.raises(ConfigError, match="reward must be one of"):
        make({"num_envs": 2, "reward": "margin"})
    with pytest.raises(ConfigError, match="num_envs is missing"):
        make({})
    with pytest.raises(ConfigError, match="num_envs must be an integer >= 1"):
        make({"num_envs": 0})
    with pytest.raises(ConfigError, match="solo games only" if game == "cartographers" else "players"):
        make({"num_envs": 2, "players": 7 if game == "dorfromantik" else 5})
    if game == "cascadia":
        with pytest.raises(ConfigError, match="unknown"):
            make({"num_envs": 2, "players": 2, "opponent": "no-such-agent"})
    with pytest.raises(ConfigError, match="illegal_action='raise'"):
        make({"num_envs": 2, "illegal_action": "penalize"})
    with pytest.raises(ConfigError, match="reset"):
        make({"num_envs": 2}).step(np.zeros(2, dtype=np.int64))
    assert make({"num_envs": 2, "reward": "score", "opponent": "greedy", "seat": 0}).num_envs == 2


@pytest.mark.parametrize("game", sorted(GAMES))
def test_vector_entry_point_as_rllib_registers_it(game):
    """RLlib 2.60's SingleAgentEnvRunner registers ``vector_entry_point=lambda num_envs:
    creator(env_config | {"num_envs": num_envs})`` and wraps ``gym.make_vec`` in DictInfoToList."""
    make, _ = GAMES[game]
    env_id = f"meeplelab-test/{game}-vector-v0"
    gym.register(env_id, entry_point=lambda: None,
                 vector_entry_point=lambda num_envs: make({} | {"num_envs": num_envs}))
    try:
        env = DictInfoToList(gym.make_vec(env_id, num_envs=5, vectorization_mode="vector_entry_point"))
    finally:
        del gym.registry[env_id]
    assert type(env.unwrapped).__name__.endswith("VectorEnv") and env.num_envs == 5
    obs, infos = env.reset(seed=0)
    assert infos == [{}] * 5
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(200):
        obs, _, terms, _, infos = env.step(random_legal_actions(obs["action_mask"], rng))
        ended += int(terms.sum())
        assert all(("score" in infos[i]) == bool(terms[i]) for i in range(5))
    assert ended > 0


def test_dorfromantik_vector_env_plays_team_games_only():
    with pytest.raises(ConfigError, match="team=True only"):
        make_dorfromantik({"num_envs": 2, "team": False})
    assert make_dorfromantik({"num_envs": 2, "team": True, "players": 2}).game.players == 2


def test_random_legal_actions_draws_every_legal_action_and_nothing_else():
    mask = np.zeros((3, 7), dtype=np.float32)
    mask[0, [1, 4, 6]] = 1.0
    mask[2, 3] = 1.0  # row 1 has no legal action (a finished game): 0, ignored by the next step
    rng = np.random.default_rng(0)
    drawn = np.array([random_legal_actions(mask, rng) for _ in range(300)])
    assert set(drawn[:, 0].tolist()) == {1, 4, 6}
    assert set(drawn[:, 1].tolist()) == {0} and set(drawn[:, 2].tolist()) == {3}
    assert min(np.bincount(drawn[:, 0])[[1, 4, 6]]) > 60  # about uniform (100 each expected)
