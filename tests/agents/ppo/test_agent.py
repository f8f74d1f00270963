"""The ppo: agent: loads with torch alone, plays every game, refuses bad checkpoints in one line."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from agents.base import make_agent
from agents.ppo.network import BoardPolicyValueNet, NetConfig
from agents.ppo.policy_file import save_policy
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from experiments.common.runner import play_game

SMALL = NetConfig(width=8, blocks=1, vector_hidden=8, head_hidden=8)


def write_policy(path, name, **options):
    game = make_game(name, **options)
    torch.manual_seed(0)
    net = BoardPolicyValueNet(game.layout(), SMALL)
    return save_policy(path, net, game, options), net


@pytest.mark.parametrize("name, options", [
    ("cartographers", {"players": 1}), ("cartographers", {"players": 2}),
    ("cascadia", {"players": 2}), ("dorfromantik", {"players": 1})])
def test_plays_full_games_with_legal_moves(tmp_path, name, options):
    path, _ = write_policy(tmp_path / "policy.pt", name, **options)
    game = make_game(name, **options)
    specs = [f"ppo:{path}"] * game.num_players()
    first = play_game(game, specs, seed=5)
    again = play_game(game, specs, seed=5)
    assert first.totals == again.totals  # argmax play is deterministic
    assert sum(first.decisions) > 0


def test_round_trip_gives_the_same_network(tmp_path):
    path, net = write_policy(tmp_path / "run", "cartographers", players=1)
    assert path.name == "policy.pt" and path.parent.name == "run"
    game = make_game("cartographers")
    agent = make_agent(f"ppo:{tmp_path / 'run'}", game)
    state = game.new_game(2)
    obs = torch.from_numpy(game.observation(state, 0))[None]
    mask = game.legal_mask(state)
    mask_t = torch.from_numpy(mask.astype(np.float32))[None]
    with torch.no_grad():
        assert torch.equal(agent.net(obs, mask_t)[0], net(obs, mask_t)[0])
    probs, _ = agent.policy(state, mask)
    assert probs[~mask].max() == 0.0 and abs(probs.sum() - 1.0) < 1e-5
    best = int(np.flatnonzero(mask)[np.argmax(probs[mask])])
    assert agent.act(state, mask, np.random.default_rng(0)) == best


def test_a_decision_runs_torch_on_one_thread_and_restores_the_count(tmp_path):
    path, _ = write_policy(tmp_path / "policy.pt", "cartographers", players=1)
    game = make_game("cartographers")
    agent = make_agent(f"ppo:{path}", game)
    seen = []
    agent.net.register_forward_pre_hook(lambda module, args: seen.append(torch.get_num_threads()))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        state = game.new_game(1)
        agent.act(state, game.legal_mask(state), np.random.default_rng(0))
        assert seen == [1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_sampling_agent_uses_the_seat_rng(tmp_path):
    path, _ = write_policy(tmp_path / "policy.pt", "cartographers", players=1)
    game = make_game("cartographers")
    agent = make_agent(f"ppo:{path},sample=true,temperature=5", game)
    state = game.new_game(4)
    mask = game.legal_mask(state)
    picks = {agent.act(state, mask, np.random.default_rng(s)) for s in range(30)}
    assert len(picks) > 1 and all(mask[a] for a in picks)
    same_seed = [agent.act(state, mask, np.random.default_rng(7)) for _ in range(2)]
    assert same_seed[0] == same_seed[1]


def test_loads_and_plays_without_ray(tmp_path):
    path, _ = write_policy(tmp_path / "policy.pt", "cartographers", players=1)
    code = (
        "import sys\n"
        "from envs.core.registry import make_game\n"
        "from experiments.common.runner import play_game\n"
        f"r = play_game(make_game('cartographers'), ['ppo:{path}'], seed=1)\n"
        "assert sum(r.decisions) > 0\n"
        "print('ray' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_bad_checkpoints_fail_in_one_line(tmp_path):
    game = make_game("cartographers")
    with pytest.raises(ConfigError, match="does not exist"):
        make_agent(f"ppo:{tmp_path / 'missing.pt'}", game)
    with pytest.raises(ConfigError, match="no policy.pt"):
        make_agent(f"ppo:{tmp_path}", game)
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a torch file at all")
    with pytest.raises(ConfigError, match="corrupt or not a meeplelab policy"):
        make_agent(f"ppo:{corrupt}", game)
    other, _ = write_policy(tmp_path / "cascadia.pt", "cascadia", players=1)
    with pytest.raises(ConfigError, match="trained for cascadia, not cartographers"):
        make_agent(f"ppo:{other}", game)
    three, _ = write_policy(tmp_path / "three.pt", "cartographers", players=3)
    with pytest.raises(ConfigError, match="trained for 3 player"):
        make_agent(f"ppo:{three}", game)
    with pytest.raises(ConfigError, match="temperature"):
        make_agent(f"ppo:{three},temperature=0", make_game("cartographers", players=3))
    with pytest.raises(ConfigError, match="needs a checkpoint"):
        make_agent("ppo", game)


def test_play_cli_names_a_missing_checkpoint(tmp_path, capsys):
    from experiments.cli.main import run

    code = run(["play", "cartographers", "--agent", f"ppo:{tmp_path / 'nope.pt'}", "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert "does not exist" in err and len(err.strip().splitlines()) == 1


def test_network_prior_orders_the_mcts_widening(tmp_path):
    from agents.search.mcts import MCTSAgent

    path, _ = write_policy(tmp_path / "policy.pt", "cartographers", players=1)
    game = make_game("cartographers")
    network = make_agent(f"ppo:{path}", game)
    state = game.new_game(8)
    mask = game.legal_mask(state)
    ranked = network.rank_actions(state, mask)
    probs, _ = network.policy(state, mask)
    assert set(ranked) == set(np.flatnonzero(mask)) and np.all(np.diff(probs[ranked]) <= 0)
    search = make_agent(f"mcts:simulations=4,prior=ppo:{path},widening=1/0.4", game)
    assert isinstance(search, MCTSAgent)
    record = play_game(game, [f"mcts:simulations=4,prior=ppo:{path},widening=1/0.4"], seed=8)
    assert sum(record.decisions) > 0
    with pytest.raises(ConfigError, match="engine=python"):
        make_agent(f"mcts:engine=compiled,prior=ppo:{path}", game)
