"""numba's cache folder follows the sources: any edit to envs, agents or experiments starts a fresh
folder (numba alone would keep a caller's compiled code when only its callee's file changed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from envs.core.numba_cache import PACKAGES, ROOT, source_hash


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    for package in PACKAGES:
        (root / package / "sub").mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
        (root / package / "sub" / "kernels.py").write_text("def f():\n    return 1\n")
    return root


def test_the_hash_changes_with_any_source_file_and_only_with_sources(tmp_path):
    root = _tree(tmp_path)
    first = source_hash(root)
    assert source_hash(root) == first
    (root / "agents" / "notes.txt").write_text("not a source")
    assert source_hash(root) == first
    (root / "envs" / "sub" / "kernels.py").write_text("def f():\n    return 2\n")
    changed = source_hash(root)
    assert changed != first
    shutil.move(root / "envs" / "sub" / "kernels.py", root / "envs" / "sub" / "moved.py")
    assert source_hash(root) not in (first, changed)


def _cache_dir_of_a_fresh_process(env: dict[str, str]) -> str:
    code = "import envs, numba; print(numba.config.CACHE_DIR)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def test_a_fresh_process_caches_under_the_hash_of_its_sources():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    folder = Path(_cache_dir_of_a_fresh_process(env))
    assert folder.name == source_hash()
    assert folder.parent in (ROOT / ".numba_cache", Path.home() / ".cache" / "meeplelab" / "numba")
    assert folder.is_dir()


def test_a_cache_folder_chosen_by_the_user_is_kept(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "mine"))
    assert _cache_dir_of_a_fresh_process(env) == str(tmp_path / "mine")
