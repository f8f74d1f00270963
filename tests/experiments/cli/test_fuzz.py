"""Fuzz every ``meeplelab`` command with random option values: it either succeeds (exit 0) or fails
with exit code 2 and one line saying what is wrong (click's usage reminder aside), never a traceback.

Commands whose valid runs are cheap (play, eval, solo-eval) start from a small valid command line and
get one to three options replaced; the others (simulate, bench, train, ...) always get a game that
does not exist as well, so no Ray cluster, benchmark or training run starts here."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from experiments.cli.main import COMMANDS, cli, run
from tests.experiments.cli.test_errors import error_lines

#: cheap valid command lines; the fuzz replaces some of their options
CHEAP = {
    "play": ["cartographers", "--quiet"],
    "eval": ["cartographers", "--agents", "random", "--games", "1", "--no-progress"],
    "solo-eval": ["--agent", "random", "--games", "1", "--no-progress"],
}
#: options never fuzzed: they join a Ray cluster or exist only for fault injection
SKIPPED_OPTIONS = {"--address", "--crash-once-dir", "--workers"}
GAMES = ["cartographers", "cascadia", "dorfromantik", "chess", "", "Cartographers", "dorfromantik "]
INTS = ["-1", "-2", "0", "1", "2", "abc", "", "1.5", "3e2", str(2**70), " 7"]
TEXTS = ["", " ", "chess", "random,", ",,", "random,greedy", "mcts:simulations=-1", "mcts:bogus=1",
         "greedy:x", "random;greedy", "ü\u2028x", "a" * 200, ":::", "smoke", "nope", "B", "total", "base"]
FLOATS = ["-1", "0", "nan", "inf", "x", "0.01"]


def files(tmp: Path) -> list[str]:
    """Paths of every awkward kind in ``tmp``: missing, a file, under a file, not UTF-8, a folder."""
    (tmp / "afile.txt").write_text("game: cartographers\n", encoding="utf-8")
    (tmp / "latin1.yaml").write_bytes(b"\xff\xfe\x00game")
    (tmp / "folder").mkdir(exist_ok=True)
    return [str(tmp / "missing.yaml"), str(tmp / "afile.txt"), str(tmp / "afile.txt" / "sub"),
            str(tmp / "latin1.yaml"), str(tmp / "folder"), str(tmp / "new" / "out")]


def command(name: str) -> click.Command:
    return cli.get_command(click.Context(cli), name)


def value_pool(param: click.Parameter, paths: list[str]) -> list[str]:
    kind = param.type
    if isinstance(kind, click.Choice):
        return [*map(str, kind.choices), "bogus", ""]
    if isinstance(kind, click.types.IntParamType):
        return INTS
    if isinstance(kind, click.types.FloatParamType):
        return FLOATS
    if isinstance(kind, click.Path | click.File):
        return paths
    return TEXTS + paths[:2]


def fuzz_args(draw, name: str, paths: list[str]) -> list[str]:
    """One random command line for ``name``."""
    cmd = command(name)
    options = [p for p in cmd.params if isinstance(p, click.Option) and not p.hidden
               and p.opts[0] not in SKIPPED_OPTIONS and not p.is_flag]
    flags = [p for p in cmd.params if isinstance(p, click.Option) and p.is_flag and not p.hidden]
    positionals = [p for p in cmd.params if isinstance(p, click.Argument)]
    args = [name, *CHEAP.get(name, [])]
    if name not in CHEAP:
        args += ["chess"] if positionals else ["--game", "chess"]
    elif positionals and draw(st.booleans()):
        args[1] = draw(st.sampled_from(GAMES))
    chosen = draw(st.lists(st.sampled_from(options), min_size=1, max_size=3, unique_by=id)) if options else []
    for param in chosen:
        args += [param.opts[0], draw(st.sampled_from(value_pool(param, paths)))]
    for flag in draw(st.lists(st.sampled_from(flags), max_size=2, unique_by=id)) if flags else []:
        args.append(flag.opts[0])
    return args


def check(args: list[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(args)
    text = err.getvalue()
    assert "Traceback" not in text + out.getvalue(), f"meeplelab {' '.join(args)}\n{text}"
    assert code in (0, 2), f"meeplelab {' '.join(args)} exited {code}\n{text}"
    if code == 2:
        lines = error_lines(text)
        assert len(lines) == 1, f"meeplelab {' '.join(args)}: expected one error line, got\n{text}"


def fuzz_test(settings_):
    @settings_
    @given(data=st.data())
    def test(tmp_path_factory, data):
        paths = files(tmp_path_factory.mktemp("fuzz"))
        name = data.draw(st.sampled_from(sorted(COMMANDS)), label="command")
        check(fuzz_args(data.draw, name, paths))
    return test


QUIET = {"deadline": None, "derandomize": True, "database": None,
         "suppress_health_check": [HealthCheck.too_slow]}
test_cli_fuzz = fuzz_test(settings(max_examples=30, **QUIET))
test_cli_fuzz_long = pytest.mark.slow(fuzz_test(settings(max_examples=300, **QUIET)))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_a_fuzz_plan(name):
    # a new command is fuzzed too: it either has a cheap valid line or takes a game to refuse
    cmd = command(name)
    assert name in CHEAP or any(isinstance(p, click.Argument) for p in cmd.params) \
        or any(p.opts[0] == "--game" for p in cmd.params if isinstance(p, click.Option))
