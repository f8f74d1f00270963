"""The replay viewer: positions come from replaying the record, the page is self-contained, and in
a real browser (headless Chromium from Debian's packages: ``make browser``) the page opened at
decision k shows decision k's boards, scores and move."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

from envs.core.registry import make_game
from experiments.cli.main import run
from experiments.common.runner import play_game
from experiments.replay.html import render_html, viewer_data, write_replay
from experiments.replay.records import read_record, record_from_result, replay, write_record
from tests.paths import REPO_ROOT

REPO = REPO_ROOT
#: screenshots for a person to look at (first and last position of each game)
SCREENSHOTS = REPO / "runs" / "replay-viewer-test"
GAMES = [("cartographers", {"players": 2}, ["greedy", "random"]),
         ("cascadia", {"players": 4}, ["greedy", "random", "greedy", "mcts:engine=compiled,rollout=greedy,"
                                                                      "simulations=4"]),
         ("dorfromantik", {}, ["mcts:simulations=4,prior=greedy"])]


def _filled(game, state) -> list[int]:
    """What each seat's board shows: filled cells (Cartographers: drawn terrain) or placed tiles."""
    if game.name == "cartographers":
        return [int(np.isin(g, (1, 2, 3, 4, 5)).sum()) for g in state.grid]
    if game.name == "cascadia":
        return [int(n) for n in state.pinfo[:, 0]]
    return [len(game.placed_tiles(state))]


@pytest.fixture(scope="module", params=GAMES, ids=[g[0] for g in GAMES])
def recorded(request, tmp_path_factory):
    """(game, record file, the states before every decision and the final one)."""
    name, options, agents = request.param
    game = make_game(name, **options)
    result = play_game(game, agents, 21, explain=True)
    path = write_record(record_from_result(name, options, result), tmp_path_factory.mktemp(name) / "g.jsonl")
    states = []
    final = replay(read_record(path), on_decision=lambda line, before, after: states.append(before))
    return game, path, states + [final]


def test_every_step_is_the_replayed_position(recorded):
    game, path, states = recorded
    record = read_record(path)
    data = viewer_data(record)
    assert len(data["steps"]) == len(record.decisions) + 1 == len(states)
    for k, (step, state) in enumerate(zip(data["steps"], states, strict=True)):
        if game.name == "cartographers":
            assert [b["cells"] for b in step["boards"]] == ["".join(map(str, g)) for g in state.grid]
        else:
            assert [len(b["hexes"]) for b in step["boards"]] == _filled(game, state)
        assert [s["total"] for s in step["scores"]] == [s.total for s in game.scores(state)]
        if k < len(record.decisions):
            line = record.decisions[k]
            assert step["seat"] == line["seat"] and step["action"] == line["action"]
            chosen = [c for c in step["candidates"] if c["chosen"]]
            assert chosen and all(c["action"] == line["action"] for c in chosen)
    assert data["steps"][-1]["seat"] == -1
    assert [s["step"] for s in data["stages"]] == sorted({s["step"] for s in data["stages"]})


def test_page_is_self_contained(recorded):
    _, path, _ = recorded
    page = render_html(viewer_data(read_record(path)))
    assert "<script src" not in page and "<link" not in page and "<img" not in page
    assert not re.search(r"https?://", page)
    assert page.count("<script") == 2  # the JSON data and the inline viewer


def test_replay_command_writes_the_page_and_refuses_bad_records(recorded, tmp_path, capsys):
    _, path, _ = recorded
    out = tmp_path / "page.html"
    assert run(["replay", str(path), "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000 and "wrote" in capsys.readouterr().out
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))
    assert run(["replay", str(broken)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: record") and "truncated" in err and "\n" not in err


def _dom_values(dom: str, pattern: str) -> list[str]:
    return [html.unescape(v) for v in re.findall(pattern, dom)]


@pytest.mark.slow
def test_browser_shows_decision_k(recorded):
    """Needs Debian's chromium: ``make browser``. Writes first/last screenshots to runs/replay-viewer-test."""
    from experiments.replay.browser import chromium, dump_dom, screenshot

    try:
        chromium()
    except Exception as exc:
        pytest.skip(str(exc))
    game, path, states = recorded
    page = write_replay(path, path.with_suffix(".html"))
    record = read_record(path)
    for k in (0, len(states) // 2, len(states) - 1):
        dom = dump_dom(page, k).split("<script", 1)[0]  # the rendered page, not the scripts' text
        assert f'id="viewer" data-step="{k}"' in dom
        totals = _dom_values(dom, r'data-key="total">(-?\d+)<')
        assert [int(t) for t in totals] == [s.total for s in game.scores(states[k])]
        filled = [int(v) for v in _dom_values(dom, r'class="seat[^"]*" data-seat="\d+" data-filled="(\d+)"')]
        assert filled == _filled(game, states[k])
        if k < len(record.decisions):
            move = _dom_values(dom, r'<div class="move" id="move">([^<]*)</div>')
            assert move == [viewer_data(record)["steps"][k]["move"]]
            assert 'class="candidate chosen"' in dom or game.name == "cascadia"
        else:
            assert "game over" in dom
    for label, k in (("first", 0), ("last", len(states) - 1)):
        png = screenshot(page, SCREENSHOTS / f"{game.name}_{label}.png", k)
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5_000
