"""Bad input to the commands ends in one clear line and exit code 2, before any work is done:
negative seeds, files that are not UTF-8 (every loader), unusable ``--out`` folders, and
``play --campaign`` options and logs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envs.core.errors import ConfigError, DataFileError
from experiments.cli.main import run
from experiments.common.output_dir import prepare_out_dir

NOT_UTF8 = b"\xff\xfe game: cartographers\n"


def run_cli(capsys, args: list[str]) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``meeplelab ARGS`` (through the console entry's error handling)."""
    code = run(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def error_lines(err: str) -> list[str]:
    """The lines of ``err`` that state a problem (click's usage reminder lines left out)."""
    return [line for line in err.splitlines()
            if line.strip() and not line.startswith(("Usage: ", "Try '"))]


def assert_one_line_error(code: int, err: str, *fragments: str) -> None:
    lines = error_lines(err)
    assert code == 2, err
    assert len(lines) == 1, f"expected one line, got:\n{err}"
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def read_only_dir(tmp_path) -> Path:
    """A folder no file can be created in (chmod 555; as root, where modes do not bind, a sysfs
    folder, which refuses new entries to everyone)."""
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        (folder / "probe").touch()
    except OSError:
        yield folder
    else:
        (folder / "probe").unlink()
        if not Path("/sys/fs").is_dir():
            pytest.skip("running as root without a read-only folder to test with")
        yield Path("/sys/fs")
    folder.chmod(0o755)


@pytest.mark.parametrize("game", ["cartographers", "cascadia", "dorfromantik"])
def test_play_rejects_a_negative_seed(capsys, game):
    code, out, err = run_cli(capsys, ["play", game, "--seed", "-1"])
    assert_one_line_error(code, err, "--seed must be >= 0, got -1")
    assert out == ""


# ---- files that are not UTF-8 -------------------------------------------------------------------


def _loaders():
    from envs.cartographers.data import load_cartographers_data
    from envs.cascadia.data import load_data as load_cascadia
    from envs.dorfromantik.campaign import load_rows, read_log
    from envs.dorfromantik.data import load_data as load_dorfromantik
    from experiments.eval.config import load_config
    from experiments.eval.suites import load_suites
    from experiments.replay.records import read_record

    return {"eval config": load_config, "seed suites": load_suites,
            "cartographers data": load_cartographers_data, "cascadia data": load_cascadia,
            "dorfromantik data": load_dorfromantik, "campaign log": read_log, "score rows": load_rows,
            "game record": read_record}


@pytest.mark.parametrize("name", sorted(_loaders()))
def test_every_loader_names_a_file_that_is_not_utf8(tmp_path, name):
    path = tmp_path / f"{name.replace(' ', '_')}.txt"
    path.write_bytes(NOT_UTF8)
    with pytest.raises(ConfigError, match="is not UTF-8 text") as info:
        _loaders()[name](path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_eval_config_and_data_path_not_utf8_are_one_line(capsys, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_bytes(NOT_UTF8)
    code, _, err = run_cli(capsys, ["eval", "--config", str(config), "--games", "1"])
    assert_one_line_error(code, err, "config file", "is not UTF-8")
    data = tmp_path / "data.yaml"
    data.write_bytes(b"\x80grid: {}\n")
    config.write_text(f"game: dorfromantik\nagents: [random]\noptions: {{data_path: '{data}'}}\n")
    code, _, err = run_cli(capsys, ["eval", "--config", str(config), "--games", "1", "--no-progress"])
    assert_one_line_error(code, err, "Dorfromantik data file", "is not UTF-8")


# ---- --out -----------------------------------------------------------------------------------

OUT_COMMANDS = {
    "simulate": ["simulate", "cartographers", "--games", "2", "--chunk", "1"],
    "eval": ["eval", "cartographers", "--agents", "random", "--games", "1", "--no-progress"],
    "solo-eval": ["solo-eval", "--agent", "random", "--games", "1", "--no-progress"],
}


@pytest.mark.parametrize("command", sorted(OUT_COMMANDS))
def test_out_under_a_file_fails_in_one_line_and_writes_nothing(capsys, tmp_path, command):
    afile = tmp_path / "afile.txt"
    afile.write_text("keep me\n")
    code, out, err = run_cli(capsys, [*OUT_COMMANDS[command], "--out", str(afile / "sub")])
    assert_one_line_error(code, err, str(afile), "which is a file")
    assert afile.read_text() == "keep me\n" and sorted(os.listdir(tmp_path)) == ["afile.txt"]
    code, out, err = run_cli(capsys, [*OUT_COMMANDS[command], "--out", str(afile)])
    assert_one_line_error(code, err, str(afile), "is a file")


@pytest.mark.parametrize("command", sorted(OUT_COMMANDS))
def test_out_in_a_read_only_folder_fails_in_one_line(capsys, read_only_dir, command):
    before = sorted(os.listdir(read_only_dir))
    code, out, err = run_cli(capsys, [*OUT_COMMANDS[command], "--out", str(read_only_dir / "run")])
    assert_one_line_error(code, err, str(read_only_dir / "run"), "cannot create the folder")
    assert sorted(os.listdir(read_only_dir)) == before


def test_prepare_out_dir_creates_nested_folders_and_leaves_no_probe(tmp_path):
    target = tmp_path / "a" / "b"
    assert prepare_out_dir(target) == target and target.is_dir()
    assert list(target.iterdir()) == []
    assert prepare_out_dir(None) is None


# ---- play --campaign -------------------------------------------------------------------------


def test_play_refuses_campaign_for_a_game_without_a_log_before_playing(capsys, tmp_path):
    log = tmp_path / "c.jsonl"
    code, out, err = run_cli(capsys, ["play", "cartographers", "--campaign", str(log)])
    assert_one_line_error(code, err, "cartographers keeps no campaign log")
    assert "final position" not in out and not log.exists()


def test_play_refuses_a_corrupt_campaign_log_before_playing(capsys, tmp_path):
    log = tmp_path / "c.jsonl"
    log.write_text('{"date": "2026-01-01"\n')
    code, out, err = run_cli(capsys, ["play", "dorfromantik", "--campaign", str(log), "--quiet"])
    assert_one_line_error(code, err, f"{log}:1", "not valid JSON")
    assert "final position" not in out and log.read_text() == '{"date": "2026-01-01"\n'


@pytest.mark.parametrize("args, fragment", [
    (["--campaign", "{log}", "--names", "Ann,Bob"], "2 names for 1 seats"),
    (["--names", "Ann,"], "1 seats"),
    (["--campaign", "{afile}/c.jsonl"], "afile is a file, not a folder"),
    (["--record", "{afile}/game.jsonl"], "--record"),
])
def test_play_checks_campaign_options_before_playing(capsys, tmp_path, args, fragment):
    afile = tmp_path / "afile"
    afile.write_text("")
    args = [a.format(log=tmp_path / "c.jsonl", afile=afile) for a in args]
    code, out, err = run_cli(capsys, ["play", "dorfromantik", "--quiet", *args])
    assert_one_line_error(code, err, fragment)
    assert "final position" not in out


def test_a_data_file_error_type_is_a_config_error():
    # the CLI turns every ConfigError into exit code 2; data-file problems must be among them
    assert issubclass(DataFileError, ConfigError)


@pytest.mark.parametrize("args, fragment", [
    (["--games", str(2**70)], "games must be at most 10,000,000"),
    (["--seed", str(2**63 - 1), "--games", "2"], "seeds must stay below 2**63"),
])
@pytest.mark.parametrize("command", ["eval", "solo-eval"])
def test_seed_ranges_that_cannot_be_held_are_refused(capsys, command, args, fragment):
    # found by the CLI fuzz: --games 2**70 overflowed range() with a traceback
    code, _, err = run_cli(capsys, [*OUT_COMMANDS[command], *args])
    assert_one_line_error(code, err, fragment)
