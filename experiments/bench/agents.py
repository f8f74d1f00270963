"""Agent speed: MCTS simulations per second and greedy decision latency on solo Cartographers,
the Cascadia greedy market valuation (shared-work kernel vs one plan per option), and the
compiled Cascadia turn search (4 players) in greedy playouts per second.

``run_bench(quick) -> dict``; ``python -m experiments.bench.agents [--quick]`` prints JSON.
Figures are per core: every timing is taken twice, as wall-clock and as this process's CPU
time (``*_cpu``), because on a shared machine the CPU figure is the one that measures the code.
One MCTS simulation = determinize the root, pick and apply a root action, random rollout to the
end of the game, back up. Compile time is excluded (one warm-up call first). With greedy
rollouts, the compiled flat Cartographers search and the Python tree are timed on the same
compiled greedy playout (their ratio is what numba saves around it). One Cascadia
turn-search simulation = determinize, play a candidate turn, greedy playout of every seat to the
end, score (the published search, timed at 64 playouts a turn). One Dorfromantik search
simulation = copy the state, resample the hidden order, place a candidate, greedy playout to the
end, score (``agents/search/placement.py``), timed after 10 and after 40 placements. The
Cartographers greedy valuation of every candidate is timed both ways on the decisions of greedy
games: from the decision's own scores (what the agent runs) and on the whole drawn map (its
definition, :func:`agents.greedy.cartographers_kernels.map_value`); both give the same numbers.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

import numpy as np

from agents.base import make_agent
from agents.greedy import cartographers_kernels as G
from agents.greedy import cascadia as CG
from agents.search import cartographers_root as M
from envs.cartographers import kernels as K
from envs.cascadia import kernels as CK
from envs.core.registry import make_game
from envs.dorfromantik import kernels as DK


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _mcts_rate(game, spec: str, state, repeats: int) -> dict[str, float]:
    agent = make_agent(spec, game)
    mask = game.legal_mask(state)
    agent.act(state, mask, np.random.default_rng(0))  # warm-up: compiles
    sims, wall, cpu = 0, 0.0, 0.0
    for r in range(repeats):
        w, c = _timed(lambda r=r: agent.act(state, mask, np.random.default_rng(r + 1)))
        sims += agent.last_stats["simulations"]
        wall += w
        cpu += c
    return {"sims_per_s": sims / wall, "sims_per_s_cpu": sims / cpu}


def _rollout_rate(game, state, n: int) -> dict[str, float]:
    game.rollout_returns(state.copy(), 0)
    wall, cpu = _timed(lambda: [game.rollout_returns(state.copy(), s) for s in range(n)])
    return {"games_per_s": n / wall, "games_per_s_cpu": n / cpu}


def _playout_rate(game, state, n: int) -> float:
    """Raw compiled random playouts from ``state`` (numba determinization + ``play_random``, no
    Python per game) per CPU second: the ceiling of any random-rollout search."""
    stream = np.array([12345], dtype=np.uint64)
    scratch = M.new_scratch(state)
    no_actions = np.zeros(0, dtype=np.int32)

    def playouts(count: int) -> None:
        for _ in range(count):
            M.determinize_into(state.arrays(), scratch, stream)
            K.play_random(scratch, game.tb, stream, no_actions)

    playouts(5)  # warm-up
    _, cpu = _timed(lambda: playouts(n))
    return n / cpu


def _greedy_latency(game, games: int) -> dict[str, float]:
    agent = make_agent("greedy", game)
    times = []
    for seed in range(games + 1):
        state = game.new_game(seed)
        rng = np.random.default_rng(seed)
        while not game.is_over(state):
            mask = game.legal_mask(state)
            start = time.perf_counter()
            action = agent.act(state, mask, rng)
            if seed > 0:  # game 0 is the warm-up
                times.append(time.perf_counter() - start)
            game.step(state, action)
    ms = np.array(times) * 1e3
    return {"decision_ms_mean": float(ms.mean()), "decision_ms_p95": float(np.percentile(ms, 95)),
            "decisions": int(ms.size)}


def run_bench(quick: bool = False) -> dict:
    """Measure and return the figures (see the module docstring)."""
    game = make_game("cartographers")
    start = game.new_game(0)
    mid = game.new_game(0)
    for _ in range(15):
        game.step(mid, int(np.flatnonzero(game.legal_mask(mid))[0]))
    sims = 1000 if quick else 5000
    repeats = 1 if quick else 3
    out: dict[str, float | int | str] = {"game": "cartographers solo", "simulations_per_decision": sims}
    for label, spec in (("mcts_compiled", f"mcts:simulations={sims},engine=compiled"),
                        ("mcts_python_tree", f"mcts:simulations={sims // 5}"),
                        ("mcts_python_depth1", f"mcts:simulations={sims // 5},max_depth=1")):
        for where, state in (("start", start), ("mid", mid)):
            for key, value in _mcts_rate(game, spec, state, repeats).items():
                out[f"{label}_{where}_{key}"] = round(value, 1)
    for key, value in _rollout_rate(game, start, 200 if quick else 1000).items():
        out[f"engine_random_rollout_{key}"] = round(value, 1)
    out["raw_random_playout_games_per_s_cpu"] = round(_playout_rate(game, start, 300 if quick else 3000), 1)
    for key, value in _greedy_latency(game, 1 if quick else 5).items():
        out[f"greedy_{key}"] = round(value, 3) if isinstance(value, float) else value
    out.update(_greedy_valuation(game, 4 if quick else 20))
    out.update(_cartographers_greedy_searches(game, start, mid, repeats))
    out.update(_cascadia_market_valuation(2 if quick else 10))
    out.update(_cascadia_turn_search(repeats))
    out.update(_dorfromantik_search(repeats))
    return out


def _greedy_valuation(game, games: int) -> dict[str, float]:
    """Microseconds of CPU per candidate valued, from the decision's own scores vs on the whole
    map, over every decision of ``games`` greedy games, for both weight presets."""
    agent = make_agent("greedy", game)
    states = []
    for seed in range(games):
        state = game.new_game(seed)
        rng = np.random.default_rng(seed)
        while not game.is_over(state):
            states.append(state.copy())
            game.step(state, agent.act(state, game.legal_mask(state), rng))
    buf = np.empty((4096, 2), np.int32)
    actions, values = np.empty(G.MAX_CANDIDATES, np.int64), np.empty(G.MAX_CANDIDATES)
    out: dict[str, float] = {}
    for preset, weights in G.PRESETS.items():
        per: dict[bool, float] = {}
        for fast in (False, True):
            G.score_all(states[0].arrays(), game.tb, weights, buf, actions, values, fast)  # warm-up
            start = time.process_time()
            count = sum(G.score_all(s.arrays(), game.tb, weights, buf, actions, values, fast) for s in states)
            per[fast] = (time.process_time() - start) / count * 1e6
        out[f"cartographers_greedy_{preset}_us_per_candidate_whole_map_cpu"] = round(per[False], 3)
        out[f"cartographers_greedy_{preset}_us_per_candidate_cpu"] = round(per[True], 3)
        out[f"cartographers_greedy_{preset}_valuation_speedup"] = round(per[False] / per[True], 2)
    return out


def _cartographers_greedy_searches(game, start, mid, repeats: int) -> dict[str, float]:
    """Greedy-playout simulations/s on solo Cartographers: the compiled flat search vs the Python
    tree with greedy rollouts (the same compiled playout; the rest in numba vs Python), the flat
    search's milliseconds per decision at 384 playouts, and the solo search's playouts/s and ms per
    decision at 1,024 playouts cut after two seasons, ``greedy=progress`` (the setting published
    when the series in docs/benchmarks.md began; today's publishes more playouts of the same kind)."""
    out: dict[str, float] = {}
    flat = "mcts:engine=compiled,rollout=greedy,simulations=128,widening=1/0.5,halving=true"
    tree = "mcts:simulations=64,prior=greedy,rollout=greedy,widening=1/0.4,paired=true"
    for label, spec in (("flat_compiled", flat), ("python_tree", tree)):
        for where, state in (("start", start), ("mid", mid)):
            rate = _mcts_rate(game, spec, state, repeats)["sims_per_s_cpu"]
            out[f"cartographers_greedy_{label}_{where}_sims_per_s_cpu"] = round(rate, 1)
    for where in ("start", "mid"):
        flat = out[f"cartographers_greedy_flat_compiled_{where}_sims_per_s_cpu"]
        out[f"cartographers_greedy_flat_vs_python_tree_{where}"] = round(
            flat / out[f"cartographers_greedy_python_tree_{where}_sims_per_s_cpu"], 2)
        out[f"cartographers_greedy_flat_{where}_ms_per_decision_384"] = round(384e3 / flat, 1)
    published = ("mcts:engine=compiled,rollout=greedy,simulations=1024,widening=1/0.5,halving=true,horizon=2,"
                 "greedy=progress")
    for where, state in (("start", start), ("mid", mid)):  # the solo search README publishes
        rate = _mcts_rate(game, published, state, repeats)["sims_per_s_cpu"]
        out[f"cartographers_published_search_{where}_playouts_per_s_cpu"] = round(rate, 1)
        out[f"cartographers_published_search_{where}_ms_per_decision_cpu"] = round(1024e3 / rate, 1)
    return out


def _cascadia_market_valuation(games: int) -> dict[str, float]:
    """Microseconds of CPU per greedy market valuation (all market options of one decision), over
    the market decisions of ``games`` 4-player greedy games: the shared-work kernel the greedy
    agent and every playout run vs one plan per option (its definition); both give the same values."""
    game = make_game("cascadia", players=4)
    agent = make_agent("greedy", game)
    weights = CG.preset_weights("default")
    positions = []
    for seed in range(games):
        s = game.new_game(seed)
        rng = np.random.default_rng(seed)
        while not game.is_over(s):
            if int(s.ctl[CK.C_PHASE]) == CK.PHASE_MARKET:
                positions.append((int(s.ctl[CK.C_CUR]), s.board_args().copy(), game.tb,
                                  int(s.ctl[CK.C_SUPPLY]), weights))
            game.step(s, agent.act(s, game.legal_mask(s), rng))
    per: dict[str, float] = {}
    for label, kernel in (("reference", CG.market_values_reference), ("shared", CG.market_values)):
        kernel(*positions[0])  # warm-up
        _, cpu = _timed(lambda kernel=kernel: [kernel(*args) for args in positions])
        per[label] = cpu / len(positions) * 1e6
    with_nature = sum(args[1].pinfo[args[0], CK.P_NATURE] > 0 for args in positions) / len(positions)
    return {"cascadia4p_greedy_market_us_per_decision_reference_cpu": round(per["reference"], 2),
            "cascadia4p_greedy_market_us_per_decision_cpu": round(per["shared"], 2),
            "cascadia4p_greedy_market_speedup": round(per["reference"] / per["shared"], 2),
            "cascadia4p_greedy_market_share_with_nature_token": round(float(with_nature), 3)}


def _cascadia_turn_search(repeats: int) -> dict[str, float]:
    """Greedy playouts/s of the compiled Cascadia turn search as published (halving, the selfplay
    weights), 4 players, at the start and after 40 turns (shorter playouts), timed at 64 playouts
    a turn, and the seconds a searched turn takes at the published 768 at that rate."""
    game = make_game("cascadia", players=4)
    spec = "mcts:engine=compiled,rollout=greedy,simulations=64,widening=2/0.5,halving=true,greedy=selfplay"
    start = game.new_game(0)
    mid = game.new_game(0)
    greedy = make_agent("greedy", game)
    rng = np.random.default_rng(0)
    while int(mid.ctl[CK.C_TURN]) < 40 or int(mid.ctl[CK.C_PHASE]) != CK.PHASE_MARKET:
        game.step(mid, greedy.act(mid, game.legal_mask(mid), rng))
    out = {}
    for where, state in (("start", start), ("mid", mid)):
        rates = _mcts_rate(game, spec, state, repeats)
        out[f"cascadia4p_turn_search_{where}_playouts_per_s_cpu"] = round(rates["sims_per_s_cpu"], 1)
        out[f"cascadia4p_turn_search_{where}_s_per_turn_768"] = round(768 / rates["sims_per_s_cpu"], 2)
    return out


def _dorfromantik_search(repeats: int) -> dict[str, float]:
    """Greedy-playout simulations/s of the compiled Dorfromantik search after 10 placements (long
    playouts) and after 40, and milliseconds per decision at 64 simulations."""
    game = make_game("dorfromantik")
    greedy = make_agent("greedy", game)
    spec = "mcts:engine=compiled,rollout=greedy,simulations=64,widening=1/0.5"
    out = {}
    for placed in (10, 40):
        state = game.new_game(0)
        rng = np.random.default_rng(0)
        while int(state.meta[DK.M_PLACED]) < placed:
            game.step(state, greedy.act(state, game.legal_mask(state), rng))
        rates = _mcts_rate(game, spec, state, repeats)
        out[f"dorfromantik_search_after{placed}_sims_per_s_cpu"] = round(rates["sims_per_s_cpu"], 1)
        out[f"dorfromantik_search_after{placed}_ms_per_decision"] = round(64e3 / rates["sims_per_s"], 1)
    return out


if __name__ == "__main__":
    print(json.dumps(run_bench(quick="--quick" in sys.argv), indent=2))
