"""The engines still write the recorded playthroughs exactly.

Regenerate them with ``python -m tests.playthroughs.generate`` when a change is intended.
"""

from __future__ import annotations

import pytest

from tests.playthroughs import generate
from tests.playthroughs.generate import CASES, REGENERATE, Case, first_difference, playthrough_text


def case_id(case: Case) -> str:
    return case.filename.removesuffix(".txt")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_engine_still_writes_the_playthrough(case):
    path = generate.HERE / case.filename
    assert path.exists(), f"{path.name} is missing: run {REGENERATE}"
    problem = first_difference(path.read_text(), playthrough_text(case))
    assert problem is None, (f"{path.name} differs at {problem}\n"
                             f"(if the change is intended, regenerate with {REGENERATE})")


def test_the_files_are_exactly_the_generated_set():
    on_disk = {p.name for p in generate.HERE.glob("*.txt")}
    assert on_disk == {c.filename for c in CASES}, f"stray: {generate.stray_files()}"


def test_every_game_has_a_solo_and_a_multiplayer_playthrough():
    from envs.core.registry import GAMES

    for name in GAMES:
        seats = {c.players for c in CASES if c.game == name}
        assert 1 in seats and any(p > 1 for p in seats), f"{name}: playthroughs for {sorted(seats)} seats"


def test_first_difference_names_the_first_differing_line():
    assert first_difference("a\nb\nc", "a\nb\nc") is None
    assert first_difference("a\nb\nc", "a\nB\nc").startswith("line 2:\n  file:   b\n  engine: B")
    assert first_difference("a\nb", "a\nb\nc") == "line 3: only the engine has it: c"
    assert first_difference("a\nb\nc", "a\nb") == "line 3: only the file has it: c"
    assert first_difference("a\nb", "a\nb\n") == "the files differ in line endings only"


def test_check_mode_exits_1_naming_the_line(tmp_path, monkeypatch, capsys):
    case = CASES[0]
    text = playthrough_text(case).splitlines()
    text[10] += " (edited)"
    (tmp_path / case.filename).write_text("\n".join(text) + "\n")
    monkeypatch.setattr(generate, "HERE", tmp_path)
    monkeypatch.setattr(generate, "CASES", (case,))
    assert generate.main(["--check"]) == 1
    assert f"{case.filename} differs at line 11:" in capsys.readouterr().err
    (tmp_path / case.filename).write_text(playthrough_text(case))
    assert generate.main(["--check"]) == 0
