"""User files read in one place: a missing file or bytes that are not YAML fail in one line naming it."""

from __future__ import annotations

import pytest

from envs.core.errors import ConfigError
from envs.core.textfile import read_yaml
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
