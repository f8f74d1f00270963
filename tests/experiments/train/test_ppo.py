"""meeplelab train: configs, masking in rollouts, one-iteration runs, checkpoints, resume, league."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from envs.core.errors import ConfigError
from experiments.train.config import validate_config
from tests.paths import REPO_ROOT

REPO = REPO_ROOT
TINY_NET = {"width": 8, "blocks": 1, "vector_hidden": 8, "head_hidden": 8}


def tiny_config(game: str = "cartographers", players: int = 1, **sections) -> dict:
    raw = {"name": f"tiny-{game}-{players}", "game": game, "game_options": {"players": players},
           "env": {"vectorized": False}, "network": TINY_NET,
           "ppo": {"train_batch_size": 128, "minibatch_size": 64, "num_epochs": 1},
           "resources": {"num_env_runners": 0, "num_envs_per_env_runner": 1, "num_cpus": 2},
           "run": {"checkpoint_every": 1, "eval_every": 1, "eval_games": 3}}
    for key, value in sections.items():
        raw[key] = {**raw.get(key, {}), **value}
    return validate_config(raw)


def scalars(run_dir: Path) -> dict[str, list[float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [e.value for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


# ---- configs --------------------------------------------------------------------------------

@pytest.mark.parametrize("change, fragment", [
    ({"ppo": {"lr": -1}}, "ppo.lr must be positive"),
    ({"ppo": {"learning_rate": 0.1}}, "unknown key.*ppo.learning_rate"),
    ({"env": {"reward": "points"}}, "env.reward must be one of score, margin, win"),
    ({"resources": {"num_env_runners": "two"}}, "resources.num_env_runners"),
    ({"network": {"width": 0}}, "network.width"),
    ({"ppo": {"train_batch_size": 100, "minibatch_size": 200}}, "minibatch_size"),
    ({"league": {"opponent_sampling": "best"}}, "league.opponent_sampling"),
    ({"trainer": {}}, "unknown section"),
])
def test_bad_configs_name_the_key(change, fragment):
    raw = {"game": "cartographers", **change}
    with pytest.raises(ConfigError, match=fragment):
        validate_config(raw)


def test_shipped_configs_validate():
    from experiments.train.config import load_config

    names = sorted(p.name for p in (REPO / "configs" / "ppo").glob("*.yaml"))
    for expected in ("cartographers_solo.yaml", "cartographers_3p.yaml", "cascadia_solo.yaml",
                     "cascadia_4p.yaml", "dorfromantik.yaml"):
        assert expected in names
    for name in names:
        config = load_config(REPO / "configs" / "ppo" / name)
        assert config["resources"]["num_cpus"] <= 2  # sized for this machine by default


def test_config_file_errors(tmp_path):
    from experiments.train.config import load_config

    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "none.yaml")


# ---- the RLModule in rollouts ------------------------------------------------------------------

@pytest.mark.parametrize("game, players, steps", [("cartographers", 1, 120), ("cartographers", 3, 120),
                                                  ("cascadia", 1, 120), ("cascadia", 4, 120),
                                                  ("dorfromantik", 1, 80)])
def test_module_never_samples_an_illegal_action(game, players, steps):
    """Exploration passes of the RLModule over whole games: every sampled action is legal and the
    log-probability of every illegal action is -inf-like."""
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.ppo.distribution import MaskedCategorical
    from agents.ppo.rl_module import MaskedBoardPPOModule
    from envs.core.gym_env import observation_space_for
    from envs.core.registry import make_game

    g = make_game(game, players=players)
    import gymnasium

    module = RLModuleSpec(module_class=MaskedBoardPPOModule, observation_space=observation_space_for(g),
                          action_space=gymnasium.spaces.Discrete(g.num_actions),
                          model_config={"game": game, "game_options": {"players": players},
                                        "net": TINY_NET}).build()
    torch.manual_seed(1)
    state, seed, done = g.new_game(0), 0, 0
    while done < steps:
        if g.is_over(state):
            seed += 1
            state = g.new_game(seed)
        player = g.current_player(state)
        mask = np.asarray(g.legal_mask(state), dtype=np.float32)
        batch = {Columns.OBS: {"observations": torch.from_numpy(g.observation(state, player))[None],
                               "action_mask": torch.from_numpy(mask)[None]}}
        logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
        dist = module.get_exploration_action_dist_cls().from_logits(logits)
        assert isinstance(dist, MaskedCategorical)
        action = int(dist.sample()[0])
        assert mask[action] == 1.0
        log_probs = torch.log_softmax(logits[0], dim=0)
        assert bool((log_probs[torch.from_numpy(mask) == 0] < -1e30).all())
        values = module.compute_values(batch)
        assert values.shape == (1,)
        g.step(state, action)
        done += 1


# ---- training runs ----------------------------------------------------------------------------

def test_one_iteration_with_imitation_logs_checkpoints_and_plays(tmp_path, ray_session):
    from agents.base import make_agent
    from envs.core.registry import make_game
    from experiments.common.runner import play_game
    from experiments.train.ppo import run_training

    config = tiny_config(imitation={"teacher": "greedy", "games": 4, "epochs": 1, "workers": 2})
    state = run_training(config, tmp_path, max_iterations=1, progress=False)
    assert state["iteration"] == 1 and state["timesteps"] >= 128
    tags = scalars(tmp_path)
    for tag in ("imitation/heldout_accuracy", "imitation/loss", "eval/mean_score", "eval/diff_vs_greedy",
                "eval/diff_vs_random_ci_low", "eval/mean_evaluation", "learners/default_policy/entropy",
                "perf/sampled_env_steps_per_s", "env_runners/episode_return_mean"):
        assert tag in tags, tag
    assert len(tags["eval/mean_score"]) == 2  # after imitation and after the iteration
    assert (tmp_path / "checkpoints" / "iter_000001" / "trainer_state.json").is_file()
    assert (tmp_path / "best" / "policy.pt").is_file() and (tmp_path / "policy.pt").is_file()
    game = make_game("cartographers")
    agent = make_agent(f"ppo:{tmp_path}", game)
    assert agent.payload["meta"]["iteration"] in (0, 1)
    record = play_game(game, [f"ppo:{tmp_path / 'policy.pt'}"], seed=3)
    assert sum(record.decisions) > 0


@pytest.mark.slow
def test_wall_budget_counts_the_warm_start(tmp_path, ray_session):
    from experiments.train.ppo import run_training

    config = tiny_config(imitation={"teacher": "greedy", "games": 4, "epochs": 1, "workers": 2})
    state = run_training(config, tmp_path, wall_budget=1e-3, progress=False)
    assert state["iteration"] == 0 and state["stopped_by"] == "budget"
    assert (tmp_path / "policy.pt").is_file()  # the warm-started network is saved


def test_imitation_lowers_its_loss():
    from agents.ppo.network import BoardPolicyValueNet, NetConfig
    from envs.core.registry import make_game
    from experiments.train.imitation import fit, play_teacher_games

    data = play_teacher_games("cartographers", {"players": 1}, "greedy", list(range(6)))
    assert len(data) > 50 and data.masks.shape[1] == (11374 + 7) // 8
    game = make_game("cartographers")
    torch.manual_seed(0)
    net = BoardPolicyValueNet(game.layout(), NetConfig(width=16, blocks=1, vector_hidden=16, head_hidden=16))
    history = fit(net, data, epochs=6, batch_size=64, lr=3e-3, value_weight=0.5)
    assert history[-1]["loss"] < history[0]["loss"]
    assert history[-1]["train_accuracy"] > history[0]["train_accuracy"] or history[-1]["train_accuracy"] > 0.5


@pytest.mark.slow
def test_resume_restores_weights_optimizer_and_counters(tmp_path, ray_session):
    from experiments.train.ppo import build_algorithm, get_module_weights, run_training, save_checkpoint

    config = tiny_config(run={"eval_every": 0})
    algo = build_algorithm(config, seed=0)
    algo.train()
    state = {"iteration": 1, "timesteps": 128, "best_score": None, "seed": 0, "league": None,
             "rng": np.random.default_rng(5).bit_generator.state, "evaluations": []}
    path = save_checkpoint(algo, tmp_path, config, state)
    before_w = get_module_weights(algo, "default_policy")
    before_opt = algo.learner_group.get_state()["learner"]["optimizer"]
    algo.stop()
    again = build_algorithm(config, seed=0)
    again.restore_from_path(str(path.resolve()))
    after_w = get_module_weights(again, "default_policy")
    after_opt = again.learner_group.get_state()["learner"]["optimizer"]
    again.stop()
    assert before_w.keys() == after_w.keys()
    for key in before_w:
        assert np.array_equal(np.asarray(before_w[key]), np.asarray(after_w[key])), key
    flat_before, flat_after = _leaves(before_opt), _leaves(after_opt)
    assert len(flat_before) > 4 and len(flat_before) == len(flat_after)
    for (k1, v1), (k2, v2) in zip(flat_before, flat_after, strict=True):
        assert k1 == k2 and np.array_equal(np.asarray(v1), np.asarray(v2)), k1
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    resumed = run_training(config, tmp_path, resume=True, max_iterations=2, progress=False)
    assert resumed["iteration"] == 2 and resumed["timesteps"] > 128
    assert resumed["rng"] == state["rng"]  # restored from the checkpoint; a solo run draws nothing from it


def _leaves(tree, prefix=""):
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in _leaves(tree[k], f"{prefix}/{k}")]
    if isinstance(tree, list | tuple):
        return [leaf for i, v in enumerate(tree) for leaf in _leaves(v, f"{prefix}/{i}")]
    return [(prefix, tree)]


@pytest.mark.slow
def test_ctrl_c_saves_a_checkpoint_and_exits_cleanly(tmp_path):
    config = tiny_config(run={"eval_every": 0, "checkpoint_every": 1000})
    config_path = tmp_path / "c.yaml"
    config_path.write_text(yaml.safe_dump(config))
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "experiments.cli", "train", "cartographers", "--config",
                             str(config_path), "--out", str(out), "--json"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    deadline = time.time() + 240
    while time.time() < deadline and not list(out.glob("events.out.tfevents.*")):
        time.sleep(1)
    time.sleep(8)  # inside the training loop
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 0, stderr[-2000:]
    summary = json.loads(stdout)
    assert summary["stopped_by"] == "interrupt"
    saved = sorted((out / "checkpoints").glob("iter_*"))
    assert saved and (saved[-1] / "trainer_state.json").is_file() and (saved[-1] / "policy.pt").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("game, players", [("cascadia", 1), ("dorfromantik", 1), ("cascadia", 2)])
def test_one_iteration_per_game(tmp_path, ray_session, game, players):
    from experiments.train.ppo import run_training

    extra = {"league": {"enabled": True, "promote_every": 1, "promote_games": 4, "max_members": 2}} \
        if players > 1 else {"env": {"vectorized": True}}  # Cascadia solo: the batched vector env
    state = run_training(tiny_config(game, players, **extra), tmp_path, max_iterations=1, progress=False)
    assert state["iteration"] == 1 and (tmp_path / "policy.pt").is_file()
    assert "eval/mean_score" in scalars(tmp_path)


# ---- league -----------------------------------------------------------------------------------

def test_promotion_rule():
    from experiments.eval import stats
    from experiments.train.league import should_promote

    better = stats.paired_comparison(np.array([5.0, 6, 7, 8, 6]), np.array([1.0, 2, 2, 3, 1])).as_dict()
    same = stats.paired_comparison(np.array([5.0, 6, 7, 8]), np.array([5.0, 6, 7, 8])).as_dict()
    noisy = stats.paired_comparison(np.array([5.0, 1, 7, 0]), np.array([1.0, 6, 2, 3])).as_dict()
    assert should_promote(better)
    assert not should_promote(same) and not should_promote(noisy)


def test_league_sampling_is_per_episode_and_follows_weights():
    from experiments.train.league import episode_choice, sampling_weights

    sampling = {"members": [0, 1], "weights": [0.0, 1.0], "main_share": 0.0, "players": 3}
    tables = [episode_choice(f"episode-{i}", sampling) for i in range(50)]
    assert all(t.count("main") == 1 for t in tables)
    assert all(m in ("main", "league_1") for t in tables for m in t)
    assert episode_choice("episode-3", sampling) == tables[3]
    assert episode_choice("x", {**sampling, "main_share": 1.0}) == ["main"] * 3
    members = [{"games": 10, "main_wins": 9.0}, {"games": 10, "main_wins": 1.0}]
    weighted = sampling_weights("weighted", members)
    assert weighted[1] > weighted[0]
    assert sampling_weights("latest", members) == [0.0, 1.0]


@pytest.mark.slow
def test_frozen_snapshots_never_change_and_promotion_needs_a_margin(tmp_path, ray_session):
    from torch.utils.tensorboard import SummaryWriter

    from agents.ppo.network import BoardPolicyValueNet, NetConfig
    from envs.core.registry import make_game
    from experiments.train.imitation import fit, play_teacher_games
    from experiments.train.league import League
    from experiments.train.ppo import build_algorithm
    from experiments.train.weights import get_module_weights, module_state_from_network, set_module_weights

    config = tiny_config("cartographers", 3, league={"enabled": True, "promote_games": 12, "max_members": 2},
                         env={"reward": "margin"})
    algo = build_algorithm(config, seed=0)
    league = League(config, tmp_path)
    league.start(algo)
    frozen = get_module_weights(algo, "league_0")
    main_before = get_module_weights(algo, "main")
    for _ in range(2):
        algo.train()
    main_after = get_module_weights(algo, "main")
    assert any(not np.array_equal(main_before[k], main_after[k]) for k in main_before)
    still = get_module_weights(algo, "league_0")
    assert all(np.array_equal(frozen[k], still[k]) for k in frozen)
    # a main that imitated greedy beats the untrained snapshot: promoted
    game = make_game("cartographers", players=3)
    torch.manual_seed(0)
    net = BoardPolicyValueNet(game.layout(), NetConfig.from_dict(TINY_NET))
    fit(net, play_teacher_games("cartographers", {"players": 3}, "greedy", list(range(30))), epochs=15,
        batch_size=64, lr=3e-3, value_weight=0.5)
    set_module_weights(algo, {"main": module_state_from_network(net.state_dict())})
    writer = SummaryWriter(str(tmp_path / "tb"))
    assert league.check_promotion(algo, writer, 1, np.random.default_rng(0))
    assert len(league.members) == 2 and league.members[-1]["slot"] == 1
    snapshot = get_module_weights(algo, "league_1")
    assert all(np.array_equal(snapshot[k], get_module_weights(algo, "main")[k]) for k in snapshot)
    # main is now identical to the newest member: every paired difference is 0, no promotion
    assert not league.check_promotion(algo, writer, 2, np.random.default_rng(1))
    assert len(league.members) == 2
    algo.stop()


def test_train_cli_refuses_bad_input_in_one_line(tmp_path, capsys):
    from experiments.cli.main import run

    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"game": "cartographers", "ppo": {"lr": 0}}))
    solo = str(REPO / "configs/ppo/cartographers_solo.yaml")
    cases = [
        (["train", "cartographers", "--config", str(config)], "ppo.lr must be positive"),
        (["train", "cascadia", "--config", solo], "not cascadia"),
        (["train", "cartographers", "--config", str(REPO / "configs/ppo/cartographers_solo.yaml"),
          "--init", "greedy"], "teacher:<agent spec>"),
        (["train", "cartographers", "--config", str(REPO / "configs/ppo/cartographers_solo.yaml"),
          "--resume", str(tmp_path / "nothing")], "not a training run folder"),
        (["train", "cartographers", "--config", str(REPO / "configs/ppo/cartographers_solo.yaml"),
          "--timesteps", "0"], "--timesteps must be >= 1"),
        (["train", "cartographers", "--config", solo, "--wall-budget", "0"], "--wall-budget must be > 0"),
    ]
    (tmp_path / "afile").write_text("x")
    cases.append((["train", "cartographers", "--config", str(REPO / "configs/ppo/cartographers_solo.yaml"),
                   "--out", str(tmp_path / "afile" / "sub")], "--out"))
    (tmp_path / "old" / "checkpoints" / "iter_000001").mkdir(parents=True)
    cases.append((["train", "cartographers", "--config", str(REPO / "configs/ppo/cartographers_solo.yaml"),
                   "--out", str(tmp_path / "old")], "already holds a training run"))
    run_dir = tmp_path / "done"
    (run_dir / "checkpoints" / "iter_000001").mkdir(parents=True)
    (run_dir / "checkpoints" / "iter_000001" / "trainer_state.json").write_text("{}")
    (run_dir / "checkpoints" / "iter_000001" / "policy.pt").write_text("x")
    saved = validate_config({"game": "cartographers", "network": {"width": 8}})
    (run_dir / "config.yaml").write_text(yaml.safe_dump(saved))
    cases.append((["train", "cartographers", "--config", solo, "--resume", str(run_dir)],
                   "the config's network"))
    for args, fragment in cases:
        assert run(args) == 2, args
        err = capsys.readouterr().err.strip()
        assert fragment in err and len(err.splitlines()) == 1, (args, err)


def test_forward_ms_runs_on_one_core_and_restores_the_threads():
    from experiments.bench.ppo import forward_ms

    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert 0 < forward_ms(tiny_config(), repeats=5) < 10_000
        assert torch.get_num_threads() == 2  # the bench pins one thread only while it measures
    finally:
        torch.set_num_threads(threads)


@pytest.mark.slow
def test_bench_ppo_reports_sampling_and_learning(ray_session):
    from experiments.bench.ppo import run_bench

    figures = run_bench(quick=True, games=("cartographers",))["cartographers"]
    assert figures["vector_env"] is True
    for key in ("forward_ms", "sampling_env_steps_per_s", "sampling_env_steps_per_s_plain",
                "learner_steps_per_s"):
        assert figures[key] > 0, key


def test_init_from_a_policy_file_loads_its_weights(tmp_path, ray_session):
    from agents.ppo.network import BoardPolicyValueNet, NetConfig
    from agents.ppo.policy_file import save_policy
    from envs.core.registry import make_game
    from experiments.train.ppo import run_training

    game = make_game("cartographers")
    torch.manual_seed(7)
    net = BoardPolicyValueNet(game.layout(), NetConfig.from_dict(TINY_NET))
    path = save_policy(tmp_path / "start.pt", net, game, {"players": 1})
    config = tiny_config(run={"eval_games": 2})
    state = run_training(config, tmp_path / "run", init=f"policy:{path}", max_iterations=0, progress=False)
    assert state["iteration"] == 0
    saved = torch.load(tmp_path / "run" / "policy.pt", weights_only=True)["state_dict"]
    assert all(torch.equal(saved[k], v) for k, v in net.state_dict().items())
    other = tiny_config(network={"width": 12})
    with pytest.raises(ConfigError, match="differs from the config's network"):
        run_training(other, tmp_path / "run2", init=f"policy:{path}", max_iterations=0, progress=False)


def test_every_finite_number_of_a_result_is_logged_and_nothing_else():
    from experiments.train.ppo import flatten_numbers, headline

    result = {"config": {"lr": 0.1}, "training_iteration": 3, "done": False,
              "env_runners": {"episode_return_mean": 12.5, "hist": [1, 2], "bad": float("nan")},
              "learners": {"main": {"entropy": 2.0, "mean_kl_loss": 0.01, "vf_explained_var": 0.5}},
              "np": np.float32(1.5)}
    flat = flatten_numbers(result)
    assert flat == {"training_iteration": 3.0, "env_runners/episode_return_mean": 12.5,
                    "learners/main/entropy": 2.0, "learners/main/mean_kl_loss": 0.01,
                    "learners/main/vf_explained_var": 0.5, "np": 1.5}
    head = headline(flat, "main")
    assert head["entropy"] == 2.0 and head["return"] == 12.5 and head["kl"] == 0.01


@pytest.mark.parametrize("game", ["cartographers", "cascadia", "dorfromantik"])
def test_every_solo_game_trains_on_its_batched_vector_env(game):
    """RLlib's runners get the game's numba vector env (``vectorized: true``), built from the same
    env_config the single env takes; multiplayer configs have none."""
    from experiments.train.ppo import vector_creator

    env = vector_creator(game, 1)({"num_envs": 3, "reward": "score", "players": 1})
    obs, _ = env.reset(seed=0)
    assert env.num_envs == 3 and obs["action_mask"].shape[0] == 3
    assert vector_creator(game, 2) is None
