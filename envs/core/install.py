"""What an installed meeplelab carries: its data files, and which optional extras are present.

Data files. ``seeds/`` (component data and rules notes), ``configs/`` (seed suites, example configs) and
``models/`` (the committed learned models) stay at the top of the repository, and ``pyproject.toml``
ships them inside the wheel as the data packages ``meeplelab_data.seeds``, ``meeplelab_data.configs``
and ``meeplelab_data.models`` (setuptools ``package-dir``: no copies in git). :func:`shipped_file` finds
a file in the copy that belongs to the running code: the checkout's own folder when the code runs from a
source checkout (an editable install, or ``PYTHONPATH`` pointing at the repository), else the installed
data package (a wheel in site-packages). The data packages have no ``__init__.py``; an editable install
maps them with a finder that ``importlib.resources.files`` cannot read on Python 3.11, so the installed
folder is taken from the import spec (``importlib.util.find_spec``), which every install mode provides.

Extras. The engines, agents, play, eval and replay need neither PyTorch nor Ray. ``[rl]`` brings
PyTorch, Ray RLlib and TensorBoard (``ppo:`` agents, network-guided search, ``train``); ``[sim]``
brings Ray (``simulate``, ``--workers`` above 1, ``--address``). :func:`require` is called where a
command first needs one of them and fails with one line naming the extra to install
(:class:`~envs.core.errors.MissingExtraError`; the CLI prints it and exits with code 2). It only
looks the module up, so the heavy import still happens where the module is used.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from envs.core.errors import MissingExtraError

#: the repository root when the code runs from a source checkout (site-packages when installed)
CHECKOUT = Path(__file__).resolve().parents[2]
#: the package the wheel ships the data folders in: ``meeplelab_data.seeds``, ``meeplelab_data.configs``,
#: ``meeplelab_data.models``
DATA_PACKAGE = "meeplelab_data"
DATA_FOLDERS = ("seeds", "configs", "models")

#: optional module -> the name a user knows it by
FRIENDLY_NAMES = {"torch": "PyTorch", "ray": "Ray", "tensorboard": "TensorBoard"}
#: extra -> what it is for (docs and messages)
EXTRAS = {
    "rl": "PyTorch, Ray RLlib and TensorBoard: ppo agents, network-guided search, train",
    "sim": "Ray: simulate, --workers above 1, --address",
}


def _check_folder(folder: str) -> None:
    if folder not in DATA_FOLDERS:
        raise ValueError(f"unknown data folder {folder!r}; shipped folders: {', '.join(DATA_FOLDERS)}")


def running_from_checkout() -> bool:
    """Whether the code runs from a source checkout (editable install or ``PYTHONPATH``), not from an
    installed copy in site-packages."""
    return (CHECKOUT / "pyproject.toml").is_file()


def cache_dir(name: str) -> Path:
    """Where meeplelab keeps its working files ``name`` (``.numba_cache``, ``.ray_home``): inside the
    checkout when it runs from one (``make clean`` removes them), else in the user's cache folder, so an
    installed copy never writes into site-packages."""
    if running_from_checkout():
        return CHECKOUT / name
    return Path.home() / ".cache" / "meeplelab" / name.lstrip(".")


def checkout_dir(folder: str) -> Path | None:
    """``folder`` of the source checkout the code runs from, or None when it is installed."""
    _check_folder(folder)
    path = CHECKOUT / folder
    return path if running_from_checkout() and path.is_dir() else None


def installed_dir(folder: str) -> Path | None:
    """``folder`` as the installed data package ``meeplelab_data.<folder>``, or None without one."""
    _check_folder(folder)
    try:
        spec = importlib.util.find_spec(f"{DATA_PACKAGE}.{folder}")
    except (ImportError, ValueError):
        return None
    for entry in (spec.submodule_search_locations or []) if spec is not None else []:
        if Path(entry).is_dir():
            return Path(entry)
    return None


def shipped_file(folder: str, name: str) -> Path:
    """The path of data file ``name`` (may contain ``/``) of ``folder`` (one of :data:`DATA_FOLDERS`): the
    checkout's copy when the code runs from a checkout, else the installed one. When neither has
    the folder, the checkout path is returned, so the loader's "not found" error names it."""
    base = checkout_dir(folder) or installed_dir(folder) or CHECKOUT / folder
    return base / name


def has_module(name: str) -> bool:
    """Whether the top-level module ``name`` can be imported (looked up, not imported)."""
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def require(*modules: str, extra: str, what: str = "this command") -> None:
    """MissingExtraError, in one line naming the extra to install, unless every module is present.

    ``require("ray", extra="sim")`` -> ``this command needs Ray: pip install 'meeplelab[sim]'``."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; extras: {', '.join(EXTRAS)}")
    missing = [FRIENDLY_NAMES.get(m, m) for m in modules if not has_module(m)]
    if missing:
        names = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
        raise MissingExtraError(f"{what} needs {names}: pip install 'meeplelab[{extra}]'")
