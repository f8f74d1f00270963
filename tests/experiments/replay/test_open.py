"""``replay --open`` says so when no browser can be opened, and where the page is."""

from __future__ import annotations

from experiments.cli.main import run
from experiments.replay import html


def test_open_without_a_browser_says_where_the_page_is(capsys, tmp_path, monkeypatch):
    record = tmp_path / "game.jsonl"
    assert run(["play", "cartographers", "--agent", "random", "--seed", "3", "--quiet",
                "--record", str(record)]) == 0
    opened = []
    monkeypatch.setattr(html.webbrowser, "open", lambda url: opened.append(url) or False)
    page = tmp_path / "game.html"
    capsys.readouterr()
    assert run(["replay", str(record), "--out", str(page), "--open"]) == 0
    err = capsys.readouterr().err
    assert opened == [page.resolve().as_uri()]
    assert f"no browser could be opened on this machine: open {page.resolve()}" in err


def test_open_with_a_browser_says_nothing_more(capsys, tmp_path, monkeypatch):
    record = tmp_path / "game.jsonl"
    assert run(["play", "cartographers", "--agent", "random", "--seed", "3", "--quiet",
                "--record", str(record)]) == 0
    monkeypatch.setattr(html.webbrowser, "open", lambda url: True)
    capsys.readouterr()
    assert run(["replay", str(record), "--out", str(tmp_path / "g.html"), "--open"]) == 0
    assert "no browser" not in capsys.readouterr().err
