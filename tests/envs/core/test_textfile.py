"""User files read in one place: a missing file, bytes that are not YAML, a 10 MB line, deep nesting or an
alias bomb fail in one line naming it."""

from __future__ import annotations

import time

import pytest

from envs.core.errors import ConfigError
from envs.core.textfile import parse_json, parse_yaml, read_text, read_yaml
from experiments.train.distill_config import load_config


def test_read_yaml_reads_and_refuses_in_one_line(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("a: [1, 2]\n")
    assert read_yaml(good, "config") == {"a": [1, 2]}
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\nb: 3\n")
    with pytest.raises(ConfigError, match=r"^config .*bad.yaml is not valid YAML: [^\n]*$"):
        read_yaml(bad, "config")
    with pytest.raises(ConfigError, match="not found"):
        read_yaml(tmp_path / "missing.yaml", "config")


def test_a_config_loader_goes_through_it(tmp_path):
    bad = tmp_path / "distill.yaml"
    bad.write_text("game: cartographers\nlabel: {games: 2\n")
    with pytest.raises(ConfigError, match="distillation config .* is not valid YAML"):
        load_config(bad)


# ---- hostile files: refused before any parser builds them ----------------------------------------

#: nine levels of nine aliases: 9**9 (387 million) values once expanded
ALIAS_BOMB = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True))


def _refused(path, *fragments):
    with pytest.raises(ConfigError) as info:
        read_yaml(path, "config")
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    for fragment in fragments:
        assert fragment in message, message


def test_a_10_mb_line_is_refused_unparsed(tmp_path):
    path = tmp_path / "long.yaml"
    path.write_text("game: cartographers\nname: " + "x" * 10_000_000 + "\n")
    _refused(path, "line 2 is", "refused")


def test_a_file_over_the_size_limit_is_refused(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("a\n" * 600)
    with pytest.raises(ConfigError, match="is larger than 1000 bytes; refused"):
        read_text(path, "config", max_bytes=1000)
    assert read_text(path, "config", max_bytes=1200) == "a\n" * 600


def test_an_alias_bomb_is_refused_quickly(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB)
    started = time.perf_counter()
    _refused(path, "aliases expand to more than")
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("text", ["[" * 100 + "]" * 100, "- " * 100 + "x\n", "[" * 50_000 + "]" * 50_000])
def test_deep_nesting_is_refused(tmp_path, text):
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    _refused(path, "nested", "refused")


def test_an_alias_inside_itself_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("a: &a [1, *a]\n")
    _refused(path, "refers to a node that contains it")


def test_ordinary_aliases_and_merge_keys_still_load(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text("base: &b {lr: 0.1, epochs: 2}\nrun: {<<: *b, epochs: 3}\nagain: *b\n")
    assert read_yaml(path, "config") == {"base": {"lr": 0.1, "epochs": 2}, "run": {"lr": 0.1, "epochs": 3},
                                         "again": {"lr": 0.1, "epochs": 2}}
    assert parse_yaml("", "empty") is None


def test_deeply_nested_json_is_refused():
    with pytest.raises(ConfigError, match=r"^record x is nested too deeply to read; refused$"):
        parse_json("[" * 100_000 + "]" * 100_000, "record x")
    with pytest.raises(ConfigError, match=r"^record x is not JSON"):
        parse_json("{", "record x")
    assert parse_json('{"a": [1]}', "record x") == {"a": [1]}
