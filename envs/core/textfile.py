"""Read a user-supplied text file (config, data file, log) or fail with one line naming it.

Every loader of YAML, JSON or plain-text input goes through :func:`read_text`, so a missing file,
a folder, an unreadable file or bytes that are not UTF-8 all give the same kind of clear error
instead of a traceback from deep inside a parser.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from envs.core.errors import ConfigError


def read_text(path: str | Path, what: str, error: type[ConfigError] = ConfigError) -> str:
    """The UTF-8 text of ``path``; any problem raises ``error`` naming ``what`` and the file.

    ``what`` says what the file is for the message ("config", "Dorfromantik data file", ...)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise error(f"{what} {path} not found") from exc
    except IsADirectoryError as exc:
        raise error(f"{what} {path} is a folder, not a file") from exc
    except OSError as exc:
        raise error(f"{what} {path} cannot be read: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what} {path} is not UTF-8 text (byte {exc.start}: "
                    f"{data[exc.start:exc.start + 1]!r})") from exc


def read_yaml(path: str | Path, what: str) -> Any:
    """The YAML document of ``path`` (:func:`read_text`, then ``yaml.safe_load``); ConfigError naming
    ``what`` and the file for bytes that are not YAML."""
    text = read_text(path, what)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0]
        raise ConfigError(f"{what} {path} is not valid YAML: {first}") from None
