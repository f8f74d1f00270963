"""Record the golden Cartographers solo playthroughs (run once; the test replays them).

Usage: python tests/golden/record_cartographers.py [seed ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from envs.cartographers import kernels as K
from envs.cartographers.game import CartographersGame

HERE = Path(__file__).resolve().parent


def record(seed: int, options: dict) -> dict:
    g = CartographersGame(**options)
    s = g.new_game(seed)
    actions = g.play_random(s, seed)
    return {
        "game": "cartographers",
        "seed": seed,
        "options": options,
        "policy": f"compiled uniform random, play_random(seed={seed})",
        "edicts": g.edict_names(s),
        "actions": actions,
        "season_totals": s.record[0, :, K.R_TOTAL].tolist(),
        "season_records": s.record[0].tolist(),
        "final": g.scores(s)[0].total,
        "final_grid": s.grid[0].tolist(),
    }


def main(seeds: list[int]) -> None:
    for seed in seeds:
        rec = record(seed, {"players": 1, "side": "A"})
        path = HERE / f"cartographers_solo_seed{seed}.json"
        path.write_text(json.dumps(rec) + "\n")
        print(f"wrote {path} ({len(rec['actions'])} actions, final {rec['final']})")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [2026])
