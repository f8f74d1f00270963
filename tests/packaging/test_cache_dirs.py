"""Working files (numba's cache, Ray's home) stay in the checkout when running from one, and go to
the user's cache folder for an installed copy."""

from __future__ import annotations

from pathlib import Path

from envs.core import install
from tests.paths import REPO_ROOT


def test_a_checkout_keeps_its_caches_inside_it():
    assert install.running_from_checkout()
    assert install.cache_dir(".numba_cache") == REPO_ROOT / ".numba_cache"


def test_an_installed_copy_uses_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setattr(install, "CHECKOUT", tmp_path / "site-packages")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert not install.running_from_checkout()
    assert install.cache_dir(".ray_home") == Path(tmp_path / "home" / ".cache" / "meeplelab" / "ray_home")
