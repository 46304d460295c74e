"""--netload-history DIR: a session's trends over the earlier sessions' results files
in DIR, and this session's results added there for the next one."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

__all__ = ["add_to_history", "session_history"]


def session_history(where: str | None, doc: dict[str, Any],
                    write_errors: list[str]) -> list[dict[str, Any]] | None:
    """The earlier sessions' documents in `where`, then this one (the report's trends);
    None without a history, or while it holds none. A file there that does not load is
    named in `write_errors`, and the report has no trends."""
    from ..errors import NetloadConfigError

    if where is None or not any(Path(where).glob("*.json")):
        return None
    from ..reports.load import load_history

    try:
        return [*load_history((where,), "--netload-history"), doc]
    except NetloadConfigError as exc:
        write_errors.append(f"trends left out of the report: {exc}")
        return None


def add_to_history(where: str | None, doc: dict[str, Any], write_errors: list[str]) -> None:
    """This session's results into the history directory `where`, named by the time it
    was created (and written: `created` has whole seconds, and a directory is read in
    name order), for the next session's trends."""
    if where is None:
        return
    from ..reports import json as json_report

    stamp = "".join(c if c.isalnum() else "-" for c in str(doc.get("created", "")))
    try:
        Path(where).mkdir(parents=True, exist_ok=True)
        json_report.write(doc, Path(where) / f"results-{stamp}-{time.time_ns()}.json")
    except OSError as exc:
        write_errors.append(f"could not add the results to --netload-history {where}: "
                            f"{exc.strerror or exc}; give a writable directory")
