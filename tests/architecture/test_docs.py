"""The README and docs/ stay true: every ``meeplelab ...`` command they show parses (its verb
exists and accepts every option given), and every relative link points to a file in the repo."""

from __future__ import annotations

import importlib
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from experiments.cli.main import COMMANDS
from tests.paths import REPO_ROOT

DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```")
INLINE = re.compile(r"`((?:\.venv/bin/)?meeplelab [^`]+)`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def shown_commands(text: str) -> list[tuple[int, str]]:
    """(line, command) for each ``meeplelab`` command in code blocks (``\\`` continuations
    joined) and in inline code."""
    found, in_block, pending, start = [], False, "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line.strip()):
            in_block = not in_block
            continue
        if in_block:
            stripped = line.strip().removeprefix("$ ")
            if pending:
                pending += " " + stripped.rstrip("\\").strip()
            elif re.match(r"^(\.venv/bin/)?meeplelab\s", stripped):
                pending, start = stripped.rstrip("\\").strip(), number
            if pending and not stripped.endswith("\\"):
                found.append((start, pending))
                pending = ""
        else:
            found += [(number, m.group(1)) for m in INLINE.finditer(line)]
    return found


def parse_command(command: str) -> None:
    """Parse ``command``'s arguments with its verb's own click parser (no code runs)."""
    words = shlex.split(command.split(" | ")[0].split(" && ")[0].split(" # ")[0])
    verb, args = words[1], words[2:]
    if verb in ("-h", "--help", "..."):  # help, or a placeholder in prose
        return
    assert verb in COMMANDS, f"unknown verb {verb!r}"
    module, attr = COMMANDS[verb].split(":")
    cmd: click.Command = getattr(importlib.import_module(module), attr)
    ctx = click.Context(cmd, info_name=verb)
    cmd.make_parser(ctx).parse_args(args)


def _doc_id(path: Path) -> str:
    return path.relative_to(REPO_ROOT).as_posix()


def test_docs_show_commands():
    commands = [c for doc in DOCS for c in shown_commands(doc.read_text(encoding="utf-8"))]
    assert len(commands) >= 20
    assert {c.split()[1] for _, c in commands} >= {"eval", "simulate", "train", "ladder"}


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_every_shown_command_parses(doc):
    failures = []
    for line, command in shown_commands(doc.read_text(encoding="utf-8")):
        try:
            parse_command(command)
        except (click.UsageError, AssertionError, ValueError) as exc:
            failures.append(f"{_doc_id(doc)}:{line}: {command}\n    {exc}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_every_relative_link_exists(doc):
    missing = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        path = target.split("#")[0]
        if not path or re.match(r"^[a-z]+:", path):
            continue
        if not (doc.parent / path).exists():
            missing.append(target)
    assert not missing, f"{_doc_id(doc)} links to missing paths: {missing}"


def test_parser_refuses_a_mistyped_option():
    with pytest.raises(click.UsageError):
        parse_command("meeplelab eval cartographers --agnets random,greedy")
    with pytest.raises(AssertionError):
        parse_command("meeplelab evaluate cartographers")
    parse_command("meeplelab eval cartographers --agents random,greedy --games 10")


def test_command_finder_joins_continued_lines():
    text = "```bash\nmeeplelab eval cartographers \\\n  --games 4\n```\nrun `meeplelab bench all`.\n"
    assert shown_commands(text) == [(2, "meeplelab eval cartographers --games 4"), (5, "meeplelab bench all")]


def python_examples(text: str) -> list[str]:
    """The ```python blocks of a Markdown text."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


@pytest.mark.parametrize("index", range(len(python_examples((REPO_ROOT / "README.md").read_text()))))
def test_readme_python_examples_run(index, tmp_path):
    """Each Python example of the README runs as shown, from a folder outside the checkout."""
    code = python_examples((REPO_ROOT / "README.md").read_text())[index]
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    for expected in re.findall(r"print\(.*\)\s+# (\[.*\])$", code, flags=re.M):
        assert expected in out.stdout, f"the README says {expected}, the example printed {out.stdout!r}"
