"""``meeplelab play``: a whole game printed with milestones and the score sheet, for every game."""

import pytest
from click.testing import CliRunner

from experiments.cli.main import cli, run


@pytest.mark.parametrize("args, expected", [
    (["cartographers", "--seed", "7"], ["end of spring", "end of autumn", "solo: ", "threshold"]),
    (["cartographers", "--seed", "7", "--players", "3"], ["player_2", "winner(s): player_"]),
    (["dorfromantik", "--seed", "5", "--quiet"], ["longest_rail"]),
    (["cascadia", "--seed", "3", "--players", "2", "--quiet"], ["player_1", "fox"]),
])
def test_play_prints_the_game_and_the_score_sheet(args, expected):
    result = CliRunner().invoke(cli, ["play", *args])
    assert result.exit_code == 0, result.output
    assert "final position" in result.output
    for text in expected:
        assert text in result.output


def test_play_is_reproducible_from_the_seed():
    args = ["play", "cartographers", "--seed", "11", "--quiet"]
    runs = [CliRunner().invoke(cli, args).output for _ in range(2)]
    assert runs[0] == runs[1]
    assert runs[0] != CliRunner().invoke(cli, ["play", "cartographers", "--seed", "12", "--quiet"]).output


def test_play_rejects_an_unknown_game_and_a_wrong_number_of_agents():
    result = CliRunner().invoke(cli, ["play", "chess"])
    assert result.exit_code != 0 and "unknown game 'chess'" in str(result.exception or result.output)
    result = CliRunner().invoke(cli, ["play", "cartographers", "--agents", "random,random"])
    assert result.exit_code != 0 and "2 agents for 1 seats" in result.output


def test_names_are_printed_for_the_seats(capsys):
    """``--names`` names the seats in what play prints (the engines say player_0, player_1, ...)."""
    code = run(["play", "cascadia", "--players", "2", "--agent", "greedy", "--seed", "1", "--quiet",
                "--names", "Ann,Bob"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Ann:" in out and "Bob:" in out and "player_0" not in out and "player_1" not in out


def test_dorfromantik_prints_the_name_it_logs(capsys, tmp_path):
    """``play dorfromantik --names Ann`` prints Ann (not player_0), the name the campaign log keeps."""
    log = tmp_path / "campaign.jsonl"
    code = run(["play", "dorfromantik", "--agent", "greedy", "--seed", "2", "--quiet", "--names", "Ann",
                "--campaign", str(log)])
    out = capsys.readouterr().out
    assert code == 0
    assert "Ann" in out and "player_0" not in out and "Ann" in log.read_text()
