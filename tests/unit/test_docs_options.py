"""docs/plugin.md's option table is the plugin's: every option and ini key of
plugin/options.py, with its default, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

from pytest_netload.plugin.options import SETTINGS

DOC = Path(__file__).parents[2] / "docs" / "plugin.md"
ROW = re.compile(r"^\| `(--netload-[a-z-]+)` / `(netload_[a-z_]+)` \| ([^|]+) \|")
NO_DEFAULT = {"(none)", "none"}


def documented() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            flag, ini, default = m.group(1), m.group(2), m.group(3).strip()
            rows[ini] = (flag, "" if default in NO_DEFAULT else default.strip("`"))
    return rows


def test_every_option_is_in_the_table_with_its_flag_and_default() -> None:
    rows = documented()
    for s in SETTINGS:
        assert s.name in rows, f"docs/plugin.md's option table lacks {s.flag} / {s.name}"
        flag, default = rows[s.name]
        assert flag == s.flag, (s.name, flag)
        assert default == s.default, f"{s.flag}: the table says {default!r}, the code {s.default!r}"


def test_the_table_names_no_option_the_plugin_lacks() -> None:
    assert set(documented()) == {s.name for s in SETTINGS}
