"""meeplelab train with the candidate-scoring network: configs, one real RLlib iteration with
checkpoint, TensorBoard and resume, the shipped candidate configs."""

from __future__ import annotations

import pytest

from envs.core.errors import ConfigError
from experiments.train.config import validate_config
from tests.experiments.train.test_ppo import scalars
from tests.paths import REPO_ROOT

TINY = {"type": "candidates", "hidden": 8, "layers": 1}


def tiny_candidate_config(game: str = "cartographers", players: int = 1, **sections) -> dict:
    raw = {"name": f"tiny-candidates-{game}", "game": game, "game_options": {"players": players},
           "env": {"action_space": "candidates", "max_candidates": 32}, "network": TINY,
           "ppo": {"train_batch_size": 64, "minibatch_size": 32, "num_epochs": 1, "lr": 1e-5},
           "resources": {"num_env_runners": 0, "num_envs_per_env_runner": 1, "num_cpus": 2},
           "run": {"checkpoint_every": 1, "eval_every": 1, "eval_games": 2}}
    for key, value in sections.items():
        raw[key] = {**raw.get(key, {}), **value}
    return validate_config(raw)


@pytest.mark.parametrize("change, fragment", [
    ({"network": {**TINY, "hidden": 0}}, "network.hidden must be an integer"),
    ({"network": {**TINY, "width": 8}}, "unknown key.*width.*type candidates"),
    ({"network": {**TINY, "temperature": -1}}, "network.temperature must be a positive"),
    ({"network": {**TINY, "init": 3}}, "network.init must be"),
    ({"network": {"type": "transformer"}}, "network.type must be board or candidates"),
    ({"env": {"action_space": "rows"}}, "env.action_space must be one of plain, candidates"),
    ({"env": {"action_space": "candidates"}}, "needs network.type candidates"),
    ({"network": TINY}, "env.action_space plain needs network.type board"),
    ({"env": {"action_space": "candidates", "vectorized": True}, "network": TINY}, "no candidate mode"),
    ({"env": {"opponent": "greedy"}}, "env.opponent needs env.action_space candidates"),
    ({"env": {"action_space": "candidates", "max_candidates": 0}, "network": TINY}, "env.max_candidates"),
    ({"env": {"action_space": "candidates"}, "network": TINY, "imitation": {"teacher": "greedy"}},
     "imitation.teacher"),
    ({"game_options": {"players": 3}, "env": {"action_space": "candidates", "opponent": "greedy"},
      "network": TINY, "league": {"enabled": True}}, "env.opponent with league.enabled"),
])
def test_bad_candidate_configs_name_the_key(change, fragment):
    with pytest.raises(ConfigError, match=fragment):
        validate_config({"game": "cartographers", **change})


def test_candidate_config_is_single_agent_and_not_vectorized():
    from experiments.train.config import is_multiplayer
    from experiments.train.weights import module_ids

    config = tiny_candidate_config("cascadia", 4)
    assert not config["env"]["vectorized"] and not is_multiplayer(config)
    assert module_ids(config) == ["default_policy"]
    league = tiny_candidate_config("cascadia", 4, league={"enabled": True, "max_members": 2})
    assert is_multiplayer(league) and module_ids(league) == ["main", "league_0", "league_1"]


@pytest.mark.parametrize("init, fragment", [
    ("models/cascadia_solo/model.json", "is a cascadia model, not cartographers"),
    ("models/nowhere/model.json", "network.init: learned: no model"),
])
def test_bad_init_fails_in_one_line(init, fragment):
    from experiments.train.candidates import initial_theta

    config = tiny_candidate_config(network={"init": init})
    with pytest.raises(ConfigError, match=fragment) as info:
        initial_theta(config)
    assert "\n" not in str(info.value)


def test_init_with_other_feature_count_fails_in_one_line(tmp_path):
    import json

    from experiments.train.candidates import initial_theta

    data = json.loads((REPO_ROOT / "models" / "cartographers_solo" / "model.json").read_text())
    data["features"] = data["features"][:-1]
    (tmp_path / "model.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="features do not match") as info:
        initial_theta(tiny_candidate_config(network={"init": str(tmp_path / "model.json")}))
    assert "\n" not in str(info.value)


def test_shipped_candidate_configs_validate_and_init():
    from experiments.train.candidates import initial_theta
    from experiments.train.config import load_config

    names = sorted(p.name for p in (REPO_ROOT / "configs" / "ppo").glob("*_candidates*.yaml"))
    assert {"cartographers_solo_candidates.yaml", "cascadia_solo_candidates.yaml",
            "dorfromantik_candidates.yaml", "cartographers_3p_candidates_league.yaml",
            "cascadia_4p_candidates_league.yaml"} <= set(names)
    for name in names:
        config = load_config(REPO_ROOT / "configs" / "ppo" / name)
        assert config["network"]["type"] == "candidates" and config["resources"]["num_cpus"] <= 2
        assert initial_theta(config).ndim == 2


def test_one_candidate_iteration_checkpoints_logs_and_resumes(tmp_path, ray_session):
    """A real RLlib PPO iteration on the candidate env: checkpoint, policy.pt, TensorBoard events,
    evaluation; then --resume continues from the checkpoint."""
    from agents.base import make_agent
    from agents.learned.ppo_agent import CandidatePPOAgent
    from envs.core.registry import make_game
    from experiments.train.ppo import run_training

    config = tiny_candidate_config(network={"init": "models/cartographers_solo/model.json"})
    state = run_training(config, tmp_path, max_iterations=1, progress=False)
    assert state["iteration"] == 1 and state["timesteps"] >= 64
    assert (tmp_path / "checkpoints" / "iter_000001" / "trainer_state.json").is_file()
    assert (tmp_path / "checkpoints" / "iter_000001" / "policy.pt").is_file()
    assert list(tmp_path.glob("events.out.tfevents.*"))
    tags = scalars(tmp_path)
    for tag in ("eval/mean_score", "learners/default_policy/entropy", "perf/sampled_env_steps_per_s"):
        assert tag in tags, tag
    agent = make_agent(f"ppo:{tmp_path / 'policy.pt'}", make_game("cartographers"))
    assert isinstance(agent, CandidatePPOAgent) and agent.max_candidates == 32
    resumed = run_training(config, tmp_path, resume=True, max_iterations=2, progress=False)
    assert resumed["iteration"] == 2 and resumed["timesteps"] > state["timesteps"]
    assert (tmp_path / "checkpoints" / "iter_000002" / "trainer_state.json").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("game, players, league", [("cascadia", 1, False), ("dorfromantik", 1, False),
                                                   ("cartographers", 3, False), ("cascadia", 4, False),
                                                   ("cascadia", 4, True)])
def test_one_candidate_iteration_per_game(tmp_path, ray_session, game, players, league):
    from experiments.train.ppo import run_training

    if league:
        sections = {"league": {"enabled": True, "promote_every": 1, "promote_games": 4, "max_members": 2}}
    else:
        sections = {"env": {"opponent": "greedy"}} if players > 1 else {}
    config = tiny_candidate_config(game, players, **sections)
    state = run_training(config, tmp_path, max_iterations=1, progress=False)
    assert state["iteration"] == 1 and (tmp_path / "policy.pt").is_file()
    assert "eval/mean_score" in scalars(tmp_path)
    assert (state["league"] is not None) == league


def test_a_candidate_league_iteration_promotes_snapshots_that_play(tmp_path, ray_session):
    """Self-play over candidate moves: main and the frozen snapshots are candidate networks on the
    multi-agent env's candidate mode; a promotion check plays paired tables of ``ppo:`` files."""
    from agents.base import make_agent
    from agents.learned.ppo_agent import CandidatePPOAgent
    from envs.core.registry import make_game
    from experiments.common.runner import play_game
    from experiments.train.ppo import run_training

    config = tiny_candidate_config(
        "cartographers", 3, network={"init": "models/cartographers_3p/model.json"}, env={"reward": "margin"},
        league={"enabled": True, "promote_every": 1, "promote_games": 4, "max_members": 2})
    state = run_training(config, tmp_path, max_iterations=1, progress=False)
    assert state["iteration"] == 1 and state["timesteps"] >= 64
    members = state["league"]["members"]
    assert members[0]["file"] == "league/member_0.pt" and state["league"]["checks"] == 1
    tags = scalars(tmp_path)
    assert "league/margin_vs_newest" in tags and "learners/main/entropy" in tags
    game = make_game("cartographers", players=3)
    agent = make_agent(f"ppo:{tmp_path / members[0]['file']}", game)
    assert isinstance(agent, CandidatePPOAgent)
    specs = [f"ppo:{tmp_path / 'policy.pt'}", f"ppo:{tmp_path / members[0]['file']}", "greedy"]
    assert play_game(game, specs, seed=5).totals == play_game(game, specs, seed=5).totals
