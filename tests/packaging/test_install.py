"""The wheel, installed NOT editable into a fresh virtual environment and run from a folder outside the
checkout, plays, evaluates and simulates every game: its data files ship as package data.

Offline and quick: the wheel is built with this venv's setuptools (``--no-build-isolation``) from a copy
of the sources, and the fresh venv installs it without dependencies; a ``.pth`` file then appends this
venv's site-packages (numpy, numba, Ray...) after its own. Python runs the ``.pth`` files of a venv's
own site-packages only, so the editable install of this checkout (a finder started by a ``.pth`` file
here) stays off in the fresh venv; the tests check that every module and data file comes from it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.packaging.test_data_files import data_files
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow

GAMES = ("cartographers", "cascadia", "dorfromantik")
SOURCES = ("envs", "agents", "experiments", "seeds", "configs", "models")


@dataclass(frozen=True)
class Install:
    wheel: Path
    venv: Path
    site: Path  # the fresh venv's site-packages
    work: Path  # the working directory of every command, outside the checkout
    env: dict[str, str]

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), cwd=self.work, env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    def meeplelab(self, *args: str) -> str:
        out = self.run(str(self.venv / "bin" / "meeplelab"), *args)
        assert out.returncode == 0, f"meeplelab {' '.join(args)}: exit {out.returncode}\n{out.stderr[-4000:]}"
        assert "Traceback" not in out.stderr
        return out.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Install:
    root = tmp_path_factory.mktemp("install")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO_ROOT / name, source / name)
    for folder in SOURCES:
        shutil.copytree(REPO_ROOT / folder, source / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-index",
                            "--no-build-isolation", "-w", str(root / "dist"), str(source)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-4000:]
    (wheel,) = (root / "dist").glob("meeplelab-*.whl")

    env_dir = root / "venv"
    venv.create(env_dir, with_pip=False, symlinks=True)
    python = env_dir / "bin" / "python"
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                           "--no-index", str(wheel)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.run([str(python), "-c", purelib], capture_output=True, text=True,
                               check=True).stdout.strip())
    ours = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (site / "zz_meeplelab_test_dependencies.pth").write_text("".join(f"{path}\n" for path in ours))

    work = root / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "NUMBA_CACHE_DIR", "RAY_ADDRESS")}
    # no NUMBA_CACHE_DIR: envs/core/numba_cache.py picks the installed copy's cache folder, which every
    # command then shares (compiling the kernels costs about a minute, once)
    env.update(PATH=f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(env_dir))
    return Install(wheel, env_dir, site, work, env)


def test_the_wheel_holds_the_data_files(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    for folder in ("seeds", "configs", "models"):
        shipped = {n.removeprefix(f"meeplelab_data/{folder}/") for n in names
                   if n.startswith(f"meeplelab_data/{folder}/")}
        assert shipped == data_files(folder)
    assert {"experiments/replay/assets/viewer.html", "envs/core/install.py"} <= names


def test_everything_comes_from_the_installed_copy(installed):
    probe = """
import json, sys
import envs, agents, experiments
from envs.core import install
from envs.cartographers.data import DEFAULT_PATH as cartographers
from envs.cascadia.data import DEFAULT_PATH as cascadia
from envs.dorfromantik.data import DEFAULT_PATH as dorfromantik
from experiments.eval.suites import SUITES_FILE
import experiments.cli.main
print(json.dumps({
    "modules": [envs.__file__, agents.__file__, experiments.__file__, experiments.cli.main.__file__],
    "data": [str(p) for p in (cartographers, cascadia, dorfromantik, SUITES_FILE)],
    "checkout": str(install.checkout_dir("seeds")),
    "finders": [repr(f) for f in sys.meta_path],
    "path": sys.path,
}))
"""
    out = installed.run(str(installed.venv / "bin" / "python"), "-c", probe)
    assert out.returncode == 0, out.stderr[-4000:]
    seen = json.loads(out.stdout)
    for path in seen["modules"] + seen["data"]:
        assert Path(path).is_relative_to(installed.site), path
        assert not Path(path).resolve().is_relative_to(REPO_ROOT.resolve()), path
    assert seen["data"][0].endswith("meeplelab_data/seeds/cartographers.yaml")
    assert seen["data"][3].endswith("meeplelab_data/configs/suites.yaml")
    assert seen["checkout"] == "None"
    assert not any("editable" in f.lower() for f in seen["finders"]), seen["finders"]
    assert str(REPO_ROOT) not in seen["path"] and "" not in seen["path"][1:]


@pytest.mark.parametrize("game", GAMES)
def test_play(installed, game):
    out = installed.meeplelab("play", game, "--agent", "random", "--seed", "1")
    assert "total" in out or "final score" in out


@pytest.mark.parametrize("game", GAMES)
def test_eval_with_a_shipped_suite(installed, game):
    out_dir = installed.work / f"eval-{game}"
    installed.meeplelab("eval", game, "--agents", "random", "--suite", "smoke", "--no-progress",
                        "--out", str(out_dir))
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["seeds"] == "suite smoke" and summary["games"] == 5


def test_a_committed_model_plays_by_its_models_path(installed):
    """``learned:models/<folder>`` and the placement search's ``model=`` find the shipped model (and a
    pattern table beside it) from a folder with no ``models/`` of its own."""
    assert not (installed.work / "models").exists()
    out_dir = installed.work / "eval-learned"
    installed.meeplelab("eval", "dorfromantik", "--agents",
                        "learned:models/dorfromantik,placement:simulations=4,model=models/dorfromantik",
                        "--suite", "smoke", "--no-progress", "--out", str(out_dir))
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["games"] == 5 and summary["games_played"] == 10
    patterns_dir = installed.work / "eval-patterns"  # a model with a pattern table beside model.json
    installed.meeplelab("solo-eval", "--agents", "learned:models/cartographers_solo_patterns", "--games", "2",
                        "--no-progress", "--out", str(patterns_dir))
    assert (patterns_dir / "games.csv").read_text().count("cartographers_solo_patterns") == 2


@pytest.mark.parametrize("game", GAMES)
def test_simulate(installed, game):
    """On a local Ray. ``--engine python`` plays with the kernels that test_play compiled: the compiled
    whole-game loops of ``--engine auto`` would add a minute of compiling per game, and their results
    are the same (tests/experiments/sim)."""
    out_dir = installed.work / f"simulate-{game}"
    out = installed.meeplelab("simulate", game, "--games", "4", "--chunk", "2", "--workers", "1",
                              "--engine", "python", "--out", str(out_dir), "--json")
    assert json.loads(out)["games"] == 4
    assert len(list(out_dir.glob("chunk_*.parquet"))) == 2


def test_an_installed_copy_keeps_its_caches_out_of_site_packages(installed):
    """After playing and simulating (numba's cache, Ray's home), nothing was written into the install."""
    probe = ("from envs.core.install import cache_dir; from experiments.common.ray_setup import RAY_HOME; "
             "print(cache_dir('.numba_cache')); print(RAY_HOME)")
    out = installed.run(str(installed.venv / "bin" / "python"), "-c", probe)
    assert out.returncode == 0, out.stderr[-2000:]
    for line in out.stdout.split():
        assert not Path(line).is_relative_to(installed.site), line
    assert not (installed.site / ".numba_cache").exists() and not (installed.site / ".ray_home").exists()

