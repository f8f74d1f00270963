"""Network-guided PUCT (``mcts:value=ppo:...``): legal full games, determinism, budgets, leaf
values from the network and/or rollouts, the prior steering the visits, one-line option errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.base import make_agent
from agents.ppo.network import BoardPolicyValueNet, NetConfig
from agents.ppo.policy_file import save_policy
from agents.puct import PUCTSearch, puct_scores
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from experiments.runner import play_game

TINY = NetConfig(width=8, blocks=1, vector_hidden=8, head_hidden=8)


def tiny_policy(path, name: str, seed: int = 0, **options):
    """A random-init network for ``name`` saved at ``path`` (a policy.pt)."""
    game = make_game(name, **options)
    torch.manual_seed(seed)
    return save_policy(path, BoardPolicyValueNet(game.layout(), TINY), game, options)


def puct_spec(path, **options) -> str:
    extra = "".join(f",{k}={v}" for k, v in options.items())
    return f"mcts:value=ppo:{path}{extra}"


def _position(game, seed: int = 3, moves: int = 2):
    state = game.new_game(seed)
    for _ in range(moves):
        game.step(state, int(np.flatnonzero(game.legal_mask(state))[0]))
    return state


@pytest.fixture(scope="module")
def carto_policy(tmp_path_factory):
    return tiny_policy(tmp_path_factory.mktemp("puct") / "policy.pt", "cartographers")


@pytest.mark.parametrize("name, options, simulations", [
    ("cartographers", {"players": 1}, 6), ("cascadia", {"players": 2}, 4),
    ("dorfromantik", {"players": 1}, 3)])
def test_full_games_take_legal_actions_only(tmp_path, name, options, simulations):
    path = tiny_policy(tmp_path / "policy.pt", name, **options)
    game = make_game(name, **options)
    specs = [puct_spec(path, simulations=simulations, value_weight=0.5)] * game.num_players()

    def legal(state, seat, action):
        assert game.legal_mask(state)[action], (seat, action)

    record = play_game(game, specs, seed=2, on_step=legal)
    assert game.num_players() == len(record.totals) and sum(record.decisions) > 10


def test_a_short_cartographers_game_is_legal_and_counts_its_simulations(carto_policy):
    game = make_game("cartographers")
    agent = make_agent(puct_spec(carto_policy, simulations=3), game)
    state = game.new_game(1)
    rng = np.random.default_rng(0)
    for _ in range(6):
        mask = game.legal_mask(state)
        action = agent.act(state, mask, rng)
        assert mask[action]
        if not agent.last_stats.get("forced"):
            visits = agent.last_stats["visits"]
            assert sum(visits.values()) == agent.last_stats["simulations"] == 3
            assert all(mask[a] for a in visits) and visits[action] == max(visits.values())
        game.step(state, action)


def test_fixed_seed_and_simulations_give_the_same_search(carto_policy):
    game = make_game("cartographers")
    state = _position(game)
    runs = []
    for _ in range(2):
        agent = make_agent(puct_spec(carto_policy, simulations=24, value_weight=0.5, noise=0.25), game)
        action = agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(5))
        runs.append((action, agent.last_stats["visits"], agent.last_stats["best_mean"]))
    assert runs[0] == runs[1]
    other = make_agent(puct_spec(carto_policy, simulations=24, value_weight=0.5, noise=0.25), game)
    other.act(state.copy(), game.legal_mask(state), np.random.default_rng(6))
    assert (other.last_stats["visits"], other.last_stats["best_mean"]) != runs[0][1:]


def test_time_limit_is_an_anytime_budget(carto_policy):
    game = make_game("cartographers")
    state = _position(game)
    agent = make_agent(puct_spec(carto_policy, simulations=100000, time_limit=0.2), game)
    agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(0))
    assert 0 < agent.last_stats["simulations"] < 100000
    assert agent.last_stats["seconds"] < 0.5


@pytest.mark.parametrize("weight, rollouts", [(1, 0), (0, 9), (0.5, 9)])
def test_value_weight_decides_whether_leaves_are_rolled_out(carto_policy, weight, rollouts):
    game = make_game("cartographers")
    state = _position(game)
    calls = []
    real = game.rollout_returns

    def counted(s, seed, policy="random"):
        calls.append(seed)
        return real(s, seed, policy)

    game.rollout_returns = counted
    agent = make_agent(puct_spec(carto_policy, simulations=8, value_weight=weight), game)
    action = agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(0))
    assert game.legal_mask(state)[action]
    assert len(calls) == rollouts  # the root's expansion and one leaf per simulation
    assert agent.last_stats["simulations"] == 8


class _FavouriteAction:
    """An evaluator whose prior puts nearly all mass on one action and whose values are flat."""

    def __init__(self, game, favourite: int):
        self.game, self.favourite = game, favourite

    @staticmethod
    def one_thread():
        import contextlib

        return contextlib.nullcontext()

    def __call__(self, state, mask, player, values=True):
        logits = np.zeros(self.game.num_actions, dtype=np.float32)
        logits[self.favourite] = 12.0
        return logits, np.zeros(self.game.num_players()) if values else None


@pytest.mark.parametrize("weight", [0.0, 1.0])
def test_a_concentrated_prior_gets_the_visits(weight):
    game = make_game("cartographers")
    state = _position(game)
    mask = game.legal_mask(state)
    favourite = int(np.flatnonzero(mask)[-1])  # the last legal action: no search picks it by accident
    search = PUCTSearch(game, _FavouriteAction(game, favourite), simulations=6, value_weight=weight)
    assert search.act(state.copy(), mask, np.random.default_rng(0)) == favourite
    assert search.last_stats["visits"][favourite] >= 4


def test_selection_trades_prior_against_value():
    prior = np.array([0.7, 0.2, 0.1])
    q = np.array([0.5, 0.5, 0.5])
    assert np.argmax(puct_scores(prior, np.zeros(3), q, 1.5)) == 0  # the first visit follows the prior
    visits = np.array([10.0, 0.0, 0.0])
    assert np.argmax(puct_scores(prior, visits, q, 1.5)) == 1  # a visited action's bonus shrinks
    assert np.argmax(puct_scores(prior, visits, np.array([0.5, 0.9, 0.5]), 0.0)) == 1  # c_puct 0: greedy on Q


def test_the_value_network_is_the_prior_unless_another_is_given(tmp_path, carto_policy):
    game = make_game("cartographers")
    same = make_agent(f"{puct_spec(carto_policy)},prior=ppo:{carto_policy}", game)
    assert same._puct.evaluate.prior_net is same._puct.evaluate.value_net
    other = tiny_policy(tmp_path / "other.pt", "cartographers", seed=1)
    two = make_agent(f"{puct_spec(carto_policy, simulations=4)},prior=ppo:{other}", game)
    assert two._puct.evaluate.prior_net is not two._puct.evaluate.value_net
    state = _position(game)
    assert game.legal_mask(state)[two.act(state.copy(), game.legal_mask(state), np.random.default_rng(0))]


def test_explanations_list_visits_values_and_priors(carto_policy):
    game = make_game("cartographers")
    state = _position(game)
    agent = make_agent(puct_spec(carto_policy, simulations=8), game)
    agent.explaining = True
    action = agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(0))
    found = agent.last_explanation
    assert found["kind"] == "puct" and found["chosen"] == action and found["simulations"] == 8
    assert found["candidates"][0]["action"] == action
    assert all(0 <= c["prior"] <= 1 for c in found["candidates"])


@pytest.mark.parametrize("options, words", [
    ("value=greedy", "value must be 'ppo:<checkpoint>'"),
    ("value=ppo:{p},engine=compiled", "use engine=python"),
    ("value=ppo:{p},prior=greedy", "prior is a network"),
    ("value=ppo:{p},paired=true,widening=1/0.4", "widening, paired belong(s) to the UCT search"),
    ("value=ppo:{p},c=1", "c belong(s) to the UCT search"),
    ("c_puct=2", "c_puct belong(s) to the network-guided search"),
    ("value=ppo:{p},value_weight=2", "value_weight must be in [0, 1]"),
    ("value=ppo:{p},noise=1", "noise (root Dirichlet fraction) must be in [0, 1)"),
    ("value=ppo:{p},c_puct=-1", "c_puct must be >= 0"),
    ("value=ppo:/no/such/policy.pt", "does not exist"),
])
def test_bad_options_give_one_clear_line(carto_policy, options, words):
    game = make_game("cartographers")
    with pytest.raises(ConfigError) as caught:
        make_agent("mcts:" + options.format(p=carto_policy), game)
    message = str(caught.value)
    assert words in message and "\n" not in message
