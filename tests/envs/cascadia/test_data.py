"""The component file: totals, starters, geometry, and clear errors for malformed files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from envs.cascadia.data import DEFAULT_PATH, NUM_KINDS, NUM_TILES, dual_edges, load_data
from envs.cascadia.game import CascadiaGame
from envs.core.errors import ConfigError, DataFileError


def test_tile_totals():
    d = load_data()
    info = d.kind_info[:NUM_TILES]
    assert len(d.tile_codes) == 85
    assert int((info[:, 1] >= 0).sum()) == 25  # keystones
    per_animal = [int(((info[:, 0] >> w) & 1).sum()) for w in range(5)]
    assert per_animal == [32] * 5
    shown = [set(d.kind_edges[t, 0].tolist()) for t in range(NUM_TILES)]
    per_habitat = [sum(1 for t in range(NUM_TILES) if h in shown[t]) for h in range(5)]
    assert per_habitat == [29] * 5
    pairs = Counter(tuple(sorted(shown[t])) for t in range(NUM_TILES) if info[t, 1] < 0)
    assert len(pairs) == 10 and set(pairs.values()) == {6}
    assert sum(1 for t in range(NUM_TILES) if bin(int(info[t, 0])).count("1") == 3) == 15


def test_starters_show_every_habitat_and_animal():
    d = load_data()
    for s in range(5):
        kinds = range(NUM_TILES + 3 * s, NUM_TILES + 3 * s + 3)
        habitats = set().union(*(set(d.kind_edges[k, 0].tolist()) for k in kinds))
        animals = 0
        for k in kinds:
            animals |= int(d.kind_info[k, 0])
        assert habitats == set(range(5)) and animals == 0b11111
        assert d.kind_info[NUM_TILES + 3 * s, 1] >= 0  # the top hex is a keystone
    assert d.kind_info.shape[0] == NUM_KINDS


def test_dual_rotation_convention():
    # habitat A on edges k, k+1, k+2 (clockwise from NE)
    assert dual_edges(0, 1, 0) == [0, 0, 0, 1, 1, 1]
    assert dual_edges(0, 1, 4) == [0, 1, 1, 1, 0, 0]
    d = load_data()
    assert d.kind_edges[25, 3].tolist() == [1, 1, 1, 0, 0, 0]


def write(tmp_path: Path, mutate) -> str:
    raw = yaml.safe_load(DEFAULT_PATH.read_text())
    mutate(raw)
    path = tmp_path / "cascadia.yaml"
    path.write_text(yaml.safe_dump(raw))
    return str(path)


@pytest.mark.parametrize("mutate, message", [
    (lambda raw: raw["tiles"].pop(), "expected 85 tiles"),
    (lambda raw: raw["tiles"].__setitem__(3, "MX:b"), "unknown habitat"),
    (lambda raw: raw["tiles"].__setitem__(30, "MF:bz"), "unknown wildlife"),
    (lambda raw: raw["tiles"].__setitem__(3, "M:be"), "keystone tile shows exactly one animal"),
    (lambda raw: raw["tiles"].__setitem__(3, "Mb"), "is not '<habitats>:<wildlife>'"),
    (lambda raw: raw.pop("scoring"), "missing section 'scoring'"),
    (lambda raw: raw["starters"][0]["hexes"][1].__setitem__("edges", "FWW"), "6 habitats"),
    (lambda raw: raw["counts"].pop("nature_tokens"), "incomplete"),
])
def test_malformed_data_file_gives_a_clear_error(tmp_path, mutate, message):
    load_data.cache_clear()
    with pytest.raises(DataFileError, match=message):
        load_data(write(tmp_path, mutate))


def test_missing_or_unparsable_file(tmp_path):
    with pytest.raises(DataFileError, match="not found"):
        load_data(str(tmp_path / "nope.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("tiles: [unclosed\n")
    with pytest.raises(DataFileError, match="not valid YAML"):
        load_data(str(bad))
    with pytest.raises(ConfigError):
        CascadiaGame(players=2, data_path=str(bad))
