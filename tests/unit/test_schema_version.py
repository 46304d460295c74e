"""results.schema.json changes only with a schema_version bump, by the rule in docs/reports.md
("Versioning"): minor for what the schema now also accepts (a new optional field), major for
what it no longer accepts or means differently (a field removed, renamed, made required or
retyped).

The recorded fingerprint is the schema without its annotations (title, description,
$comment, examples), in canonical JSON: rewording a description needs no bump. When this
test fails, bump SCHEMA_VERSION in pytest_netload/reports/json.py, the schema's title and
docs/reports.md, then add the new version's fingerprint below (keep the old ones: they say
which version each schema was).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from pytest_netload.reports.json import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "pytest_netload" / "reports" / "results.schema.json"

FINGERPRINTS = {
    "1.0": "9acdb6897c500a89f7cf14115463506547692c9c739097aaf19ff26741fadc79",
    "1.1": "ca3e5f01cb47f567ddf59732384a4451b9dd179404728f923b444c4a632fa8e3",
    "1.2": "30829e38bf541e74c80dc590d55091c59054e0b1d094627440979cbe95d46a40",
    "1.3": "66abe8ea5881fb2f68c56cbb10e6cc4f85a7a8f3171783d6d43082a63a9ea2b6",
    "1.4": "7e9e0e4835f443f38fe10ccad257da9b730c56a45591021142d4b2fc6a8fb381",
}
ANNOTATIONS = frozenset({"title", "description", "$comment", "examples"})
# keywords whose members are names (a field may be called "title"), not schema keywords
NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                       "dependentSchemas"})


def _without_annotations(node: Any, names: bool = False) -> Any:
    if isinstance(node, dict):
        return {key: _without_annotations(value, names=not names and key in NAME_MAPS)
                for key, value in node.items() if names or key not in ANNOTATIONS}
    if isinstance(node, list):
        return [_without_annotations(value) for value in node]
    return node


def fingerprint(schema: dict[str, Any]) -> str:
    canonical = json.dumps(_without_annotations(schema), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def test_the_schema_changed_only_with_a_version_bump() -> None:
    found = fingerprint(json.loads(SCHEMA.read_text()))
    recorded = FINGERPRINTS.get(SCHEMA_VERSION)
    assert recorded is not None, (
        f"schema_version {SCHEMA_VERSION} has no recorded fingerprint: add "
        f"{SCHEMA_VERSION!r}: {found!r} to FINGERPRINTS in {Path(__file__).name}")
    assert found == recorded, (
        f"{SCHEMA.name} changed but schema_version is still {SCHEMA_VERSION}: bump it by the "
        "rule in docs/reports.md (minor: the schema accepts more, e.g. a new optional field; "
        "major: it accepts less or a field means something else) in reports/json.py, the "
        f"schema's title and docs/reports.md, then record {found!r} for the new version here")


def test_an_older_fingerprint_is_never_reused() -> None:
    assert len(set(FINGERPRINTS.values())) == len(FINGERPRINTS)
    versions = [tuple(map(int, v.split("."))) for v in FINGERPRINTS]
    assert max(versions) == tuple(map(int, SCHEMA_VERSION.split(".")))


def test_the_fingerprint_ignores_annotations_but_not_fields_named_like_them() -> None:
    base = {"type": "object", "properties": {"title": {"type": "string"}}}
    assert fingerprint({**base, "description": "words"}) == fingerprint(base)
    assert fingerprint({**base, "properties": {}}) != fingerprint(base)
    retyped = {"type": "object", "properties": {"title": {"type": "number"}}}
    assert fingerprint(retyped) != fingerprint(base)


def test_the_version_is_written_where_readers_look() -> None:
    schema = json.loads(SCHEMA.read_text())
    assert schema["title"].endswith(f"schema_version {SCHEMA_VERSION}")
    assert re.fullmatch(schema["properties"]["schema_version"]["pattern"], SCHEMA_VERSION)
    docs = (ROOT / "docs" / "reports.md").read_text()
    assert f"## The results document, schema version {SCHEMA_VERSION}" in docs
