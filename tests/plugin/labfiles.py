"""A lab's topology file for the plugin tests: the fake engine's two ports, p0 and p1,
with their addresses and the DUT's, as a lab writes them."""

from __future__ import annotations


def fake_lab(name: str = "lab", *, capabilities: str = "", both_ways: bool = False,
             peer_ips: bool = True) -> str:
    """The TOML of topology `name`: net_fake0 as p0 (198.18.0.2) and net_fake1 as p1
    (198.19.0.2), each with its MAC and the DUT's MAC on its side (and, with `peer_ips`,
    the DUT's address there); wired p0 -> p1, and p1 -> p0 too with `both_ways`;
    `capabilities` (a `[capabilities]` table, as text) after the topology's name."""
    ports = []
    for i, net in ((1, 18), (2, 19)):
        lines = [f'name = "p{i - 1}"', f'device = "net_fake{i - 1}"',
                 f'mac = "02:00:00:00:00:0{i}"', f'ip = "198.{net}.0.2"',
                 f'peer_mac = "02:00:00:00:01:0{i}"']
        if peer_ips:
            lines.append(f'peer_ip = "198.{net}.0.1"')
        ports.append("[[ports]]\n" + "\n".join(lines))
    wires = ['[[wires]]\ntx = "p0"\nrx = "p1"']
    if both_ways:
        wires.append('[[wires]]\ntx = "p1"\nrx = "p0"')
    head = f'[topology]\nname = "{name}"\n' + (f"\n{capabilities}\n" if capabilities else "")
    return "\n\n".join([head, *ports, *wires]) + "\n"
