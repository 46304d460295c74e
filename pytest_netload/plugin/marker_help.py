"""The help texts of the `netload` and `rfc2544` markers (``pytest --markers``).

Apart from their parsers (markers.py) so that registering the markers at configure
loads nothing heavy: a session without netload tests never imports the parsers.
"""

__all__ = ["NETLOAD_HELP", "RFC2544_HELP"]

NETLOAD_HELP = (
    "netload(rate=None, pattern='cbr', duration='1s', frame_sizes=None, flows=1, wire=0): "
    "per-test traffic defaults for the rate_controller, traffic and latency_meter fixtures. "
    "Provided by pytest-netload.")
RFC2544_HELP = (
    "rfc2544(frame_sizes=[64, 128, 256, 512, 1024, 1280, 1518], trial_duration='60s', "
    "loss_tolerance=0, search='binary', resolution=0.005, max_trials=20, retries=2, "
    "drain='2s', flows=1, max_rate=None, wire=0, learning_frames=10, warmup='0s', goals='rfc2544-strict', "
    "time_budget=None, steady_state='warn', direction='one', stream=None, dut_health=None, "
    "latency_at=None): settings of "
    "the rfc2544 fixture's procedures; a test taking a `frame_size` argument runs once per "
    "size. direction: 'one' (the wire) or 'both' (it and its reverse at once, the load "
    "offered on each: RFC 2544 §14). stream: the traffic, e.g. udp(), tcp(), a Template, "
    "[(udp(), 3), (tcp(), 1)] (default: UDP with `flows` source ports). resolution: "
    "the binary search stops when its bracket is within this ratio of its lower bound "
    "(0.005: 0.5 %), or within a rate such as '100pps' or '1Mbit/s'. steady_state: what a "
    "trial does whose DUT still held more than 0.5 % of its frames in its buffers when "
    "traffic stopped: 'warn' (flagged in the record, summary and report), 'fail' (the "
    "backlog counts as loss, so the trial fails) or 'off'. dut_health: True runs the DUT's "
    "health hooks after every trial (default: ini netload_dut_health). latency_at: "
    "throughput() then measures latency at these fractions of each size's throughput, e.g. "
    "[0.1, 0.5, 0.9, 1.0], or 'csit' (0, 10, 50, 90 % of the PDR; 0: a very low load). "
    "Provided by pytest-netload.")
