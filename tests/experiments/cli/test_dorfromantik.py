"""``meeplelab play dorfromantik`` prints the landscape and score sheet and appends to a campaign log."""

from __future__ import annotations

from click.testing import CliRunner

from envs.dorfromantik.campaign import read_log


def test_play_prints_landscape_and_appends_to_the_campaign(tmp_path):
    from experiments.cli.main import cli

    log = tmp_path / "campaign.jsonl"
    result = CliRunner().invoke(cli, ["play", "dorfromantik", "--agent", "random", "--seed", "5",
                                      "--quiet", "--campaign", str(log)])
    assert result.exit_code == 0, result.output
    assert "game over" in result.output and "longest_rail" in result.output
    records = read_log(log)
    assert len(records) == 1 and records[0]["seed"] == 5 and records[0]["game_number"] == 1
    again = CliRunner().invoke(cli, ["play", "dorfromantik", "--seed", "5", "--quiet",
                                     "--campaign", str(log)])
    assert again.exit_code == 0
    records = read_log(log)
    assert [r["game_number"] for r in records] == [1, 2] and records[0]["total"] == records[1]["total"]
