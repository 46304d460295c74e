"""Known loss inside a built-in DUT, with nftables.

The rules go into table ``inet netload``, chain ``forward`` (filter hook,
priority 0, policy accept) of the DUT's namespace. The match comes first in
each rule, so only matching packets advance the rule's number generator and
the rule's own counter counts exactly the packets it dropped.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
from typing import Any, Protocol, Self

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError

__all__ = ["NftDropRule", "drop_every_nth", "drop_random", "drop_rule_counters", "rewrite"]

REWRITE_TABLE = "netload_rewrite"

TABLE = "netload"
FAMILY = "inet"
CHAIN = "forward"
RANDOM_SCALE = 1_000_000

_HANDLE_RE = re.compile(r"# handle (\d+)\s*$", re.MULTILINE)


class _RunsCommands(Protocol):
    namespace: str

    def run(
        self, cmd: list[str], *, input: str | None = ..., check: bool = ..., timeout_s: float = ...
    ) -> Any: ...


def _nft(dut: _RunsCommands, args: list[str], *, input: str | None = None) -> str:
    """Run nft in the DUT namespace; a failure raises with nft's own stderr."""
    if shutil.which("nft") is None:
        raise NetloadEnvironmentError(
            "nft is not installed; the loss helpers need nftables "
            "(Debian/Ubuntu: apt-get install nftables)"
        )
    proc = dut.run(["nft", *args], input=input, check=False)
    if proc.returncode != 0:
        raise NetloadEnvironmentError(
            f"`nft {' '.join(args)}` in DUT namespace {dut.namespace} failed "
            f"(exit status {proc.returncode}): {(proc.stderr or '').strip()}"
        )
    return str(proc.stdout)


class NftDropRule:
    """One drop rule in the DUT; ``dropped()`` reads its counter, ``remove()`` deletes it.

    Also a context manager that removes the rule on exit.
    """

    def __init__(self, dut: _RunsCommands, handle: int, comment: str, rule: str) -> None:
        self.dut = dut
        self.handle = handle
        self.comment = comment
        self.rule = rule
        self._removed = False

    def __repr__(self) -> str:
        return f"NftDropRule({self.rule!r}, handle={self.handle})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()

    def dropped(self) -> int:
        """Packets this rule has dropped so far (its own nftables counter)."""
        if self._removed:
            raise NetloadConfigError(
                f"{self!r} was removed; read dropped() before calling remove()"
            )
        for rule in _chain_rules(self.dut):
            if rule.get("handle") != self.handle:
                continue
            for expr in rule.get("expr", []):
                if isinstance(expr, dict) and "counter" in expr:
                    return int(expr["counter"]["packets"])
        raise NetloadEnvironmentError(
            f"{self!r}: the rule or its counter is gone from {FAMILY} {TABLE} {CHAIN} in "
            f"DUT namespace {self.dut.namespace}; something else changed the ruleset"
        )

    def remove(self) -> None:
        """Delete the rule (and the table once it holds no rule); idempotent."""
        if self._removed:
            return
        _nft(self.dut, ["delete", "rule", FAMILY, TABLE, CHAIN, "handle", str(self.handle)])
        self._removed = True
        _drop_table_if_empty(self.dut)


def _rules(dut: _RunsCommands, what: list[str]) -> list[dict[str, Any]]:
    """The rules `nft -j list <what>` prints, as its JSON gives them."""
    text = _nft(dut, ["-j", "list", *what])
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NetloadEnvironmentError(
            f"`nft -j list {what[0]}` printed something that is not JSON ({exc}): "
            f"{text[:200]!r}"
        ) from exc
    return [item["rule"] for item in doc.get("nftables", [])
            if isinstance(item, dict) and item.get("rule")]


def _chain_rules(dut: _RunsCommands) -> list[dict[str, Any]]:
    return _rules(dut, ["chain", FAMILY, TABLE, CHAIN])


def _drop_table_if_empty(dut: _RunsCommands) -> None:
    if not _chain_rules(dut):
        _nft(dut, ["delete", "table", FAMILY, TABLE])


def _add_rule(dut: _RunsCommands, match: str, selector: str) -> NftDropRule:
    if not isinstance(match, str) or not match.strip() or any(c in match for c in '\n;#"'):
        raise NetloadConfigError(
            f"match = {match!r} must be one nftables match expression without newlines, "
            "';', '#' or quotes, e.g. 'udp dport 9' or 'ip daddr 198.19.0.2'"
        )
    comment = f"netload-{secrets.token_hex(4)}"
    rule = " ".join(part for part in (match.strip(), selector, "counter drop") if part)
    setup = (
        f"add table {FAMILY} {TABLE}\n"
        f"add chain {FAMILY} {TABLE} {CHAIN} "
        f"{{ type filter hook forward priority 0 ; policy accept ; }}\n"
    )
    _nft(dut, ["-f", "-"], input=setup)
    try:
        out = _nft(
            dut,
            [
                "--echo",
                "--handle",
                "add",
                "rule",
                FAMILY,
                TABLE,
                CHAIN,
                *rule.split(),
                "comment",
                f'"{comment}"',
            ],
        )
    except NetloadEnvironmentError as exc:
        _drop_table_if_empty(dut)
        raise NetloadConfigError(
            f"nftables rejected the rule {rule!r}; check `match` = {match!r} "
            f"(nft syntax, e.g. 'udp dport 9'). {exc}"
        ) from exc
    found = _HANDLE_RE.search(out)
    if found is None:
        raise NetloadEnvironmentError(
            f"`nft --echo --handle add rule` did not print the new rule's handle: {out!r}"
        )
    return NftDropRule(dut, int(found.group(1)), comment, rule)


def drop_every_nth(dut: _RunsCommands, n: int, match: str = "udp dport 9") -> NftDropRule:
    """Drop every ``n``-th forwarded packet that matches ``match`` (n=1 drops all).

    Exact: of ``k * n`` matching packets, ``k`` are dropped.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise NetloadConfigError(f"n = {n!r} must be an integer >= 1 (drop 1 of every n packets)")
    return _add_rule(dut, match, f"numgen inc mod {n} 0")


def drop_random(dut: _RunsCommands, ratio: float, match: str = "udp dport 9") -> NftDropRule:
    """Drop each matching forwarded packet with probability ``ratio`` (resolution 1e-6)."""
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0.0 <= ratio <= 1.0:
        raise NetloadConfigError(
            f"ratio = {ratio!r} must be a number between 0 and 1 (e.g. 0.01 for 1% loss)"
        )
    threshold = round(ratio * RANDOM_SCALE)
    if threshold >= RANDOM_SCALE:
        return _add_rule(dut, match, "")  # ratio 1: every matching packet
    return _add_rule(dut, match, f"numgen random mod {RANDOM_SCALE} < {threshold}")


def drop_rule_counters(dut: _RunsCommands) -> list[tuple[str, str, int]]:
    """Every nftables rule of the DUT's ruleset that drops and counts: (where, counter
    name, packets), where = "nftables <family> <table> <chain> rule <handle>" and the
    rule's comment. An empty list when nft is not installed or the ruleset is empty."""
    if shutil.which("nft") is None:
        return []
    out = []
    for rule in _rules(dut, ["ruleset"]):
        exprs = [e for e in rule.get("expr", []) if isinstance(e, dict)]
        counters = [e["counter"] for e in exprs if isinstance(e.get("counter"), dict)]
        if not counters or not any("drop" in e for e in exprs):
            continue
        where = (f"nftables {rule.get('family')} {rule.get('table')} {rule.get('chain')} "
                 f"rule {rule.get('handle')}" + (f" ({rule['comment']})"
                                                 if rule.get("comment") else ""))
        out.append((where, "packets", int(counters[0].get("packets", 0))))
    return out


def rewrite(dut: _RunsCommands, match: str, statements: list[str]) -> list[str]:
    """Header rewrites of the frames the DUT forwards that `match` (``ip dscp set 0``,
    ``ip ttl set 64``): a rule each in table ``inet netload_rewrite``, chain
    ``forward`` (after the kernel decremented the TTL); returns the rules. nftables
    keeps the IPv4 checksum right."""
    setup = (f"add table {FAMILY} {REWRITE_TABLE}\n"
             f"add chain {FAMILY} {REWRITE_TABLE} {CHAIN} "
             f"{{ type filter hook forward priority 0 ; policy accept ; }}\n")
    rules = [f"{match} {statement}".strip() for statement in statements]
    setup += "".join(f"add rule {FAMILY} {REWRITE_TABLE} {CHAIN} {rule}\n" for rule in rules)
    _nft(dut, ["-f", "-"], input=setup)
    return rules
