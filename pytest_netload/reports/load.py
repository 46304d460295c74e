"""Reading a saved results file back: `load(path)` returns the checked document.

Every problem is one ResultsFileError (a NetloadConfigError) whose message starts with the
file's path and says what is wrong: the file is missing or unreadable, is not JSON (with
line and column), ends early (a run interrupted while writing), was written by a newer
pytest-netload, or breaks the schema (with the JSON path of the field). Only regular
files up to MAX_FILE_BYTES are read (a FIFO or /dev/zero is refused, never waited on).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ..errors import NetloadConfigError
from ..files import MIB, read_input_file
from .schema import MAX_DEPTH, ResultsFileError, validate

__all__ = ["ResultsFileError", "load", "load_history", "parse"]

MAX_FILE_BYTES = 256 * MIB
"""The largest results file read (a session's document is kilobytes to a few megabytes)."""
_WHERE = "in --netload-report-dir"
# what a file cut inside a value leaves after the point where parsing failed
_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")
_NUMBER_END = re.compile(r"^[-+.eE0-9]+$")


def _read(path: str) -> str:
    try:
        raw = read_input_file(path, MAX_FILE_BYTES, what="results file",
                              fix=f"give the results.json a test session wrote ({_WHERE})")
    except NetloadConfigError as exc:   # not a regular file, or too large
        raise ResultsFileError(path, str(exc).removeprefix(f"{path}: ")) from None
    except FileNotFoundError:
        raise ResultsFileError(path, f"no such file; give the results.json a test session "
                               f"wrote ({_WHERE})") from None
    except IsADirectoryError:
        raise ResultsFileError(path, "is a directory; give the results.json inside it") from None
    except OSError as exc:
        raise ResultsFileError(path, f"cannot be read: {exc.strerror or exc}; check the path "
                               "and its permissions") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsFileError(path, f"is not UTF-8 text (byte {exc.start}); it is not a "
                               f"results file: give the results.json a test session wrote "
                               f"({_WHERE})") from None


def parse(text: str, source: str) -> Any:
    """The JSON value of `text`; errors name `source`, the line and the column."""
    if not text.strip():
        raise ResultsFileError(source, "is empty (a run interrupted before it wrote its "
                               f"results?); give a complete results.json ({_WHERE})")
    try:
        return json.loads(text)
    except RecursionError:
        raise ResultsFileError(source, f"is nested deeper than any results document (at most "
                               f"{MAX_DEPTH} levels): it is not a results file; give the "
                               f"results.json a test session wrote ({_WHERE})") from None
    except json.JSONDecodeError as exc:
        rest = text[exc.pos:].rstrip()
        if not rest or exc.msg.startswith("Unterminated string") or _NUMBER_END.match(rest) \
                or any(word.startswith(rest) for word in _LITERALS):
            end = len(text.rstrip())
            line = text.count("\n", 0, end) + 1
            column = end - text.rfind("\n", 0, end) - 1  # of its last character
            raise ResultsFileError(
                source, f"is truncated: it ends at line {line} column {column}, before its "
                "JSON document does; the file was cut off (a run interrupted while writing, "
                "or an incomplete copy): give a complete copy, or run the session again"
            ) from None
        raise ResultsFileError(source, f"is not valid JSON: {exc.msg} at line {exc.lineno} "
                               f"column {exc.colno}; give the results.json a test session "
                               f"wrote ({_WHERE})") from None


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read, parse and check a results file (schema reports/results.schema.json)."""
    source = os.fspath(path)
    document = parse(_read(source), source)
    validate(document, source)
    assert isinstance(document, dict)
    return document


def load_history(paths: list[str] | tuple[str, ...], what: str) -> list[dict[str, Any]]:
    """The results documents of `paths` (results files, or directories whose *.json files
    are read: a history directory), oldest first by their `created` time. An empty
    directory is an error naming `what` (the option that gave it)."""
    from pathlib import Path

    files: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = sorted(str(p) for p in Path(path).glob("*.json"))
            if not found:
                raise NetloadConfigError(
                    f"{what} {path}: the directory holds no *.json results files; give "
                    "results.json files or a directory of them")
            files += found
        else:
            files.append(path)
    return sorted((load(f) for f in files), key=lambda d: d["created"])
