"""meeplelab train --algo expert-iteration: configs, soft targets, a generation end to end, gating, resume."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
import yaml

from envs.core.errors import ConfigError
from experiments.train.exit_config import validate_config
from tests.experiments.train.test_ppo import scalars
from tests.paths import REPO_ROOT

REPO = REPO_ROOT
TINY_NET = {"width": 8, "blocks": 1, "vector_hidden": 8, "head_hidden": 8}
TINY_SEARCH = "mcts:prior=ppo:{policy},value=ppo:{policy},simulations=4,value_weight=0.5,rollout=greedy"
DEMO_POLICY = REPO / "models" / "cartographers_solo" / "policy.pt"


def tiny_config(**sections) -> dict:
    raw = {"name": "tiny-exit", "game": "cartographers", "game_options": {"players": 1}, "network": TINY_NET,
           "search": TINY_SEARCH,
           "selfplay": {"games": 2, "top_k": 4, "window": 2, "workers": 2, "noise": 0.25},
           "train": {"epochs": 2, "batch_size": 32},
           "gating": {"games": 2, "workers": 2},
           "run": {"generations": 1, "eval_every": 1, "eval_games": 2, "num_cpus": 2},
           "imitation": {"games": 4, "epochs": 1, "workers": 2}}
    for key, value in sections.items():
        raw[key] = {**raw.get(key, {}), **value} if isinstance(value, dict) else value
    return validate_config(raw)


# ---- configs --------------------------------------------------------------------------------

@pytest.mark.parametrize("change, fragment", [
    ({"selfplay": {"games": 0}}, "selfplay.games must be an integer"),
    ({"selfplay": {"topk": 3}}, "unknown key.*selfplay.topk"),
    ({"train": {"lr": "fast"}}, "train.lr must be a number"),
    ({"gating": {"enabled": "yes"}}, "gating.enabled must be true or false"),
    ({"gating": {"games": 1}}, "gating.games"),
    ({"run": {"generations": 0}}, "run.generations"),
    ({"imitation": {"lr": -1}}, "imitation.lr must be positive"),
    ({"network": {"width": 0}}, "network.width"),
    ({"search": "greedy"}, "search must be an agent spec with a {policy} placeholder"),
    ({"init": "greedy"}, "init: --init must look like"),
    ({"league": {}}, "unknown section"),
    ({"imitation": {"teacher": "greedy"}}, "init: teacher:<agent spec>"),
    ({"selfplay": {"noise": 1}}, "selfplay.noise"),
    ({"gating": {"confirm_games": -1}}, "gating.confirm_games must be an integer"),
    ({"gating": {"confirm_games": 1}}, "gating.confirm_games must be 0 .no confirmation. or at least 2"),
    ({"gating": {"games": 6_000, "confirm_games": 5_000}},
     r"gating.games \+ gating.confirm_games must be at most 10000"),
])
def test_bad_configs_name_the_key(change, fragment):
    raw = {"game": "cartographers", "search": TINY_SEARCH, **change}
    with pytest.raises(ConfigError, match=fragment.replace("{", r"\{").replace("}", r"\}")):
        validate_config(raw)


def test_shipped_configs_validate():
    from experiments.train.exit_config import load_config

    paths = sorted((REPO / "configs" / "exit").glob("*.yaml"))
    assert len(paths) >= 1
    for path in paths:
        config = load_config(path)
        assert "{policy}" in config["search"] and config["run"]["num_cpus"] <= 2, path


# ---- data and fit ---------------------------------------------------------------------------

def test_seed_ranges_are_disjoint():
    from experiments.train.exit_data import GATING, SELFPLAY, generation_seeds

    kinds = [set(generation_seeds(s, g, k, 10_000))
             for s in (0, 1) for g in (0, 1, 9_999) for k in (SELFPLAY, GATING)]
    union = set().union(*kinds)
    assert len(union) == sum(len(k) for k in kinds)
    assert min(union) > 10_000_000 + 100_000 * 1 + 10_000  # above eval, test and imitation seeds


def test_forced_move_and_visits_become_soft_targets():
    from agents.search.mcts import MCTSAgent
    from envs.core.registry import make_game
    from experiments.train.imitation import search_target

    game = make_game("cartographers")
    agent = MCTSAgent(game, simulations=12, rollout="greedy", widening="2/0.5")
    state = game.new_game(3)
    mask = np.asarray(game.legal_mask(state), dtype=bool)
    action = agent.act(state, mask, np.random.default_rng(0))
    actions, probs = search_target(agent, np.flatnonzero(mask), 2)
    visits = agent.last_stats["visits"]
    assert actions[0] == max(visits, key=visits.get) and mask[actions].all()
    assert probs.sum() == pytest.approx(1.0) and probs[0] >= probs[1] > 0
    assert action in visits
    only = np.zeros_like(mask)
    only[np.flatnonzero(mask)[5]] = True
    forced = agent.act(state, only, np.random.default_rng(0))
    actions, probs = search_target(agent, np.flatnonzero(only), 3)
    assert actions.tolist() == [forced, -1, -1] and probs.tolist() == [1.0, 0.0, 0.0]


def test_soft_target_fit_lowers_its_loss_and_one_hot_is_cross_entropy():
    from torch.nn import functional as F

    from agents.ppo.network import BoardPolicyValueNet, NetConfig, masked_logits
    from envs.core.registry import make_game
    from experiments.train.imitation import Demonstrations, fit, play_teacher_games, soft_cross_entropy

    data = play_teacher_games("cartographers", {"players": 1}, "greedy", list(range(2)))
    n = len(data)
    masks = np.unpackbits(data.masks, axis=1, count=11374).astype(bool)
    other = np.array([np.flatnonzero(m & (np.arange(m.size) != a))[0] for m, a in zip(masks, data.actions,
                                                                                          strict=True)])
    soft = Demonstrations(data.observations, data.masks, data.actions, data.returns, data.games,
                          target_actions=np.stack([data.actions, other, np.full(n, -1)], axis=1),
                          target_probs=np.tile(np.float32([0.75, 0.25, 0.0]), (n, 1)))
    game = make_game("cartographers")
    torch.manual_seed(0)
    net = BoardPolicyValueNet(game.layout(), NetConfig(**TINY_NET))
    legal = torch.from_numpy(masks[:8].astype(np.float32))
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(soft.observations[:8]), legal)
    masked = masked_logits(logits, legal)
    one_hot = soft_cross_entropy(masked, torch.from_numpy(np.stack([data.actions[:8], other[:8]], 1)),
                                 torch.tensor([[1.0, 0.0]] * 8))
    assert float(one_hot) == pytest.approx(float(F.cross_entropy(masked, torch.from_numpy(data.actions[:8]))),
                                           rel=1e-5)
    history = fit(net, soft, epochs=4, batch_size=32, lr=3e-3, value_weight=0.5)
    assert history[-1]["policy_loss"] < history[0]["policy_loss"]
    assert history[-1]["loss"] < history[0]["loss"]


def test_demonstrations_round_trip_through_npz(tmp_path):
    from experiments.train.imitation import Demonstrations

    part = Demonstrations(np.ones((2, 3), np.float32), np.zeros((2, 1), np.uint8), np.array([1, 2]),
                          np.array([3.0, 4.0], np.float32), np.array([7, 7]),
                          target_actions=np.array([[1, -1], [2, 0]]),
                          target_probs=np.float32([[1, 0], [.5, .5]]),
                          search_stats=np.float32([[4, 0.1], [0, 0]]))
    loaded = Demonstrations.load(part.save(tmp_path / "d.npz"))
    both = Demonstrations.concat([loaded, part])
    assert len(both) == 4 and np.array_equal(both.target_actions[2:], part.target_actions)
    assert both.search_stats.shape == (4, 2)
    with pytest.raises(ConfigError, match="unreadable"):
        Demonstrations.load(tmp_path / "missing.npz")


# ---- runs -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def one_generation(tmp_path_factory, ray_session):
    """A finished one-generation run (imitation warm start, self-play, fit, gating, evaluation)."""
    from experiments.train.expert_iteration import run_expert_iteration

    out = tmp_path_factory.mktemp("exit") / "run"
    config = tiny_config()
    state = run_expert_iteration(config, out, init="teacher:greedy", progress=False)
    return config, out, state


@pytest.mark.slow
def test_one_generation_writes_checkpoint_scalars_and_policy(one_generation):
    from agents.base import make_agent
    from envs.core.registry import make_game

    config, out, state = one_generation
    assert state["generation"] == 0 and state["stopped_by"] == "generations" and len(state["history"]) == 1
    record = state["history"][0]
    assert record["decisions"] > 20 and record["search_sims_per_s"] > 0 and "gating_ci_low" in record
    assert record["accepted"] == (record["gating_ci_low"] > 0)
    saved = json.loads((out / "checkpoints" / "gen_000" / "exit_state.json").read_text())
    assert saved["generation"] == 0 and saved["config"]["network"]["width"] == 8
    assert (out / "checkpoints" / "gen_000" / "policy.pt").is_file()
    assert (out / "checkpoints" / "init" / "exit_state.json").is_file()
    assert (out / "data" / "gen_000.npz").is_file()
    tags = scalars(out)
    for tag in ("exit/loss", "exit/policy_loss", "exit/value_loss", "exit/target_accuracy",
                "exit/gating_mean_diff", "exit/gating_ci_low", "exit/gating_ci_high", "exit/accepted",
                "exit/generation_seconds",
                "exit/decisions", "exit/search_sims_per_s", "eval/mean_score", "eval/diff_vs_greedy",
                "imitation/loss"):
        assert tag in tags, tag
    game = make_game("cartographers")
    for spec in (f"ppo:{out}", config["search"].replace("{policy}", str(out))):
        agent = make_agent(spec, game)
        state0 = game.new_game(1)
        assert game.legal_mask(state0)[agent.act(state0, game.legal_mask(state0), np.random.default_rng(0))]


@pytest.mark.slow
def test_resume_continues_at_the_next_generation(one_generation, tmp_path):
    from experiments.train.exit_data import data_path
    from experiments.train.expert_iteration import run_expert_iteration

    config, out, first = one_generation
    run_dir = tmp_path / "run"
    shutil.copytree(out, run_dir)
    state = run_expert_iteration(config, run_dir, resume=True, generations=2, progress=False)
    assert state["generation"] == 1 and [h["generation"] for h in state["history"]] == [0, 1]
    assert state["history"][0] == first["history"][0]
    rng = np.random.default_rng(config["run"]["seed"])
    rng.integers(2**31), rng.integers(2**31)  # one fit seed per generation: restored, not restarted
    assert state["rng"] == rng.bit_generator.state
    games = [set(np.load(data_path(run_dir, g))["games"].tolist()) for g in (0, 1)]
    assert games[0] and games[1] and not games[0] & games[1]
    assert (run_dir / "checkpoints" / "gen_001" / "exit_state.json").is_file()
    other = tiny_config(network={"width": 12})
    with pytest.raises(ConfigError, match="the config's network"):
        run_expert_iteration(other, run_dir, resume=True, generations=3, progress=False)


@pytest.mark.slow
def test_gating_rejects_a_worse_network(tmp_path, ray_session):
    from agents.ppo.network import BoardPolicyValueNet, NetConfig
    from envs.core.registry import make_game
    from experiments.train.exit_gating import gate
    from experiments.train.expert_iteration import save_network

    config = tiny_config(search="mcts:prior=ppo:{policy},simulations=2,rollout=random,widening=1/0.4")
    torch.manual_seed(0)
    worse = save_network(tmp_path / "random.pt", BoardPolicyValueNet(make_game("cartographers").layout(),
                                                                    NetConfig(**TINY_NET)), config, {})
    seeds = [100_000_000 + i for i in range(4)]
    result = gate(config, worse, DEMO_POLICY, seeds)
    assert result["games"] == 4 and not result["accepted"]
    assert result["mean_diff"] < 0 and result["candidate_mean"] < result["accepted_mean"]
    same = gate(config, DEMO_POLICY, DEMO_POLICY, seeds[:2])
    assert same["mean_diff"] == 0 and not same["accepted"]
    confirm = [100_000_000 + i for i in range(4, 7)]
    screened = gate(config, worse, DEMO_POLICY, seeds, confirm)  # a failed first stage plays no more seeds
    assert screened == result
    better = gate(config, DEMO_POLICY, worse, seeds, confirm)
    assert better["passed"] and better["confirm_games"] == 3 and better["combined_games"] == 7
    assert better["accepted"] == (better["combined_ci_low"] > 0)
    assert better["mean_diff"] == pytest.approx(-result["mean_diff"])


def test_confirmation_decides_after_a_pass_and_only_then():
    from experiments.eval import stats
    from experiments.train.exit_gating import gating_decision, record_fields
    from experiments.train.expert_iteration import summary_line

    rng = np.random.default_rng(5)
    base = rng.normal(80, 20, 40)
    lucky = (base + 3 + rng.normal(0, 2, 40), base)  # a clear first-stage pass
    failed = gating_decision((base - 1 + rng.normal(0, 2, 40), base))
    assert not failed["passed"] and not failed["accepted"] and "confirm_games" not in failed
    with pytest.raises(ValueError, match="only played after the first stage passes"):
        gating_decision((base - 1, base), lucky)
    other = rng.normal(80, 20, 40)
    for shift, expected in ((-4.0, False), (+3.0, True)):
        confirmation = (other + shift + rng.normal(0, 2, 40), other)
        result = gating_decision(lucky, confirmation)
        assert result["passed"] and result["accepted"] is expected
        both = stats.paired_comparison(np.concatenate([lucky[0], confirmation[0]]),
                                       np.concatenate([lucky[1], confirmation[1]]))
        assert result["combined_games"] == 80 and result["confirm_games"] == 40
        assert result["combined_mean_diff"] == pytest.approx(both.mean_difference)
        assert result["combined_ci_low"] == pytest.approx(both.ci95[0])
        assert (result["combined_ci_low"] > 0) is expected and result["ci_low"] > 0
        assert np.sign(result["confirm_mean_diff"]) == np.sign(shift)
        record = {"generation": 3, "decisions": 10, "loss": 1.0, "target_accuracy": 0.5,
                  "generation_seconds": 9.0, **record_fields(result)}
        assert record["accepted"] is expected and record["gating_passed"] and "gating_accepted" not in record
        line = summary_line(record)
        assert f"confirmed on 40 more seeds {result['confirm_mean_diff']:+.1f}" in line
        assert line.endswith(f"-> {'accepted' if expected else 'rejected'} (9s)")


# ---- the command line -----------------------------------------------------------------------

def test_cli_refuses_bad_input_in_one_line(tmp_path, capsys):
    from experiments.cli.main import run

    exit_config = str(REPO / "configs" / "exit" / "cartographers_solo.yaml")
    ppo_config = str(REPO / "configs" / "ppo" / "cartographers_solo.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"game": "cartographers", "search": TINY_SEARCH, "selfplay": {"games": 0}}))
    exit_args = ["train", "cartographers", "--algo", "expert-iteration", "--config"]
    run_dir = tmp_path / "done"
    (run_dir / "checkpoints" / "gen_000").mkdir(parents=True)
    (run_dir / "checkpoints" / "gen_000" / "exit_state.json").write_text("{}")
    (run_dir / "checkpoints" / "gen_000" / "policy.pt").write_text("x")
    (run_dir / "config.yaml").write_text(yaml.safe_dump(tiny_config()))
    cases = [
        (["train", "cartographers", "--algo", "nope", "--config", ppo_config], "--algo must be one of"),
        (exit_args + [str(bad)], "selfplay.games must be an integer"),
        (exit_args + [str(tmp_path / "none.yaml")], "not found"),
        (["train", "cascadia", "--algo", "expert-iteration", "--config", exit_config], "not cascadia"),
        (exit_args + [exit_config, "--timesteps", "10"], "--timesteps: PPO option"),
        (exit_args + [exit_config, "--generations", "0"], "--generations must be >= 1"),
        (exit_args + [exit_config, "--init", "greedy"], "teacher:<agent spec>"),
        (exit_args + [exit_config, "--resume", str(tmp_path / "nothing")], "not a training run folder"),
        (exit_args + [exit_config, "--resume", str(run_dir)], "the config's network"),
        (["train", "cartographers", "--config", ppo_config, "--generations", "2"], "expert-iteration option"),
        (["train", "cartographers", "--config", exit_config], "unknown section"),
    ]
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"game": "cartographers", "network": TINY_NET,
                                    "search": "mcts:prior=ppo:{policy},bogus=1"}))
    cases.append((exit_args + [str(spec), "--out", str(tmp_path / "o")], "bogus"))
    noisy = tmp_path / "noisy.yaml"
    noisy.write_text(yaml.safe_dump({"game": "cartographers", "network": TINY_NET,
                                     "selfplay": {"noise": 0.25}, "search": "mcts:prior=ppo:{policy}"}))
    cases.append((exit_args + [str(noisy), "--out", str(tmp_path / "o2")], "noise"))
    for args, fragment in cases:
        assert run(args) == 2, args
        err = capsys.readouterr().err.strip()
        assert fragment in err and len(err.splitlines()) == 1, (args, err)


@pytest.mark.slow
def test_ctrl_c_saves_and_exits_cleanly(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**tiny_config(), "run": {**tiny_config()["run"], "generations": 50}}))
    out = tmp_path / "run"
    args = ["train", "cartographers", "--algo", "expert-iteration", "--config", str(config), "--out", out]
    proc = subprocess.Popen([sys.executable, "-m", "experiments.cli", *map(str, args), "--json"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    deadline = time.time() + 300
    while time.time() < deadline and not (out / "data" / "gen_000.npz").is_file():
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr[-2000:]
    summary = json.loads(stdout)
    assert summary["stopped_by"] == "interrupt" and summary["generation"] < 49
    name = "init" if summary["generation"] < 0 else f"gen_{summary['generation']:03d}"
    last = json.loads((out / "checkpoints" / name / "exit_state.json").read_text())
    assert last["generation"] == summary["generation"] and last["stopped_by"] == "interrupt"
