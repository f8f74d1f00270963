"""Read a user-supplied text file (config, data file, record, log) or fail with one line naming it.

Every loader of YAML, JSON or plain-text input goes through :func:`read_text`, so a missing file,
a folder, an unreadable file or bytes that are not UTF-8 all give the same kind of clear error
instead of a traceback from deep inside a parser. Hostile files are refused the same way before
any parser sees them: a file over :data:`MAX_BYTES` or a line over :data:`MAX_LINE_CHARS`; YAML
(:func:`read_yaml`, :func:`parse_yaml`) nested deeper than :data:`MAX_DEPTH` or whose aliases
expand past :data:`MAX_NODES` nodes (the "billion laughs"); JSON (:func:`parse_json`) nested
deeper than the interpreter can parse.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from envs.core.errors import ConfigError

#: the largest file read (bytes): records of long games with explanations stay far below it
MAX_BYTES = 256 * 1024 * 1024
#: the longest line accepted (characters): a record's longest line (one decision) is a few KB
MAX_LINE_CHARS = 1024 * 1024
#: the deepest YAML nesting accepted (configs nest three or four levels)
MAX_DEPTH = 64
#: the most YAML nodes a document may expand to, aliases followed
MAX_NODES = 100_000


def read_text(path: str | Path, what: str, error: type[ConfigError] = ConfigError,
              max_bytes: int = MAX_BYTES, max_line: int = MAX_LINE_CHARS) -> str:
    """The UTF-8 text of ``path``; any problem raises ``error`` naming ``what`` and the file.

    ``what`` says what the file is for the message ("config", "Dorfromantik data file", ...).
    A file over ``max_bytes`` or with a line over ``max_line`` characters is refused unparsed."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError as exc:
        raise error(f"{what} {path} not found") from exc
    except IsADirectoryError as exc:
        raise error(f"{what} {path} is a folder, not a file") from exc
    except OSError as exc:
        raise error(f"{what} {path} cannot be read: {exc.strerror or exc}") from exc
    if len(data) > max_bytes:
        raise error(f"{what} {path} is larger than {_size(max_bytes)}; refused")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what} {path} is not UTF-8 text (byte {exc.start}: "
                    f"{data[exc.start:exc.start + 1]!r})") from exc
    if len(text) > max_line:
        number, length = max(enumerate(map(len, text.splitlines()), start=1), key=lambda p: p[1])
        if length > max_line:
            raise error(f"{what} {path}: line {number} is {_size(length, 'characters')} long "
                        f"(at most {_size(max_line, 'characters')}); refused")
    return text


def _size(n: int, unit: str = "bytes") -> str:
    return f"{n / 2**20:.1f} M{unit}" if n >= 2**20 else f"{n} {unit}"


def read_yaml(path: str | Path, what: str) -> Any:
    """The YAML document of ``path`` (:func:`read_text`, then :func:`parse_yaml`); ConfigError
    naming ``what`` and the file for bytes that are not YAML or a document refused as hostile."""
    return parse_yaml(read_text(path, what), f"{what} {path}")


def parse_yaml(text: str, where: str, error: type[ConfigError] = ConfigError) -> Any:
    """``yaml.safe_load(text)``, but the node tree is checked before anything is built: ``error``
    naming ``where`` for YAML syntax errors, nesting over :data:`MAX_DEPTH`, aliases that expand
    past :data:`MAX_NODES` nodes or refer to themselves."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_nodes(node, where, error)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0]
        raise error(f"{where} is not valid YAML: {first}") from None
    except RecursionError:
        raise error(f"{where} is nested too deeply to read (at most {MAX_DEPTH} levels); refused") from None
    finally:
        loader.dispose()


def _check_nodes(root: yaml.Node, where: str, error: type[ConfigError]) -> None:
    """Walk the composed nodes once (aliases are shared nodes, measured once each)."""
    measured: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded size, height)
    open_nodes: set[int] = set()

    def measure(node: yaml.Node, depth: int) -> tuple[int, int]:
        key = id(node)
        if key in open_nodes:
            raise error(f"{where}: an alias refers to a node that contains it; refused")
        if key not in measured:
            if depth > MAX_DEPTH:
                raise error(f"{where} is nested more than {MAX_DEPTH} levels deep; refused")
            open_nodes.add(key)
            if isinstance(node, yaml.SequenceNode):
                children = list(node.value)
            elif isinstance(node, yaml.MappingNode):
                children = [part for pair in node.value for part in pair]
            else:
                children = []
            parts = [measure(child, depth + 1) for child in children]
            open_nodes.discard(key)
            measured[key] = (1 + sum(p[0] for p in parts), 1 + max((p[1] for p in parts), default=0))
        size, height = measured[key]
        if depth + height - 1 > MAX_DEPTH:
            raise error(f"{where} is nested more than {MAX_DEPTH} levels deep; refused")
        if size > MAX_NODES:
            raise error(f"{where}: its aliases expand to more than {MAX_NODES:,} values "
                        "(an alias bomb?); refused")
        return measured[key]

    measure(root, 1)


def parse_json(text: str, where: str, error: type[ConfigError] = ConfigError) -> Any:
    """``json.loads(text)``; ``error`` naming ``where`` for text that is not JSON or is nested too
    deeply to parse (the parser's recursion limit)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{where} is not JSON ({exc.msg}, line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise error(f"{where} is nested too deeply to read; refused") from None
