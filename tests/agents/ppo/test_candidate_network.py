"""The candidate-scoring network: its config, the init that plays the linear model's moves, masking,
policy.pt round trips and refusals, and the ppo: agent playing candidate networks without Ray."""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import numpy as np
import pytest
import torch

import envs  # noqa: F401  (registers the env ids)
from agents.ppo.candidate_network import CandidateNetConfig, CandidateScoringNet
from agents.ppo.policy_file import save_policy
from envs.core.errors import ConfigError
from envs.core.policies import candidate_view
from envs.core.registry import make_game
from experiments.train.candidates import initial_theta
from tests.paths import REPO_ROOT

MODELS = {"cartographers": "models/cartographers_solo/model.json",
          "cascadia": "models/cascadia_solo/model.json", "dorfromantik": "models/dorfromantik/model.json"}
SMALL = CandidateNetConfig(hidden=8, layers=1)


def make_net(game: str, init: str = "greedy", config: CandidateNetConfig = SMALL) -> CandidateScoringNet:
    view = candidate_view(game)
    theta = initial_theta({"game": game, "network": {"init": init}})
    return CandidateScoringNet(len(view.feature_names), len(view.context_names), view.n_phases, config, theta)


def positions(game: str, count: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Observations of the candidate env along games played by greedy (row 0)."""
    env = gymnasium.make(f"meeplelab/{game.capitalize()}-v0", action_space="candidates").unwrapped
    obs, _ = env.reset(seed=seed)
    out = []
    while len(out) < count:
        out.append(obs)
        obs, _, terminated, _, _ = env.step(0)
        if terminated:
            seed += 1
            obs, _ = env.reset(seed=seed)
    return out


def tensors(obs: dict[str, np.ndarray]) -> tuple[torch.Tensor, ...]:
    return tuple(torch.from_numpy(obs[k])[None] for k in ("candidates", "candidate_mask", "context"))


@pytest.mark.parametrize("values, fragment", [
    ({"hidden": 0}, "network.hidden"), ({"layers": 9}, "network.layers"),
    ({"depth": 2}, "unknown key.*depth"),
    ({"temperature": 0}, "network.temperature"), ({"value_scale": True}, "network.value_scale"),
    ({"init": ""}, "network.init")])
def test_config_errors_name_the_key(values, fragment):
    with pytest.raises(ConfigError, match=fragment):
        CandidateNetConfig.from_dict(values)


@pytest.mark.parametrize("game", sorted(MODELS))
def test_at_init_the_argmax_is_the_linear_models_pick(game):
    """200 positions of greedy games: the untrained network picks a row of the best linear value
    under the model.json it starts from (the first such row; float32 ties aside), and with greedy
    weights it picks row 0, greedy's move."""
    net, greedy_net = make_net(game, MODELS[game]), make_net(game)
    theta = initial_theta({"game": game, "network": {"init": MODELS[game]}})
    for obs in positions(game, 200):
        n = int(obs["candidate_mask"].sum())
        phase = int(np.argmax(obs["context"][3:]))
        values = obs["candidates"][:n].astype(np.float64) @ theta[phase]
        with torch.no_grad():
            logits, value = net(*tensors(obs))
            greedy_logits, _ = greedy_net(*tensors(obs))
        pick = int(logits[0].argmax())
        assert pick < n and values[pick] >= values.max() - 1e-4 * max(1.0, abs(values.max()))
        greedy_values = obs["candidates"][:n].astype(np.float64) @ candidate_view(game).greedy_theta[phase]
        greedy_pick = int(greedy_logits[0].argmax())
        assert greedy_values[greedy_pick] >= greedy_values[0] - 1e-4 * max(1.0, abs(greedy_values[0]))
        assert bool((logits[0, n:] < -1e30).all()) and torch.isfinite(value).all()


def test_perturbed_network_never_samples_a_masked_candidate():
    from agents.ppo.distribution import MaskedCategorical

    torch.manual_seed(0)
    net = make_net("cartographers")
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 3.0)
    rng = np.random.default_rng(0)
    obs = positions("cartographers", 8)
    batch = {k: torch.from_numpy(np.stack([o[k] for o in obs])) for k in obs[0]}
    for _ in range(50):
        mask = torch.from_numpy((rng.random(batch["candidate_mask"].shape) < 0.05).astype(np.float32))
        one = torch.from_numpy(rng.integers(0, mask.shape[1], mask.shape[0]))
        mask[torch.arange(mask.shape[0]), one] = 1.0  # at least one candidate per row
        with torch.no_grad():
            logits, _ = net(batch["candidates"], mask, batch["context"])
        picks = MaskedCategorical(logits=logits).sample(sample_shape=(20,))
        assert bool((mask.gather(1, picks.T) == 1.0).all())


def test_rl_module_masks_and_values_real_observations():
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.ppo.rl_module import MaskedCandidatePPOModule

    env = gymnasium.make("meeplelab/Dorfromantik-v0", action_space="candidates",
                         max_candidates=16).unwrapped
    theta = initial_theta({"game": "dorfromantik", "network": {"init": "greedy"}})
    module = RLModuleSpec(module_class=MaskedCandidatePPOModule,
                          observation_space=env.observation_space, action_space=env.action_space,
                          model_config={"net": {"type": "candidates", **SMALL.as_dict()},
                                        "theta": theta.tolist()}).build()
    obs, _ = env.reset(seed=1)
    for _ in range(40):
        batch = {Columns.OBS: {k: torch.from_numpy(v)[None] for k, v in obs.items()}}
        logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
        action = int(module.get_exploration_action_dist_cls().from_logits(logits).sample()[0])
        assert obs["candidate_mask"][action] == 1.0
        assert int(logits[0].argmax()) == 0  # greedy theta at init: greedy's move, row 0
        assert module.compute_values(batch).shape == (1,)
        obs, _, terminated, _, _ = env.step(action)
        if terminated:
            obs, _ = env.reset(seed=2)


def test_policy_file_round_trip_gives_the_same_logits(tmp_path):
    from agents.base import make_agent

    torch.manual_seed(0)
    net = make_net("cascadia", MODELS["cascadia"])
    with torch.no_grad():
        for p in net.policy_mlp.parameters():
            p.add_(torch.randn_like(p))
    game = make_game("cascadia")
    path = save_policy(tmp_path / "run", net, game, {"players": 1}, {"iteration": 3}, max_candidates=64)
    agent = make_agent(f"ppo:{tmp_path / 'run'}", game)
    assert agent.payload["network"] == "candidates" and agent.max_candidates == 64 and path.is_file()
    for obs in positions("cascadia", 5):
        with torch.no_grad():
            assert torch.equal(agent.net(*tensors(obs))[0], net(*tensors(obs))[0])
    assert torch.equal(agent.net.theta, net.theta)


def test_bad_candidate_policy_files_fail_in_one_line(tmp_path):
    from agents.base import make_agent

    game = make_game("cartographers")
    path = save_policy(tmp_path / "policy.pt", make_net("cartographers"), game, {"players": 1})
    payload = torch.load(path, weights_only=True)
    broken = {"features.pt": {**payload, "feature_names": payload["feature_names"][:-1]},
              "weights.pt": {**payload,
                             "state_dict": {k: v[..., :3] for k, v in payload["state_dict"].items()}},
              "missing.pt": {k: v for k, v in payload.items() if k != "context_size"}}
    for name, bad in broken.items():
        torch.save(bad, tmp_path / name)
    (tmp_path / "corrupt.pt").write_bytes(path.read_bytes()[:200])
    cases = [("features.pt", game, "candidate features do not match"),
             ("weights.pt", game, "weights do not fit"), ("missing.pt", game, "without its feature names"),
             ("corrupt.pt", game, "corrupt"),
             ("policy.pt", make_game("dorfromantik"), "trained for cartographers"),
             ("policy.pt", make_game("cartographers", players=2), "1 player")]
    for name, g, fragment in cases:
        with pytest.raises(ConfigError, match=fragment) as info:
            make_agent(f"ppo:{tmp_path / name}", g)
        assert "\n" not in str(info.value), name


PLAY_SCRIPT = """
import sys
import numpy as np, torch
import agents
from agents.base import make_agent
from agents.ppo.candidate_network import CandidateNetConfig, CandidateScoringNet
from agents.ppo.policy_file import save_policy
from envs.core.policies import candidate_view
from envs.core.registry import make_game
from experiments.common.runner import play_game
out = sys.argv[1]
for name, players in (("cartographers", 1), ("cartographers", 3), ("cascadia", 1), ("cascadia", 2),
                      ("dorfromantik", 1)):
    view, game = candidate_view(name), make_game(name, players=players)
    torch.manual_seed(0)
    net = CandidateScoringNet(len(view.feature_names), len(view.context_names), view.n_phases,
                              CandidateNetConfig(hidden=8, layers=1), view.greedy_theta)
    with torch.no_grad():
        for p in net.policy_mlp.parameters():
            p.add_(0.1 * torch.randn_like(p))
    path = save_policy(f"{out}/{name}{players}.pt", net, game, {"players": players})
    record = play_game(game, [f"ppo:{path}"] * players, seed=4)
    sampled = play_game(game, [f"ppo:{path},sample=true,temperature=2"] * players, seed=4)
    assert sum(record.decisions) > 0 and sum(sampled.decisions) > 0
    print(name, players, record.totals)
assert not any(m == "ray" or m.startswith("ray.") for m in sys.modules), "ray was imported"
print("no ray")
"""


def test_ppo_agent_plays_candidate_networks_without_ray(tmp_path):
    """Full games of every game (Cartographers ambushes, Cascadia whole turns) in a fresh process
    that never imports Ray."""
    proc = subprocess.run([sys.executable, "-c", PLAY_SCRIPT, str(tmp_path)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("no ray")


@pytest.mark.parametrize("game, model", [("cartographers", "cartographers_solo"),
                                         ("cascadia", "cascadia_solo")])
def test_untrained_candidate_agent_plays_the_learned_models_games(tmp_path, game, model):
    """Initialised from a model.json, the ppo: agent plays the same game as ``learned:`` that model."""
    from experiments.common.runner import play_game

    g = make_game(game)
    net = make_net(game, f"models/{model}/model.json")
    path = save_policy(tmp_path / "policy.pt", net, g, {"players": 1})
    mine = play_game(g, [f"ppo:{path}"], seed=1)
    assert mine.totals == play_game(g, [f"learned:models/{model}"], seed=1).totals


def test_rank_actions_puts_the_networks_pick_first_and_search_refuses_it_as_a_value(tmp_path):
    from agents.base import make_agent
    from agents.ppo.agent import PPOAgent

    g = make_game("cartographers")
    path = save_policy(tmp_path / "policy.pt", make_net("cartographers"), g, {"players": 1})
    agent = make_agent(f"ppo:{path}", g)
    state = g.new_game(3)
    mask = np.asarray(g.legal_mask(state), dtype=bool)
    ranked = agent.rank_actions(state, mask)
    assert sorted(ranked.tolist()) == np.flatnonzero(mask).tolist()
    assert ranked[0] == agent.act(state, mask, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="is a candidate network"):
        PPOAgent(g, path=str(path))
