"""The results document's JSON Schema (results.schema.json, draft 2020-12) and its check.

`validate(document, source)` raises :class:`ResultsFileError` (a
``NetloadConfigError``) naming the file, the JSON path of the first problem
and the field, e.g.::

    results.json: $.tests[0].measurements[1].throughput_pps: 'fast' is not of type 'number'

A document written by a newer pytest-netload (a higher ``schema_version``)
is refused before the schema is applied, with "upgrade" in the message; so is
one nested deeper than MAX_DEPTH or holding a number that is not finite (NaN,
Infinity), with the JSON path of the first one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from ..errors import NetloadConfigError
from .json import SCHEMA_VERSION

__all__ = ["MAX_DEPTH", "SCHEMA_FILE", "ResultsFileError", "check_shape", "check_version",
           "schema", "validate"]

SCHEMA_FILE = "results.schema.json"
MAX_DEPTH = 64
"""The deepest nesting a results document may have (a session's is about 10 levels)."""
_FIX = "give the results.json a test session wrote, unedited (docs/reports.md)"
_VERSION = re.compile(r"^(\d+)\.(\d+)$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ResultsFileError(NetloadConfigError):
    """A results file that cannot be used: ``source`` names the file, ``json_path`` the
    place in it (``$`` for the whole document) and ``field`` the key, when there is one."""

    def __init__(self, source: str, problem: str, *, json_path: str | None = None,
                 field: str | None = None) -> None:
        where = f"{source}: {json_path}: " if json_path else f"{source}: "
        super().__init__(where + problem)
        self.source = source
        self.json_path = json_path
        self.field = field


@cache
def schema() -> dict[str, Any]:
    """The schema, read once from the package data."""
    text = resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    Draft202012Validator.check_schema(schema())
    return Draft202012Validator(schema())


def json_path(parts: Sequence[str | int]) -> str:
    """``$.tests[0].measurements[2]['odd key']`` for the parts of a location."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.match(part):
            out += f".{part}"
        else:
            out += f"[{part!r}]"
    return out


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _version(text: str) -> tuple[int, int]:
    match = _VERSION.match(text)
    assert match is not None
    return int(match[1]), int(match[2])


def check_version(document: Mapping[str, Any], source: str) -> None:
    """Refuse a document of a schema_version this package does not read."""
    version = document.get("schema_version")
    if not isinstance(version, str) or not _VERSION.match(version):
        if "schema_version" not in document:
            raise ResultsFileError(
                source, "not a pytest-netload results document: it has no schema_version "
                "(give the results.json a test session wrote)", json_path="$",
                field="schema_version")
        raise ResultsFileError(
            source, f"schema_version {_short(version)} is not a version like {SCHEMA_VERSION!r}",
            json_path="$.schema_version", field="schema_version")
    if _version(version) > _version(SCHEMA_VERSION):
        raise ResultsFileError(
            source, f"written by a newer pytest-netload (schema {version}); upgrade "
            f"pytest-netload to read it (this one reads schema {SCHEMA_VERSION})",
            json_path="$.schema_version", field="schema_version")
    # docs/reports.md, "Versioning": a minor bump only lets the schema accept more, so a
    # document of an older minor of the same major is read; another major is not
    if _version(version)[0] != _version(SCHEMA_VERSION)[0]:
        raise ResultsFileError(
            source, f"schema {version} is not one this pytest-netload reads (it reads "
            f"schema {SCHEMA_VERSION} and older {_version(SCHEMA_VERSION)[0]}.x)",
            json_path="$.schema_version", field="schema_version")


def _describe(error: Any) -> tuple[str, str | None, list[str | int]]:
    """(problem, field, path) of a jsonschema error, in words that name the field."""
    path: list[str | int] = list(error.absolute_path)
    field = next((p for p in reversed(path) if isinstance(p, str)), None)
    kind = error.validator
    if kind == "required":
        missing = next((name for name in error.validator_value
                        if isinstance(error.instance, Mapping) and name not in error.instance),
                       None)
        return f"missing required field {missing!r}", missing, path
    if kind == "additionalProperties" and isinstance(error.instance, Mapping):
        allowed = set(error.schema.get("properties", {}))
        extra = sorted(k for k in error.instance if k not in allowed)
        name = extra[0] if extra else None
        return (f"unexpected field {name!r} (not in schema {SCHEMA_VERSION})",
                name, [*path, name] if name is not None else path)
    if "propertyNames" in error.schema_path and isinstance(error.instance, str):
        problem = (f"unexpected field {error.instance!r} (field names here match "
                   f"{error.validator_value!r})")
        return problem, error.instance, [*path, error.instance]
    if kind == "enum":
        choices = ", ".join(repr(v) for v in error.validator_value)
        return f"{_short(error.instance)} is not one of {choices}", field, path
    if kind == "const":
        return f"{_short(error.instance)} is not {error.validator_value!r}", field, path
    if kind == "type":
        expected = error.validator_value
        text = " or ".join(expected) if isinstance(expected, list) else expected
        return f"{_short(error.instance)} is not of type {text}", field, path
    if kind in ("oneOf", "anyOf") and error.context:
        # An alternative whose type matched got further: its problem is the useful one.
        wrong_type = {e.relative_schema_path[0] for e in error.context
                      if e.validator == "type" and not e.relative_path}
        further = [e for e in error.context if e.relative_schema_path[0] not in wrong_type]
        if further:
            return _describe(max(further, key=lambda e: len(e.relative_path)))
        names = [t for e in error.context if e.validator == "type"
                 for t in (e.validator_value if isinstance(e.validator_value, list)
                           else [e.validator_value])]
        return f"{_short(error.instance)} is not of type {' or '.join(names)}", field, path
    message = error.message
    return (message if len(message) <= 200 else message[:197] + "..."), field, path


def check_shape(document: Any, source: str) -> None:
    """Refuse what no results document holds and JSON Schema cannot see: nesting deeper
    than MAX_DEPTH (it would exhaust the validator's recursion) and numbers that are not
    finite (NaN, Infinity: Python's json reads them, but no figure of a valid measurement
    is one, and a NaN throughput must never read as a pass)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_DEPTH:
            raise ResultsFileError(
                source, f"nested deeper than any results document (at most {MAX_DEPTH} "
                "levels): it is not a results file; give the results.json a test session "
                "wrote", json_path=json_path(path[:8]) + "...")
        if isinstance(value, Mapping):
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        for key, item in items:
            if isinstance(item, float) and not math.isfinite(item):
                text = "NaN" if math.isnan(item) else "Infinity" if item > 0 else "-Infinity"
                raise ResultsFileError(
                    source, f"{text} is not a finite number: no valid measurement has one, so "
                    "the file is not trusted; give the results.json a test session wrote, "
                    "unedited", json_path=json_path([*path, key]),
                    field=key if isinstance(key, str) else None)
            if isinstance(item, (Mapping, list)):
                stack.append((item, (*path, key)))


def validate(document: Any, source: str) -> None:
    """Check `document` against the schema; `source` names it in errors (a file path).

    Raises ResultsFileError (a NetloadConfigError) naming `source`, the JSON path of the
    first error and the field.
    """
    from jsonschema.exceptions import relevance  # type: ignore[import-untyped]

    if not isinstance(document, Mapping):
        raise ResultsFileError(
            source, f"not a pytest-netload results document: the top level is a "
            f"{type(document).__name__}, not an object", json_path="$")
    check_version(document, source)
    check_shape(document, source)
    errors = list(_validator().iter_errors(document))
    if not errors:
        return
    error = max(errors, key=relevance)  # the shallowest, strongest one; _describe descends
    problem, field, path = _describe(error)
    raise ResultsFileError(source, f"{problem}; {_FIX}", json_path=json_path(path),
                           field=field)
