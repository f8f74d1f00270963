"""Headless Chromium (Debian's ``chromium`` package, installed by ``make browser``) for replay pages:
a screenshot of decision k, or the DOM after the page's scripts ran (what the browser tests read)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from envs.core.errors import ConfigError

#: window size of screenshots (CSS pixels)
WINDOW = (1400, 1000)


def chromium() -> str:
    """Path of the chromium binary; ConfigError naming ``make browser`` when it is missing."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise ConfigError("no chromium found: install Debian's package with `make browser`")
    return found


def _run(page: str | Path, step: int | None, *flags: str, timeout: float = 60.0) -> str:
    url = Path(page).resolve().as_uri() + ("" if step is None else f"#step={int(step)}")
    with tempfile.TemporaryDirectory(prefix="meeplelab-chromium-") as profile:
        command = [chromium(), "--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                   "--mute-audio", f"--user-data-dir={profile}", "--virtual-time-budget=5000", *flags, url]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.insert(2, "--no-sandbox")  # chromium refuses to run as root inside its sandbox
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ConfigError(f"chromium failed on {page} (exit {done.returncode}): {last}")
    return done.stdout


def dump_dom(page: str | Path, step: int | None = None) -> str:
    """The page's DOM (serialised HTML) after its scripts ran, opened at decision ``step``."""
    return _run(page, step, "--dump-dom")


def screenshot(page: str | Path, png: str | Path, step: int | None = None,
               window: tuple[int, int] = WINDOW) -> Path:
    """A PNG of the page opened at decision ``step``."""
    png = Path(png).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    _run(page, step, f"--window-size={window[0]},{window[1]}", f"--screenshot={png}")
    if not png.is_file():
        raise ConfigError(f"chromium wrote no screenshot {png}")
    return png
