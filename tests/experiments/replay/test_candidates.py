"""The viewer's candidates: one is starred, the turn played (a whole-turn search lists several turns
that open with the same market slot), and it is drawn as a ghost, never like a placed piece."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from envs.core.registry import make_game
from experiments.common.runner import play_game
from experiments.replay.html import viewer_data
from experiments.replay.records import record_from_result
from tests.paths import REPO_ROOT

#: runs viewer.js against fake page elements and prints what it drew at one step
HARNESS = """
const fs = require("fs"), vm = require("vm");
const read = path => fs.readFileSync(path, "utf8");
const [data, script, step] = [read(process.argv[2]), read(process.argv[3]), process.argv[4]];
const els = {};
const el = id => els[id] || (els[id] = {textContent: id === "replay-data" ? data : "", innerHTML: "",
                                        style: {}, dataset: {}, value: ""});
const ctx = {document: {getElementById: el, addEventListener() {}}, history: {},
             location: {hash: "#step=" + step, search: ""}};
vm.createContext(ctx);
vm.runInContext(script, ctx);
process.stdout.write(JSON.stringify({boards: el("boards").innerHTML, decision: el("decision").innerHTML}));
"""


@pytest.fixture(scope="module")
def turn_game():
    """A Cascadia record whose seat 0 is a whole-turn search (its candidates are turns), and its data."""
    result = play_game(make_game("cascadia", players=2), ["turn:simulations=8", "random"], 3, explain=True)
    record = record_from_result("cascadia", {"players": 2}, result)
    return record, viewer_data(record)


def test_only_the_turn_played_is_starred(turn_game):
    record, data = turn_game
    searched = 0
    for k, (line, step) in enumerate(zip(record.decisions, data["steps"], strict=False)):
        chosen = [i for i, c in enumerate(step["candidates"]) if c["chosen"]]
        assert len(chosen) == 1, (k, len(chosen))
        listed = (line.get("explanation") or {}).get("candidates") or []
        if listed and "turn" in listed[0]:
            turn = listed[chosen[0]]["turn"]
            assert turn == [d["action"] for d in record.decisions[k:k + len(turn)]]
            same_slot = [c for c in listed if c["action"] == line["action"]]
            searched += len(same_slot) > 1  # decisions where the old rule starred several rows
    assert searched > 0


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the viewer script")
def test_the_move_played_is_drawn_as_a_ghost(turn_game, tmp_path):
    _, data = turn_game
    k = next(k for k, s in enumerate(data["steps"]) if len(s["candidates"]) > 1 and s["seat"] == 0)
    (tmp_path / "data.json").write_text(json.dumps(data))
    (tmp_path / "harness.js").write_text(HARNESS)
    done = subprocess.run(["node", str(tmp_path / "harness.js"), str(tmp_path / "data.json"),
                           str(REPO_ROOT / "experiments/replay/assets/viewer.js"), str(k)],
                          capture_output=True, text=True, check=True, timeout=60)
    drawn = json.loads(done.stdout)
    assert drawn["decision"].count("&#9733;") == 1  # one star in the candidate table
    previews = re.findall(r'<circle class="preview[^"]*"[^>]*>', drawn["boards"])
    assert len(previews) == 1 and 'fill="none"' in previews[0] and "stroke-dasharray" in previews[0]
    placed = re.findall(r'<circle class="token"[^>]*>', drawn["boards"])
    assert len(placed) == sum(h[8] >= 0 for b in data["steps"][k]["boards"] for h in b["hexes"])
    assert re.search(r'<g class="preview ghost" opacity="0\.\d+"', drawn["boards"])
