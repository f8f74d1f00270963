"""The house rules of the import graph: dependencies point down (experiments -> agents -> envs),
and there is no import cycle between modules or between folders, function-level imports included."""

from __future__ import annotations

from tests.architecture.import_graph import (
    LAYERS,
    folder_graph,
    import_graph,
    imported_modules,
    project_modules,
    strongly_connected,
)
from tests.paths import REPO_ROOT


def test_the_graph_sees_the_known_arrows():
    graph = import_graph()
    assert "envs.core.game" in graph["envs.cartographers.game"]
    assert "experiments.common.runner" in graph["experiments.eval.evaluate"]
    assert "agents.base" in graph["agents.plugin"]


def test_no_module_imports_a_layer_above_its_own():
    modules = project_modules()
    upward = [f"{path.relative_to(REPO_ROOT).as_posix()}:{line} imports {target}"
              for name, path in modules.items()
              for target, line, _ in imported_modules(path, modules)
              if LAYERS[target.split(".")[0]] > LAYERS[name.split(".")[0]]]
    assert not upward, "imports from a higher layer:\n" + "\n".join(upward)


def test_no_import_cycle_between_modules():
    cycles = strongly_connected(import_graph())
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_no_import_cycle_between_folders():
    cycles = strongly_connected(folder_graph(import_graph()))
    assert not cycles, "folder cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_cycle_finder_finds_a_cycle():
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []
