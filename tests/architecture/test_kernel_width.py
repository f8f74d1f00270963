"""The house rule on compiled kernels' arguments: at most ``MAX_PARAMETERS`` each. Arrays that travel
together go as one named record (``CascadiaBoard``, ``DorfBoard``, ...); the few entry points that
Python calls once per step keep their arrays spread, because numba checks a record argument's type
outside its fast C path (docs/benchmarks.md), and are listed here with the reason."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.architecture.import_graph import project_modules

MAX_PARAMETERS = 12

# module.function -> why it keeps its arrays spread
SPREAD_ENTRY_POINTS = {
    "envs.cascadia.kernels.setup_game": "Python deals every game through it",
    "envs.cascadia.kernels.apply_action": "Python calls it once per step",
    "envs.cascadia.kernels.play_random": "Python calls it once per rollout",
    "agents.greedy.cascadia.greedy_action": "the Python greedy agent calls it once per decision",
    "agents.greedy.dorfromantik_kernels.play_greedy": "Python calls it once per game",
}


def compiled_functions(source: str) -> list[tuple[str, int, int]]:
    """(name, line of ``def``, number of parameters) of every function in ``source`` whose decorator's
    name ends in ``jit``: numba's ``njit`` and ``jit``, bare or called, and the modules' own presets
    such as ``step_jit = njit(cache=True, _nrt=False)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef):
            continue
        decorators = [d.func if isinstance(d, ast.Call) else d for d in node.decorator_list]
        names = {d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "") for d in decorators}
        if any(name.endswith("jit") for name in names):
            arguments = node.args
            count = len(arguments.posonlyargs) + len(arguments.args) + len(arguments.kwonlyargs)
            found.append((node.name, node.lineno, count))
    return found


def _kernels() -> dict[str, tuple[Path, int, int]]:
    return {f"{module}.{name}": (path, line, count)
            for module, path in project_modules().items()
            for name, line, count in compiled_functions(path.read_text(encoding="utf-8"))}


def test_the_scan_finds_compiled_functions_and_counts_their_parameters():
    source = ("from numba import njit\nimport numba\n"
              "@njit(cache=True)\ndef a(x, y, *, z): pass\n"
              "@numba.njit\ndef b(x): pass\n"
              "@step_jit\ndef c(x): pass\n"
              "def d(x, y, w): pass\n")
    assert compiled_functions(source) == [("a", 4, 3), ("b", 6, 1), ("c", 8, 1)]
    kernels = _kernels()
    assert "envs.cascadia.kernels.apply_tile" in kernels


def test_no_compiled_kernel_takes_more_than_twelve_arguments():
    wide = [f"{path.name}:{line} {name} takes {count}"
            for name, (path, line, count) in sorted(_kernels().items())
            if count > MAX_PARAMETERS and name not in SPREAD_ENTRY_POINTS]
    assert not wide, ("compiled kernels with more than 12 arguments (group the arrays that travel together "
                      "into a named record):\n" + "\n".join(wide))


def test_the_spread_entry_points_are_still_wide_and_compiled():
    kernels = _kernels()
    stale = [name for name in SPREAD_ENTRY_POINTS
             if name not in kernels or kernels[name][2] <= MAX_PARAMETERS]
    assert not stale, f"no longer wide (remove from SPREAD_ENTRY_POINTS): {stale}"
