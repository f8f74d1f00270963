"""The self-play league of multiplayer training (Cartographers 2-6, Cascadia 2-4 seats).

The trained module ``main`` plays every seat of a share ``main_share`` of the episodes; in the
others it holds one seat and frozen snapshots (modules ``league_0..``, never trained: only main is
in ``policies_to_train``) hold the rest, sampled per ``opponent_sampling``: ``latest`` (the newest
snapshot), ``uniform``, or ``weighted`` toward the snapshots main does worst against (weight
``(1 - p)^2 + 0.05`` with ``p`` main's share of wins against that snapshot so far).

Promotion: every ``promote_every`` iterations main plays ``promote_games`` paired tables: on
each seed, main in one seat (rotating) with league opponents in the others, and the same table
with the newest snapshot in main's seat. If main's paired score margin has a 95% CI above 0,
main's weights become a new snapshot (the oldest slot is reused when the league is full). The
league (members, results, promotions) is logged to TensorBoard and saved in every checkpoint.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import numpy as np

from envs.core.multiagent_env import seat_of
from envs.core.registry import make_game
from experiments.common.runner import play_game
from experiments.eval import stats
from experiments.train.weights import MAIN_MODULE, get_module_weights, save_policy_file, set_module_weights

#: what this process's policy mapping knows about the league (set on every env runner)
_SAMPLING: dict[str, Any] = {"members": [], "weights": [], "main_share": 1.0, "players": 1}
PROMOTION_SEED0 = 20_000_000


def set_sampling(members: list[int], weights: list[float], main_share: float, players: int) -> None:
    """Update this process's league sampling (called on every env runner through foreach_env_runner)."""
    _SAMPLING.update(members=list(members), weights=list(weights), main_share=float(main_share),
                     players=int(players))


def episode_choice(episode_key: str, sampling: dict[str, Any]) -> list[str]:
    """Module per seat for one episode; the same episode key always gives the same table."""
    players = sampling["players"]
    members = sampling["members"]
    rng = np.random.default_rng(zlib.crc32(episode_key.encode()))
    if not members or rng.random() < sampling["main_share"]:
        return ["main"] * players
    main_seat = int(rng.integers(players))
    p = np.asarray(sampling["weights"], dtype=np.float64)
    picks = rng.choice(len(members), size=players, p=p / p.sum())
    return ["main" if s == main_seat else f"league_{members[picks[s]]}" for s in range(players)]


def policy_mapping_fn(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """RLlib's mapping: the module that plays ``agent_id`` in ``episode``."""
    key = str(getattr(episode, "id_", episode))
    return episode_choice(key, _SAMPLING)[seat_of(agent_id)]


def sampling_weights(mode: str, members: list[dict[str, Any]]) -> list[float]:
    """Opponent sampling weights over the league members (oldest first)."""
    if mode == "latest":
        return [0.0] * (len(members) - 1) + [1.0]
    if mode == "uniform":
        return [1.0] * len(members)
    weights = []
    for member in members:
        games = member["games"]
        p = member["main_wins"] / games if games else 0.5
        weights.append((1.0 - p) ** 2 + 0.05)
    return weights


def should_promote(comparison: dict[str, Any]) -> bool:
    """The promotion rule: main's paired margin over the newest snapshot has a 95% CI above 0."""
    return bool(comparison["n"] >= 2 and comparison["ci95"][0] > 0)


class League:
    """Members (frozen snapshots in module slots), their results and the promotion history."""

    def __init__(self, config: dict[str, Any], out: Path):
        self.config = config
        self.settings = config["league"]
        self.out = out
        self.players = int(config["game_options"]["players"])
        self.members: list[dict[str, Any]] = []
        self.promotions: list[dict[str, Any]] = []
        self.checks = 0

    @classmethod
    def from_state(cls, config: dict[str, Any], out: Path, state: dict[str, Any] | None) -> League:
        league = cls(config, out)
        if state:
            league.members = state["members"]
            league.promotions = state["promotions"]
            league.checks = state["checks"]
        return league

    def state(self) -> dict[str, Any]:
        return {"members": self.members, "promotions": self.promotions, "checks": self.checks}

    # ---- members ------------------------------------------------------------------------

    def _push_sampling(self, algo) -> None:
        members = [m["slot"] for m in self.members]
        weights = sampling_weights(self.settings["opponent_sampling"], self.members)
        args = (members, weights, self.settings["main_share"], self.players)
        set_sampling(*args)
        algo.env_runner_group.foreach_env_runner(lambda runner: set_sampling(*args), local_env_runner=True)

    def add_snapshot(self, algo, iteration: int, timesteps: int) -> dict[str, Any]:
        """Freeze main's current weights as a new member (reusing the oldest slot when full)."""
        index = len(self.promotions)
        slot = index % self.settings["max_members"]
        self.members = [m for m in self.members if m["slot"] != slot]
        weights = get_module_weights(algo, MAIN_MODULE)
        path = save_policy_file(self.out / "league" / f"member_{index}.pt", self.config, weights,
                                {"iteration": iteration, "timesteps": timesteps})
        set_module_weights(algo, {f"league_{slot}": weights})
        member = {"index": index, "slot": slot, "file": str(path.relative_to(self.out)),
                  "iteration": iteration, "timesteps": timesteps, "games": 0, "main_wins": 0.0}
        self.members.append(member)
        self.promotions.append({"index": index, "iteration": iteration, "timesteps": timesteps})
        self._push_sampling(algo)
        return member

    def start(self, algo) -> None:
        """A new run: the untrained (or warm-started) main is the first member."""
        self.add_snapshot(algo, 0, 0)

    def restore(self, algo) -> None:
        """After a resume the slots' weights come from the checkpoint; re-send the sampling."""
        self._push_sampling(algo)

    # ---- promotion ----------------------------------------------------------------------

    def evaluate_main(self, main_policy: str, rng: np.random.Generator) -> dict[str, Any]:
        """Paired tables: main in one seat vs the newest member in that seat, same opponents."""
        game = make_game(self.config["game"], **self.config["game_options"])
        games = self.settings["promote_games"]
        newest = self.members[-1]
        with_main, with_newest = [], []
        seed0 = PROMOTION_SEED0 + 1000 * self.checks
        for g in range(games):
            seat = g % self.players
            opponents = [self.members[int(i)] for i in rng.integers(len(self.members), size=self.players)]
            specs = [f"ppo:{self.out / m['file']}" for m in opponents]
            specs[seat] = f"ppo:{main_policy}"
            record = play_game(game, specs, seed0 + g)
            baseline = list(specs)
            baseline[seat] = f"ppo:{self.out / newest['file']}"
            base_record = play_game(game, baseline, seed0 + g)
            with_main.append(record.totals[seat])
            with_newest.append(base_record.totals[seat])
            for s, member in enumerate(opponents):
                if s != seat:
                    member["games"] += 1
                    member["main_wins"] += float(record.totals[seat] > record.totals[s]) + \
                        0.5 * float(record.totals[seat] == record.totals[s])
        comparison = stats.paired_comparison(np.asarray(with_main, float), np.asarray(with_newest, float),
                                             a="main", b=f"member_{newest['index']}")
        return comparison.as_dict()

    def check_promotion(self, algo, writer, step: int, rng: np.random.Generator, iteration: int = 0) -> bool:
        """Evaluate main against the league; add a snapshot when the margin's CI excludes 0."""
        path = save_policy_file(self.out / "league" / "main_candidate.pt", self.config,
                                get_module_weights(algo, MAIN_MODULE), {"timesteps": step})
        result = self.evaluate_main(str(path), rng)
        self.checks += 1
        promoted = should_promote(result)
        writer.add_scalar("league/margin_vs_newest", result["mean_difference"], step)
        writer.add_scalar("league/margin_ci_low", result["ci95"][0], step)
        writer.add_scalar("league/margin_ci_high", result["ci95"][1], step)
        if promoted:
            self.add_snapshot(algo, iteration, step)
        else:
            self._push_sampling(algo)
        writer.add_scalar("league/members", len(self.members), step)
        writer.add_scalar("league/promotions", len(self.promotions), step)
        for member in self.members:
            if member["games"]:
                writer.add_scalar(f"league/main_win_share_vs_member_{member['index']}",
                                  member["main_wins"] / member["games"], step)
        return promoted
