"""The Cartographers component transcription and the loader's errors."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from envs.cartographers.data import (
    DEFAULT_PATH,
    KIND_AMBUSH,
    KIND_RUINS,
    MOUNTAIN,
    WASTELAND,
    load_cartographers_data,
)
from envs.core.errors import ConfigError, DataFileError
from envs.core.polyomino import all_orientations


@pytest.fixture(scope="module")
def data():
    return load_cartographers_data()


def cells_where(mask: np.ndarray) -> set[tuple[int, int]]:
    return {divmod(int(i), 11) for i in np.flatnonzero(mask)}


def test_map_a_mountains_and_ruins(data):
    a = data.maps["A"]
    assert cells_where(a.terrain == MOUNTAIN) == {(1, 3), (2, 8), (5, 5), (8, 2), (9, 7)}
    assert cells_where(a.ruins) == {(1, 5), (2, 1), (2, 9), (8, 1), (8, 9), (9, 5)}
    assert not np.any(a.terrain == WASTELAND)


def test_map_b_wasteland(data):
    b = data.maps["B"]
    assert cells_where(b.terrain == WASTELAND) == {(3, 5), (4, 4), (4, 5), (5, 4), (5, 5), (5, 6), (6, 5)}
    assert cells_where(b.terrain == MOUNTAIN) == {(1, 8), (2, 3), (7, 5), (8, 9), (9, 2)}
    assert len(cells_where(b.ruins)) == 6


def test_deck_counts_and_times(data):
    kinds = data.card_kind.tolist()
    assert len(kinds) == 17
    assert kinds[:13].count(KIND_RUINS) == 2 and kinds[13:] == [KIND_AMBUSH] * 4
    assert int(data.card_time[:13].sum()) == 16
    assert data.card_names[12] == "Rift Lands" and data.card_time[12] == 0
    assert data.card_n_terrains[12] == 5
    assert all(data.card_time[13:] == 0)


@pytest.mark.parametrize("name, counts, coins", [
    ("Great River", [2, 4], [True, False]), ("Farmland", [2, 1], [True, False]),
    ("Hamlet", [4, 8], [True, False]), ("Forgotten Forest", [2, 4], [True, False]),
    ("Hinterland Stream", [4], [False]), ("Homestead", [4], [False]), ("Orchard", [8], [False]),
    ("Treetop Village", [8], [False]), ("Marshlands", [4], [False]), ("Fishing Village", [2], [False]),
    ("Rift Lands", [1], [False]), ("Goblin Attack", [2], [False]), ("Bugbear Assault", [2], [False]),
    ("Kobold Onslaught", [4], [False]), ("Gnoll Raid", [4], [False]),
])
def test_shape_orientation_counts_and_coins(data, name, counts, coins):
    card = data.card_names.index(name)
    shapes = data.card_shapes[card]
    assert [len(all_orientations(s)) for s in shapes] == counts
    assert data.card_coin[card, : len(shapes)].tolist() == coins


def test_scoring_cards_and_solo_values(data):
    assert data.scoring_names[0] == "Sentinel Wood" and data.scoring_names[15] == "The Cauldrons"
    assert data.scoring_ids.tolist() == list(range(26, 42))
    assert data.scoring_solo.tolist() == [25, 22, 17, 18, 24, 22, 20, 27, 16, 16, 21, 20, 24, 24, 24, 20]
    assert [int(data.scoring_solo[4 * k: 4 * k + 4].sum()) for k in range(4)] == [82, 93, 73, 92]
    assert data.scoring_stack.tolist() == [i // 4 for i in range(16)]


def test_seasons_and_titles(data):
    assert data.season_threshold.tolist() == [8, 8, 7, 6]
    assert data.season_edicts.tolist() == [[0, 1], [1, 2], [2, 3], [3, 0]]
    assert data.title_for(11) == "Journeyman Topographer"
    assert data.title_for(30) == "Legendary Cartographer"
    assert data.title_for(-1) == "Amateur Assessor"
    assert data.title_for(-99) == "Oblivious Inkdrinker"


def test_scoring_index_lookup(data):
    assert data.scoring_index("greenbough") == 1
    assert data.scoring_index("Broken Road") == 14
    assert data.scoring_index(41) == 15
    with pytest.raises(ConfigError, match="known cards: Sentinel Wood"):
        data.scoring_index("Dragon Lair")


def _broken_copy(tmp_path: Path, mutate) -> Path:
    doc = yaml.safe_load(DEFAULT_PATH.read_text())
    mutate(doc)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("explore_cards"), "explore_cards: missing"),
    (lambda d: d["explore_cards"].pop(), "expected 13 cards, found 12"),
    (lambda d: d["explore_cards"][2].__setitem__("terrains", ["lava"]), "unknown terrain 'lava'"),
    (lambda d: d["maps"]["A"].__setitem__("mountains", [[1, 3], [11, 2]]), "outside 0..10"),
    (lambda d: d["ambush_cards"][0].__setitem__("arrow", "sideways"), "unknown arrow 'sideways'"),
    (lambda d: d["scoring_cards"][3].__setitem__("solo", "many"), r"scoring_cards\[3\].solo: expected int"),
    (lambda d: d["seasons"][1].__setitem__("edicts", ["A", "E"]), "two edict letters"),
    (lambda d: d["maps"]["A"]["ruins"].append([1, 3]), "is not an empty cell"),
])
def test_malformed_yaml_names_the_problem(tmp_path, mutate, message):
    path = _broken_copy(tmp_path, mutate)
    with pytest.raises(DataFileError, match=message) as info:
        load_cartographers_data(path)
    assert "broken.yaml" in str(info.value)


def test_unparsable_or_missing_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("maps: [unclosed\n")
    with pytest.raises(DataFileError, match="not valid YAML"):
        load_cartographers_data(bad)
    with pytest.raises(DataFileError, match="Cartographers data file .*nope.yaml not found"):
        load_cartographers_data(tmp_path / "nope.yaml")
