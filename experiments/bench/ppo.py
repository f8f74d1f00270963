"""``meeplelab bench ppo``: the learning stack's speed on this machine, per game.

For each game's shipped config (``configs/ppo/``): ``forward_ms``, one decision's forward pass
of the default network on one CPU core (median of 300 after a warm-up); ``sampling_env_steps_per_s``,
env steps sampled through RLlib env runners with the masking RLModule (two remote runners, so
both cores; the natively batched vector env where the game has one, and
``sampling_env_steps_per_s_plain`` with Gymnasium's per-env loop for comparison); and
``learner_steps_per_s``, env steps of a train batch consumed per second of ``learner_update``
(all of the config's epochs) on the CPU learner.
"""

from __future__ import annotations

import copy
import statistics
import time
from typing import Any

import numpy as np

from envs.core.install import shipped_file
from envs.core.registry import make_game
from experiments.common.ray_setup import init_ray
from experiments.train.config import load_config
from experiments.train.ppo import build_algorithm, vector_creator

GAMES = {"cartographers": "cartographers_solo.yaml", "cascadia": "cascadia_solo.yaml",
         "dorfromantik": "dorfromantik.yaml"}


def forward_ms(config: dict[str, Any], repeats: int = 300) -> float:
    """Median milliseconds of one forward pass (batch of one) on one core."""
    import torch

    from agents.ppo.network import BoardPolicyValueNet, NetConfig
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        game = make_game(config["game"], **config["game_options"])
        net = BoardPolicyValueNet(game.layout(), NetConfig.from_dict(config["network"])).eval()
        state = game.new_game(1)
        obs = torch.from_numpy(game.observation(state, game.current_player(state)))[None]
        mask = torch.from_numpy(game.legal_mask(state).astype("float32"))[None]
        times = []
        with torch.no_grad():
            for _ in range(20):
                net(obs, mask)
            for _ in range(repeats):
                t0 = time.perf_counter()
                net(obs, mask)
                times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1000.0
    finally:
        torch.set_num_threads(threads)


def sampling_and_learning(config: dict[str, Any], vectorized: bool, steps: int) -> dict[str, float]:
    """Env steps/s sampled by two remote env runners, and the learner's env steps/s."""
    config = copy.deepcopy(config)
    config["env"]["vectorized"] = vectorized
    config["resources"]["num_env_runners"] = 2
    config["imitation"]["teacher"] = None
    init_ray(num_cpus=2)
    algo = build_algorithm(config, seed=0)
    try:
        per_runner = steps // 2
        warm_up = lambda r: r.sample(num_timesteps=200)  # noqa: E731
        algo.env_runner_group.foreach_env_runner(warm_up, local_env_runner=False)
        t0 = time.perf_counter()
        counts = algo.env_runner_group.foreach_env_runner(
            lambda r: sum(len(e) for e in r.sample(num_timesteps=per_runner)), local_env_runner=False)
        elapsed = time.perf_counter() - t0
        result = algo.train()
        learner_s = result["timers"]["learner_update_timer"]
        batch = config["ppo"]["train_batch_size"]
        return {"sampling_env_steps_per_s": float(sum(counts) / elapsed),
                "learner_steps_per_s": float(batch / max(learner_s, 1e-9))}
    finally:
        algo.stop()


def run_bench(quick: bool = False, games: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Figures per game: forward_ms, sampling_env_steps_per_s (+ _plain), learner_steps_per_s."""
    steps = 4000 if quick else 20_000
    results: dict[str, Any] = {}
    for game in games or tuple(GAMES):
        config = load_config(shipped_file("configs", f"ppo/{GAMES[game]}"))
        figures: dict[str, Any] = {"forward_ms": forward_ms(config, 50 if quick else 300)}
        has_vector = vector_creator(game, int(config["game_options"].get("players", 1))) is not None
        figures.update(sampling_and_learning(config, vectorized=has_vector, steps=steps))
        figures["vector_env"] = has_vector
        if has_vector:
            plain = sampling_and_learning(config, vectorized=False, steps=steps // 2)
            figures["sampling_env_steps_per_s_plain"] = plain["sampling_env_steps_per_s"]
        results[game] = {k: (round(v, 3) if isinstance(v, float) and np.isfinite(v) else v)
                         for k, v in figures.items()}
    return results
