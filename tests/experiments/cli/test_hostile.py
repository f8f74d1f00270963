"""Hostile input files are refused in one line, run no code and change nothing: a config or record with
a 10 MB line, deeply nested JSON or YAML, a YAML alias bomb, a ``policy.pt`` whose pickle would run
code, and a run folder for ``--resume`` that another game or config wrote."""

from __future__ import annotations

import json

import pytest

from agents.base import make_agent
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from experiments.train import distill
from experiments.train.config import load_config as load_training_config
from experiments.train.distill_config import validate_config as distill_config
from tests.envs.core.test_textfile import ALIAS_BOMB
from tests.experiments.cli.test_errors import assert_one_line_error, run_cli

LONG_LINE = "x" * 10_000_000
DEEP_JSON = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def hostile_configs(tmp_path):
    """name -> a hostile YAML config file."""
    files = {"long": "game: cartographers\nagents: [random, greedy]\nname: " + LONG_LINE + "\n",
             "bomb": "game: cartographers\n" + ALIAS_BOMB,
             "deep": "game: cartographers\nagents: " + "[" * 5000 + "]" * 5000 + "\n"}
    paths = {}
    for name, text in files.items():
        paths[name] = tmp_path / f"{name}.yaml"
        paths[name].write_text(text)
    return paths


@pytest.mark.parametrize("name, fragment", [("long", "line 3 is 9.5 Mcharacters long"),
                                            ("bomb", "aliases expand"), ("deep", "nested")])
def test_eval_refuses_a_hostile_config(capsys, tmp_path, hostile_configs, name, fragment):
    path = hostile_configs[name]
    before = path.read_bytes()
    code, out, err = run_cli(capsys, ["eval", "--config", str(path), "--out", str(tmp_path / "out")])
    assert_one_line_error(code, err, str(path), fragment)
    assert path.read_bytes() == before
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["long", "bomb", "deep"])
def test_a_training_config_goes_through_the_same_checks(hostile_configs, name):
    with pytest.raises(ConfigError, match="refused"):
        load_training_config(hostile_configs[name])


@pytest.mark.parametrize("body, fragment", [
    ('{"format": "meeplelab-record", "note": "' + LONG_LINE + '"}\n', "line 1 is 9.5 Mcharacters long"),
    (DEEP_JSON + "\n", "line 1 is nested too deeply"),
])
def test_replay_refuses_a_hostile_record(capsys, tmp_path, body, fragment):
    record = tmp_path / "game.jsonl"
    record.write_text(body)
    code, out, err = run_cli(capsys, ["replay", str(record)])
    assert_one_line_error(code, err, str(record), fragment)
    assert record.read_text() == body
    assert not record.with_suffix(".html").exists()


class _Payload:
    """Unpickling it calls ``open(marker, "w")``: a file appears when the pickle's code runs."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return open, (self.marker, "w")


def test_a_policy_file_with_code_in_its_pickle_runs_nothing(capsys, tmp_path):
    torch = pytest.importorskip("torch")
    marker = tmp_path / "code-ran"
    policy = tmp_path / "evil" / "policy.pt"
    policy.parent.mkdir()
    torch.save({"format": "meeplelab-policy", "version": 1, "payload": _Payload(str(marker))}, policy)
    # the file is live: a plain torch.load would run its code
    torch.load(policy, weights_only=False)["payload"].close()
    assert marker.exists()
    marker.unlink()
    with pytest.raises(ConfigError, match="is corrupt or not a meeplelab policy"):
        make_agent(f"ppo:{policy}", make_game("cartographers"))
    code, out, err = run_cli(capsys, ["eval", "cartographers", "--agents", f"random,ppo:{policy.parent}",
                                      "--games", "1"])
    assert_one_line_error(code, err, str(policy), "corrupt or not a meeplelab policy")
    assert not marker.exists()


def test_distill_resume_refuses_another_games_or_a_hostile_run_folder(tmp_path):
    config = distill_config({"game": "cartographers", "game_options": {"players": 1}})
    run = tmp_path / "run"
    run.mkdir()
    state = run / distill.STATE_FILE
    state.write_text(json.dumps({"iteration": 0, "config": {**config, "game": "cascadia"}}))
    with pytest.raises(ConfigError, match="was started with another config .*game 'cascadia'"):
        distill.check_resumable(config, run)
    for text, fragment in [(DEEP_JSON, "nested too deeply"), ('{"a": "' + LONG_LINE + '"}', "line 1 is"),
                           ("[1, 2]", "not a JSON object"), ('{"config": 3}', "no config")]:
        state.write_text(text)
        with pytest.raises(ConfigError, match=fragment) as info:
            distill.check_resumable(config, run)
        assert "\n" not in str(info.value)
        assert state.read_text() == text
