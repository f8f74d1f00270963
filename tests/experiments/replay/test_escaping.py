"""The replay page escapes everything taken from a record: agent labels, move text, explanation kinds
and statistics holding ``<script>`` or ``onerror=`` stay text, and the embedded JSON cannot close its
script element or be mistaken for one of the page's slots."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from envs.core.registry import make_game
from experiments.common.runner import play_game
from experiments.replay.html import render_html, viewer_data
from experiments.replay.records import read_record, record_from_result, write_record
from tests.experiments.cli.test_errors import run_cli
from tests.experiments.replay.test_candidates import HARNESS
from tests.paths import REPO_ROOT

EVIL = '</script><script>alert(1)</script><img src=x onerror=alert(2)> __DATA__ __SCRIPT__ </title>'
DATA_TAG = '<script id="replay-data" type="application/json">'


class _Tags(HTMLParser):
    """The tags of a page; fails on an event-handler attribute (``onerror=``...)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.names.append(tag)
        handlers = [name for name, _ in attrs if name.startswith("on")]
        assert not handlers, (tag, handlers)


def tags(text: str) -> list[str]:
    """The start tags of ``text`` as a browser's tokenizer sees them (no ``on*`` attribute allowed)."""
    parser = _Tags()
    parser.feed(text)
    parser.close()
    return parser.names


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A solo Cartographers record with hostile text in every field the viewer reads, its page."""
    folder = tmp_path_factory.mktemp("evil")
    result = play_game(make_game("cartographers"), ["random"], 5)
    record = record_from_result("cartographers", {}, result)
    record.header["labels"] = record.header["agents"] = [EVIL]
    first = record.decisions[0]
    first["move"] = EVIL
    first["explanation"] = {"kind": EVIL, "candidates": [{"action": first["action"], "visits": EVIL}]}
    path = write_record(record, folder / "evil.jsonl")
    assert read_record(path).header["labels"] == [EVIL]
    return path, folder


def test_the_page_holds_the_record_text_only_escaped(capsys, page):
    record, _ = page
    code, _, err = run_cli(capsys, ["replay", str(record)])
    assert code == 0, err
    text = record.with_suffix(".html").read_text()
    template = (REPO_ROOT / "experiments/replay/assets/viewer.html").read_text()
    assert text.lower().count("<script") == template.lower().count("<script")
    assert text.lower().count("</script") == template.lower().count("</script")
    assert text.count("</title>") == 1
    assert tags(text).count("script") == template.lower().count("<script")
    title = re.search(r"<title>(.*?)</title>", text, re.DOTALL).group(1)
    assert "<" not in title and "&lt;/script&gt;" in title
    payload = text.split(DATA_TAG, 1)[1].split("</script>", 1)[0]
    assert "<" not in payload and ">" not in payload
    data = json.loads(payload)
    assert data["agents"] == [EVIL]
    assert EVIL in data["steps"][0]["explained"]
    assert EVIL not in json.dumps(data["steps"][0]["candidates"])  # a statistic that is text is left out
    assert EVIL not in data["steps"][0]["move"]  # the move is worded by the engine, not the record


def test_render_html_fills_each_slot_once():
    data = {"title": "__DATA__ __STYLE__ <b>", "x": "</script><!--<script>"}
    text = render_html(data)
    assert "__DATA__ __STYLE__ &lt;b&gt;" in text
    assert json.loads(text.split(DATA_TAG, 1)[1].split("</script>", 1)[0]) == data


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the viewer script")
def test_the_viewer_inserts_record_text_as_text(page, tmp_path):
    record, _ = page
    text = render_html(viewer_data(read_record(record)))
    data = json.loads(text.split(DATA_TAG, 1)[1].split("</script>", 1)[0])
    data["steps"][0]["candidates"][0]["stats"] = {"visits": EVIL}  # past the Python filter: esc() in JS
    (tmp_path / "data.json").write_text(json.dumps(data))
    (tmp_path / "harness.js").write_text(HARNESS)
    done = subprocess.run(["node", str(tmp_path / "harness.js"), str(tmp_path / "data.json"),
                           str(REPO_ROOT / "experiments/replay/assets/viewer.js"), "0"],
                          capture_output=True, text=True, check=True, timeout=60)
    drawn = json.loads(done.stdout)
    for html in drawn.values():
        assert not {"script", "img"} & set(tags(html))
    escaped = EVIL.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert escaped in drawn["boards"]  # the agent's label, as text
    assert drawn["decision"].count(escaped) == 3  # label, explanation kind, statistic
