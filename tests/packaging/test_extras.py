"""Without PyTorch or Ray (a base ``pip install``), a command that needs them says in one line which
extra to install and exits with code 2; the engines still play."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from envs.core.errors import MeeplelabError, MissingExtraError
from envs.core.install import has_module, require
from tests.paths import REPO_ROOT

POLICY = REPO_ROOT / "models" / "cartographers_solo" / "policy.pt"
CONFIG = REPO_ROOT / "configs" / "ppo" / "cartographers_solo.yaml"

#: makes importing torch, ray or tensorboard fail in the interpreter it runs in, as if not installed
HIDE = """
import sys

class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "ray", "tensorboard"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Hide())
"""

#: each case is one CLI call in such an interpreter; its exit code and stderr are printed as JSON
HIDDEN = HIDE + """
import contextlib, io, json
from experiments.cli.main import run

results = []
for args in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = run(args)
    results.append([code, err.getvalue()])
print(json.dumps(results))
"""

RL = "error: this command needs PyTorch: pip install 'meeplelab[rl]'"
RAY = "error: this command needs Ray: pip install 'meeplelab[sim]'"
CASES = {
    "ppo agent": (["play", "cartographers", "--agent", f"ppo:{POLICY}", "--seed", "1"], RL),
    "search with a network": (["play", "cartographers", "--agent",
                               f"mcts:value=ppo:{POLICY},simulations=2", "--seed", "1"], RL),
    "train": (["train", "cartographers", "--config", str(CONFIG), "--out", "{tmp}/train"],
              "error: this command needs PyTorch, Ray and TensorBoard: pip install 'meeplelab[rl]'"),
    "simulate on a cluster": (["simulate", "dorfromantik", "--games", "2", "--chunk", "1",
                               "--address", "127.0.0.1:1", "--out", "{tmp}/sim_cluster"], RAY),
    "eval on a cluster": (["eval", "dorfromantik", "--agents", "random", "--games", "2",
                           "--address", "127.0.0.1:1", "--no-progress"], RAY),
    "simulate here": (["simulate", "dorfromantik", "--games", "2", "--chunk", "1",
                       "--out", "{tmp}/sim"], None),
    "eval on workers": (["eval", "dorfromantik", "--agents", "random", "--games", "2", "--workers", "2",
                         "--no-progress"], None),
    "eval here": (["eval", "dorfromantik", "--agents", "random", "--games", "2", "--no-progress"], None),
}


@pytest.fixture(scope="module")
def hidden_results(tmp_path_factory) -> dict[str, tuple[int, str]]:
    tmp = tmp_path_factory.mktemp("extras")
    calls = [[a.replace("{tmp}", str(tmp)) for a in args] for args, _ in CASES.values()]
    out = subprocess.run([sys.executable, "-c", HIDDEN, json.dumps(calls)], cwd=tmp, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return dict(zip(CASES, (tuple(r) for r in json.loads(out.stdout.splitlines()[-1])), strict=True))


@pytest.mark.parametrize("case", [c for c, (_, line) in CASES.items() if line])
def test_a_command_names_the_missing_extra_in_one_line(hidden_results, case):
    code, err = hidden_results[case]
    assert (code, err.strip()) == (2, CASES[case][1])


@pytest.mark.parametrize("case", ["eval here", "eval on workers", "simulate here"])
def test_the_engines_play_without_torch_or_ray(hidden_results, case):
    """Short local jobs play in-process (experiments.common.local_first), so they need no Ray."""
    code, err = hidden_results[case]
    assert code == 0, err


def test_require():
    require("numpy", "yaml", extra="rl")  # present: nothing happens
    with pytest.raises(MissingExtraError) as caught:
        require("numpy", "torch_not_installed_here", extra="sim", what="the ppo agent")
    assert str(caught.value) == "the ppo agent needs torch_not_installed_here: pip install 'meeplelab[sim]'"
    assert isinstance(caught.value, MeeplelabError) and isinstance(caught.value, ImportError)
    assert not isinstance(caught.value, ModuleNotFoundError)  # "not implemented yet" catches those
    with pytest.raises(ValueError, match="unknown extra"):
        require("numpy", extra="gpu")


def test_has_module_looks_up_without_importing():
    assert has_module("json") and not has_module("no_such_module_here")
    assert "this" not in sys.modules
    assert has_module("this") and "this" not in sys.modules  # found, not imported (it would print)


GYM_WITHOUT_RAY = HIDE + """
import gymnasium, numpy as np
import envs
for game in ("Cartographers", "Cascadia", "Dorfromantik"):
    env = gymnasium.make(f"meeplelab/{game}-v0")
    obs, info = env.reset(seed=1)
    legal = np.flatnonzero(obs["action_mask"])
    env.step(int(legal[0]))
    print(game, "ok")
"""


def test_the_gymnasium_envs_need_no_ray():
    """The single-agent envs import no Ray (the RLlib multi-agent classes are built on first use)."""
    out = subprocess.run([sys.executable, "-c", GYM_WITHOUT_RAY], cwd=REPO_ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["Cartographers", "ok", "Cascadia", "ok", "Dorfromantik", "ok"]
