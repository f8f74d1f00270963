"""Network-guided PUCT (``mcts:value=ppo:...``): legal full games, determinism, budgets, leaf
values from the network and/or rollouts, the prior steering the visits, one-line option errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.base import make_agent
from agents.ppo.network import BoardPolicyValueNet, NetConfig
from agents.ppo.policy_file import save_policy
from agents.search.puct import PUCTSearch, puct_scores
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from experiments.common.runner import play_game

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
    # wall clock on a shared machine: the budget is 0.2 s, the 100,000 simulations would take minutes;
    # 1 s leaves room for a loaded core without letting a search that ignores the budget pass
    assert agent.last_stats["seconds"] < 1.0


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


def _assert_one_line_error(spec: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_agent(spec, make_game("cartographers"))
    message = str(caught.value)
    assert words in message and "\n" not in message


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
    ("value=ppo:{p},batch=0", "batch (leaves per forward pass) must be a positive integer, got 0"),
    ("value=ppo:{p},batch=-2", "must be a positive integer, got -2"),
    ("value=ppo:{p},batch=2.5", "must be a positive integer, got 2.5"),
    ("value=ppo:{p},batch=many", "must be a positive integer, got 'many'"),
    ("value=ppo:{p},batch=true", "must be a positive integer, got True"),
    ("batch=4", "batch belong(s) to the network-guided search"),
])
def test_bad_options_give_one_clear_line(carto_policy, options, words):
    _assert_one_line_error("mcts:" + options.format(p=carto_policy), words)


# ---- batched leaves (batch=k: virtual loss, one forward pass per network per round) ------------------


def _forward_calls(net: torch.nn.Module) -> list[int]:
    """A list that grows by one at every forward pass of ``net``."""
    calls: list[int] = []
    net.register_forward_pre_hook(lambda module, args: calls.append(1))
    return calls


def test_batch_1_is_the_unbatched_search(carto_policy):
    game = make_game("cartographers")
    state = _position(game)
    runs = []
    for extra in ({}, {"batch": 1}):
        spec = puct_spec(carto_policy, simulations=24, value_weight=0.5, noise=0.25, **extra)
        agent = make_agent(spec, game)
        action = agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(5))
        runs.append((action, agent.last_stats["visits"], agent.last_stats["best_mean"]))
    assert agent._puct.batch == 1
    assert runs[0] == runs[1]


@pytest.mark.parametrize("name, options, batch", [
    ("cartographers", {"players": 1}, 4), ("cartographers", {"players": 1}, 8),
    pytest.param("cascadia", {"players": 2}, 8, marks=pytest.mark.slow)])
def test_batched_full_games_are_legal_and_deterministic(tmp_path, name, options, batch):
    path = tiny_policy(tmp_path / "policy.pt", name, **options)
    game = make_game(name, **options)
    specs = [puct_spec(path, simulations=8, value_weight=0.5, batch=batch)] * game.num_players()
    played = []
    for _ in range(2):
        actions: list[int] = []

        def legal(state, seat, action, actions=actions):
            assert game.legal_mask(state)[action], (seat, action)
            actions.append(action)

        record = play_game(game, specs, seed=2, on_step=legal)
        played.append((actions, record.totals))
    assert played[0] == played[1] and len(played[0][0]) > 10


@pytest.mark.parametrize("weight", [1, 0.5])
def test_batched_search_counts_simulations_and_is_deterministic(carto_policy, weight):
    game = make_game("cartographers")
    state = _position(game)
    runs = []
    for batch in (8, 8, 1):
        agent = make_agent(puct_spec(carto_policy, simulations=30, value_weight=weight, batch=batch), game)
        action = agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(5))
        visits = agent.last_stats["visits"]
        assert game.legal_mask(state)[action]
        assert sum(visits.values()) == agent.last_stats["simulations"] == 30
        runs.append((action, visits, agent.last_stats["best_mean"]))
    assert runs[0] == runs[1]
    assert runs[0][1] != runs[2][1]  # virtual loss spreads a round's visits: another search than batch=1


@pytest.mark.parametrize("batch, most", [(1, 33), (8, 5)])
def test_a_batch_needs_one_forward_pass_per_round(tmp_path, carto_policy, batch, most):
    game = make_game("cartographers")
    state = _position(game)
    other = tiny_policy(tmp_path / "other.pt", "cartographers", seed=1)
    agent = make_agent(f"{puct_spec(carto_policy, simulations=32, batch=batch)},prior=ppo:{other}", game)
    value_calls = _forward_calls(agent._puct.evaluate.value_net)
    prior_calls = _forward_calls(agent._puct.evaluate.prior_net)
    agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(0))
    assert agent.last_stats["simulations"] == 32
    assert len(value_calls) <= most and len(prior_calls) <= most  # the root's expansion + one per round
    if batch == 1:
        assert len(value_calls) == len(prior_calls) == 33


@pytest.mark.parametrize("weight, two_nets", [(1, False), (1, True), (0, True)])
def test_many_positions_in_one_pass_match_one_at_a_time(tmp_path, carto_policy, weight, two_nets):
    game = make_game("cascadia", players=2)
    path = tiny_policy(tmp_path / "value.pt", "cascadia", players=2)
    other = tiny_policy(tmp_path / "prior.pt", "cascadia", players=2, seed=1) if two_nets else path
    agent = make_agent(f"{puct_spec(path, batch=4, value_weight=weight)},prior=ppo:{other}", game)
    evaluate = agent._puct.evaluate
    states = [_position(game, seed=s, moves=m) for s, m in ((1, 0), (2, 3), (3, 5))]
    leaves = [(s, game.legal_mask(s), game.current_player(s), wants)
              for s, wants in zip(states, (True, False, True), strict=True)]
    together = evaluate.many(leaves, values=weight > 0)
    for (state, mask, player, wants), (logits, gain) in zip(leaves, together, strict=True):
        one_logits, one_gain = evaluate(state, mask, player, values=weight > 0)
        assert (logits is not None) == wants
        if wants:
            np.testing.assert_allclose(logits, one_logits, rtol=1e-4, atol=1e-4)
        if weight > 0:
            assert gain.shape == (2,)
            np.testing.assert_allclose(gain, one_gain, rtol=1e-4, atol=1e-4)
        else:
            assert gain is None


def test_paths_of_a_round_on_the_same_new_node_share_it():
    game = make_game("cartographers")
    state = _position(game)
    mask = game.legal_mask(state)
    favourite = int(np.flatnonzero(mask)[-1])
    search = PUCTSearch(game, _FavouriteAction(game, favourite), simulations=16, value_weight=1.0, batch=8)
    root, sims = search._search(state, mask, np.flatnonzero(mask), game.current_player(state), 7, 0.0,
                                np.random.default_rng(0))
    assert sims == 16
    favourite_slot = int(root.slot[favourite])
    child = root.kids[favourite_slot]
    assert child is not None and root.visits[favourite_slot] >= 8  # a whole round went the prior's way

    def check(node):  # no virtual loss is left, and every child's visits are its parent's count of it
        assert node.pending == 0 and not node.virtual.any()
        for slot, kid in enumerate(node.kids):
            if kid is not None:
                assert kid.n == node.visits[slot]
                check(kid)

    check(root)
    assert root.n == 1 + sims


def test_a_batched_time_limit_counts_whole_rounds(carto_policy):
    game = make_game("cartographers")
    state = _position(game)
    agent = make_agent(puct_spec(carto_policy, simulations="none", time_limit=0.2, batch=4), game)
    agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(0))
    sims = agent.last_stats["simulations"]
    assert sims > 0 and sims % 4 == 0 and agent.last_stats["seconds"] < 0.5
