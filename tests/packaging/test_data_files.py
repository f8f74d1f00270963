"""The data files ship with the package: the loaders find seeds/ and configs/ through
envs/core/install.py, in the checkout or in the installed data package, and pyproject.toml lists every
package and maps the data folders (fast checks; tests/packaging/test_install.py installs the wheel)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from envs.core import install
from envs.core.install import checkout_dir, installed_dir, shipped_file
from tests.paths import REPO_ROOT

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def test_the_loaders_read_the_shipped_files():
    from envs.cartographers.data import DEFAULT_PATH as cartographers
    from envs.cascadia.data import DEFAULT_PATH as cascadia
    from envs.dorfromantik.data import DEFAULT_PATH as dorfromantik
    from experiments.eval.suites import SUITES_FILE, load_suite

    for game, path in (("cartographers", cartographers), ("cascadia", cascadia),
                       ("dorfromantik", dorfromantik)):
        assert path == shipped_file("seeds", f"{game}.yaml") == REPO_ROOT / "seeds" / f"{game}.yaml"
    assert SUITES_FILE == shipped_file("configs", "suites.yaml") == REPO_ROOT / "configs" / "suites.yaml"
    assert load_suite("smoke").seeds == (0, 1, 2, 3, 4)


def test_the_checkout_is_found_beside_the_code():
    assert install.CHECKOUT == REPO_ROOT
    assert checkout_dir("seeds") == REPO_ROOT / "seeds"
    assert checkout_dir("configs") == REPO_ROOT / "configs"
    with pytest.raises(ValueError, match="unknown data folder"):
        shipped_file("runs", "x")


def test_the_installed_data_packages_map_the_repository_folders():
    """Through the package mechanism (the editable install of ``make setup``): the same folders."""
    for folder in ("seeds", "configs", "models"):
        found = installed_dir(folder)
        assert found is not None, f"meeplelab_data.{folder} not importable: run make setup"
        assert found.resolve() == (REPO_ROOT / folder).resolve()


def test_an_installed_copy_is_found_without_a_checkout(tmp_path):
    """The layout of a wheel in site-packages: envs/ and meeplelab_data/ side by side, no pyproject.toml."""
    site = tmp_path / "site-packages"
    (site / "envs" / "core").mkdir(parents=True)
    for name in ("__init__.py", "core/__init__.py"):
        (site / "envs" / name).write_text("")
    for name in ("install.py", "errors.py"):
        shutil.copy2(REPO_ROOT / "envs" / "core" / name, site / "envs" / "core" / name)
    for folder, name in (("seeds", "cascadia.yaml"), ("configs", "ppo/cascadia_solo.yaml")):
        (site / "meeplelab_data" / folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / folder / name, site / "meeplelab_data" / folder / name)
    probe = ("import json, sys; sys.path.insert(0, sys.argv[1]); from envs.core import install as i; "
             "print(json.dumps([str(i.checkout_dir('seeds')), str(i.shipped_file('seeds', 'cascadia.yaml')), "
             "str(i.shipped_file('configs', 'ppo/cascadia_solo.yaml')), str(i.installed_dir('configs'))]))")
    # -I -S: no site-packages, so neither this venv's editable install nor the checkout is reachable
    out = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(site)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    checkout, seeds_file, config_file, configs = json.loads(out.stdout)
    assert checkout == "None"
    assert Path(seeds_file) == site / "meeplelab_data" / "seeds" / "cascadia.yaml"
    assert Path(config_file) == site / "meeplelab_data" / "configs" / "ppo" / "cascadia_solo.yaml"
    assert Path(configs) == site / "meeplelab_data" / "configs"


def test_a_missing_data_file_is_named_in_one_line(tmp_path):
    from envs.core.errors import DataFileError
    from envs.dorfromantik.data import load_data

    with pytest.raises(DataFileError, match="Dorfromantik data file .*nope.yaml not found"):
        load_data(tmp_path / "nope.yaml")


def test_pyproject_lists_every_package():
    """The packages are listed by hand (the data packages are no folders of their own), so a new
    package folder must be added to ``[tool.setuptools] packages``."""
    listed = set(SETUPTOOLS["packages"])
    on_disk = {".".join(p.parent.relative_to(REPO_ROOT).parts)
               for top in ("envs", "agents", "experiments") for p in (REPO_ROOT / top).rglob("__init__.py")}
    data_packages = {f"meeplelab_data.{folder}" for folder in ("seeds", "configs", "models")}
    assert listed - data_packages == on_disk
    assert SETUPTOOLS["package-dir"] == {package: package.split(".")[1] for package in data_packages}


def test_the_data_folders_hold_only_files_that_ship():
    """package-data ships seeds/*.yaml, seeds/*.md, configs/**/*.yaml and each model folder's README.md,
    model.json, patterns.npy and policy.pt; a file of another kind there would be missing from the wheel
    (test_install.py compares the wheel with the folders)."""
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    assert data["meeplelab_data.seeds"] == ["*.yaml", "*.md"]
    assert data["meeplelab_data.configs"] == ["**/*.yaml"]
    assert data["meeplelab_data.models"] == ["*/README.md", "*/model.json", "*/patterns.npy", "*/policy.pt"]
    seeds, configs, models = data_files("seeds"), data_files("configs"), data_files("models")
    assert seeds and configs and models
    assert [f for f in seeds if "/" in f or Path(f).suffix not in (".yaml", ".md")] == []
    assert [f for f in configs if Path(f).suffix != ".yaml"] == []
    shipped = ("README.md", "model.json", "patterns.npy", "policy.pt")
    assert [f for f in models if f.count("/") != 1 or f.split("/")[1] not in shipped] == []


def data_files(folder: str) -> set[str]:
    """Every file of the repository's ``folder``, relative to it (as the wheel holds them)."""
    root = REPO_ROOT / folder
    return {p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def test_a_base_install_needs_neither_torch_nor_ray():
    base = " ".join(PYPROJECT["project"]["dependencies"])
    for heavy in ("torch", "ray", "tensorboard"):
        assert heavy not in base
    extras = PYPROJECT["project"]["optional-dependencies"]
    # exactly this torch: a range or no pin lets pip pull a CUDA build (shared/reference/stack.md)
    assert "torch==2.13.0" in extras["rl"] and "ray[rllib]==2.60.0" in extras["rl"]
    assert "tensorboard==2.21.0" in extras["rl"]
    assert extras["sim"] == ["ray==2.60.0"]
