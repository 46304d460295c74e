"""The cffi extension itself, imported without starting DPDK's EAL.

ABI version, status texts, the cdef against netload_api.h, struct layouts against the numpy
dtypes the facade derives, and the limits Python keeps in step with the C constants.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest

from pytest_netload._native_facts import SIGNATURE_FORMAT
from pytest_netload_engine._netload_native import ffi, lib  # type: ignore[import-not-found]

from pytest_netload import errors
from pytest_netload.engine import facade
from pytest_netload.traffic import packets, streams

HEADER = Path(__file__).resolve().parents[2] / "native" / "include" / "netload_api.h"
HEADER_TEXT = HEADER.read_text()
SIGNATURE = struct.Struct(SIGNATURE_FORMAT)  # magic, stream id, sequence number, TX TSC


def _enum(name: str) -> dict[str, int]:
    return dict(ffi.typeof(f"enum {name}").relements)


def _complete_structs() -> list[str]:
    names = []
    for name in ffi.list_types()[1]:
        try:
            ffi.sizeof(f"struct {name}")
        except ffi.error:
            continue  # opaque handles (netload_stream, netload_run)
        names.append(f"struct {name}")
    return names


STRUCTS = _complete_structs()
STATUSES = {k: v for k, v in _enum("netload_status").items() if k != "NETLOAD_STATUS_MIN"}


def _text(ptr: object) -> str:
    return ffi.string(ptr).decode()  # type: ignore[no-any-return]


# ---- ABI and status texts ---------------------------------------------------------------------


def test_abi_version_matches_the_header() -> None:
    assert lib.netload_abi_version() == lib.NETLOAD_ABI_VERSION
    assert f"NETLOAD_ABI_VERSION = {lib.NETLOAD_ABI_VERSION}," in HEADER_TEXT
    assert facade.constants()["abi_version"] == lib.NETLOAD_ABI_VERSION


def test_the_client_knows_the_built_abi_and_refuses_another() -> None:
    from pytest_netload import _native_facts
    from pytest_netload.engine.client import check_abi
    from pytest_netload.errors import NetloadEnvironmentError

    assert _native_facts.ABI_VERSION == lib.NETLOAD_ABI_VERSION  # generated from the header
    check_abi(lib.NETLOAD_ABI_VERSION)
    with pytest.raises(NetloadEnvironmentError, match=r"ABI version 9, this client expects "
                       rf"{lib.NETLOAD_ABI_VERSION}: install the same version of pytest-netload"):
        check_abi(9)


def test_statuses_run_from_ok_down_to_status_min() -> None:
    assert lib.NETLOAD_OK == 0
    assert sorted(STATUSES.values()) == list(range(lib.NETLOAD_STATUS_MIN, 1))


def test_strerror_names_every_status_distinctly() -> None:
    texts = {}
    for status in range(lib.NETLOAD_OK, lib.NETLOAD_STATUS_MIN - 1, -1):
        text = _text(lib.netload_strerror(status))
        assert text and "unknown" not in text, (status, text)
        texts[status] = text
    assert len(set(texts.values())) == len(texts), texts


@pytest.mark.parametrize("status", [1, 2, lib.NETLOAD_STATUS_MIN - 1, -1000, 2**31 - 1, -(2**31)])
def test_strerror_outside_the_range_is_unknown(status: int) -> None:
    assert "unknown" in _text(lib.netload_strerror(status))


@pytest.mark.parametrize("name", sorted(STATUSES))
def test_facade_maps_every_failure_status_to_an_exception(name: str) -> None:
    status = STATUSES[name]
    if status == lib.NETLOAD_OK:
        assert facade._check(status, "ok") == 0
        return
    expected = {
        lib.NETLOAD_EINVAL: errors.NetloadConfigError,
        lib.NETLOAD_EBUSY: errors.NetloadConfigError,
        lib.NETLOAD_ESTATE: errors.NativeError,
    }.get(status, errors.NetloadEnvironmentError)
    with pytest.raises(expected) as info:
        facade._check(status, "the call")
    assert str(info.value).startswith(f"the call: {_text(lib.netload_strerror(status))}")
    if expected is errors.NativeError:
        assert info.value.status == status  # type: ignore[attr-defined]


def test_calls_that_need_no_eal_fail_with_their_text() -> None:
    assert lib.netload_worker_count() == 0
    stats = ffi.new("struct netload_port_stats *")
    assert lib.netload_port_stats(7, stats) == lib.NETLOAD_ENODEV
    assert "port 7" in _text(lib.netload_last_error())
    assert lib.netload_port_close(7) == 0  # closing a port that is not open is a no-op
    assert lib.netload_stream_create(ffi.NULL, ffi.NULL) == lib.NETLOAD_EINVAL
    assert "NULL" in _text(lib.netload_last_error())
    assert lib.netload_stream_id(ffi.NULL) == lib.NETLOAD_EINVAL


# ---- the cdef is netload_api.h, verbatim -----------------------------------------------------


def test_header_has_no_preprocessor_lines() -> None:
    assert [ln for ln in HEADER_TEXT.splitlines() if ln.lstrip().startswith("#")] == []


def test_build_script_reads_the_header_verbatim() -> None:
    import runpy

    build = runpy.run_path(str(Path(__file__).resolve().parents[2] / "native" / "netload_build.py"))
    # cffi keeps each cdef() text as given; there must be exactly one, the header.
    assert build["ffibuilder"]._cdefsources == [HEADER_TEXT]


def test_compiled_module_declares_exactly_the_header() -> None:
    import cffi  # type: ignore[import-untyped]

    from pytest_netload_engine import _netload_native

    fresh = cffi.FFI()
    fresh.cdef(HEADER_TEXT)
    declared = fresh.dlopen(_netload_native.__file__)  # the same symbols, typed by the header
    assert set(dir(lib)) == set(dir(declared))
    assert fresh.list_types() == ffi.list_types()
    for name in dir(lib):
        ours, theirs = getattr(lib, name), getattr(declared, name)
        if isinstance(ours, int):
            assert ours == theirs, name
        else:
            assert ffi.typeof(ours).cname == fresh.typeof(theirs).cname, name
    for name in STRUCTS:
        assert ffi.sizeof(name) == fresh.sizeof(name), name
        ours = [(n, f.offset, f.type.cname) for n, f in ffi.typeof(name).fields]
        theirs = [(n, f.offset, f.type.cname) for n, f in fresh.typeof(name).fields]
        assert ours == theirs, name
    prototypes = re.findall(r"\b(netload_\w+)\(", HEADER_TEXT)
    assert sorted(set(prototypes)) == sorted(n for n in dir(lib) if n.startswith("netload_"))


# ---- struct layouts and the numpy view of them ----------------------------------------------


RECORD_STRUCTS = [n for n in STRUCTS if n.endswith("_stats")]


@pytest.mark.parametrize("name", RECORD_STRUCTS)
def test_record_struct_size_is_a_multiple_of_8(name: str) -> None:
    """Structs read back as numpy record arrays pack with no padding surprises."""
    assert ffi.sizeof(name) % 8 == 0, f"{name} is {ffi.sizeof(name)} bytes"


@pytest.mark.parametrize("name", STRUCTS)
def test_struct_dtype_matches_the_c_layout(name: str) -> None:
    """facade.struct_dtype: every integer field at its C offset with its C size."""
    dtype = facade.struct_dtype(name)
    assert dtype.names is not None and dtype.fields is not None
    assert dtype.itemsize == ffi.sizeof(name)
    for field_name, field in ffi.typeof(name).fields:
        if field_name not in dtype.names:
            continue  # pointers and arrays are not part of the numpy view
        np_type, np_offset = dtype.fields[field_name][:2]
        assert (np_offset, np_type.itemsize) == (field.offset, ffi.sizeof(field.type)), (
            f"{name}.{field_name}: numpy {np_type} at {np_offset}, C {field.type.cname} "
            f"({ffi.sizeof(field.type)} bytes) at {field.offset}")
    # And it reads back exactly what C holds, with non-zero padding and neighbours around.
    cdata = ffi.new(f"{name} *")
    raw = ffi.buffer(cdata)
    raw[:] = bytes([0xA5]) * len(raw)  # padding and neighbours are not zero
    ctypes = dict(ffi.typeof(name).fields)
    expected = {}
    for i, field_name in enumerate(dtype.names):
        signed = not ctypes[field_name].type.cname.startswith("u")
        setattr(cdata, field_name, -(i + 1) if signed else i + 1)
        expected[field_name] = getattr(cdata, field_name)
    record = np.frombuffer(ffi.buffer(cdata), dtype=dtype)[0]
    assert {n: int(record[n]) for n in dtype.names} == expected


def test_result_structs_are_all_integer_counters() -> None:
    for name in ("struct netload_tx_stats", "struct netload_rx_stream_stats",
                 "struct netload_rx_queue_stats", "struct netload_port_stats",
                 "struct netload_run_status"):
        fields = [n for n, _ in ffi.typeof(name).fields]
        assert list(facade.struct_dtype(name).names or ()) == fields, name


# ---- limits shared by Python and C -----------------------------------------------------------


def test_frame_size_limits_agree() -> None:
    # Both sides count frame bytes without the FCS; Python's `size=` arguments include it.
    assert packets.MIN_FRAME_BYTES == lib.NETLOAD_MIN_FRAME_BYTES
    assert packets.MAX_FRAME_BYTES == lib.NETLOAD_MAX_FRAME_BYTES
    assert packets.FCS_BYTES == 4
    t = (packets.Eth() / packets.IPv4() / packets.UDP()).build()
    assert t.min_frame_size() == lib.NETLOAD_MIN_FRAME_BYTES + packets.FCS_BYTES
    top = lib.NETLOAD_MAX_FRAME_BYTES + packets.FCS_BYTES
    assert t.check_size(top) == lib.NETLOAD_MAX_FRAME_BYTES
    with pytest.raises(errors.NetloadConfigError, match=f"jumbo limit {top}"):
        t.check_size(top + 1)
    # Frame lengths travel as uint16_t.
    assert lib.NETLOAD_MAX_FRAME_BYTES <= 0xFFFF
    assert ffi.typeof("struct netload_stream_conf").fields[3][1].type.cname == "uint16_t *"


def test_frames_per_stream_and_sequence_limits_agree() -> None:
    assert streams.MAX_FRAMES == lib.NETLOAD_MAX_FRAMES
    assert facade.constants()["max_frames"] == streams.MAX_FRAMES
    t = (packets.Eth() / packets.IPv4() / packets.UDP()).build()
    streams.Stream(t, size=list(range(64, 64 + lib.NETLOAD_MAX_FRAMES)))
    with pytest.raises(errors.NetloadConfigError, match="exceed 64"):
        streams.Stream(t, size=list(range(64, 65 + lib.NETLOAD_MAX_FRAMES)))
    # Sequence entries are uint16_t frame indices; the sequence length is a uint32_t.
    assert lib.NETLOAD_MAX_FRAMES <= 0x10000
    assert streams.MAX_SEQUENCE <= 0xFFFF_FFFF


def test_field_ops_and_widths_agree() -> None:
    assert packets.FIELD_OPS == tuple(facade.FIELD_OPS)
    for code, op in enumerate(packets.FIELD_OPS):
        assert getattr(lib, f"NETLOAD_FIELD_{op.upper()}") == code == facade.FIELD_OPS[op]
    fields = dict(ffi.typeof("struct netload_field_conf").fields)
    value_bytes = ffi.sizeof(fields["min"].type)
    assert packets.FIELD_WIDTHS == (1, 2, 4, 6, 8)
    assert max(packets.FIELD_WIDTHS) <= value_bytes
    assert ffi.sizeof(fields["max"].type) == ffi.sizeof(fields["step"].type) == value_bytes
    assert fields["offset"].type.cname == "uint16_t"  # any offset of the largest frame fits
    assert lib.NETLOAD_MAX_FRAME_BYTES <= 0xFFFF
    assert facade.constants()["max_fields"] == lib.NETLOAD_MAX_FIELDS


def test_signature_layout_agrees() -> None:
    assert lib.NETLOAD_SIGNATURE_BYTES == SIGNATURE.size == 16
    assert lib.NETLOAD_SIGNATURE_MAGIC == 0x4E4C
    assert facade.constants()["signature_bytes"] == lib.NETLOAD_SIGNATURE_BYTES
    # The stream id is a uint16_t in the trailer; 0xffff marks "no slot" on RX.
    assert lib.NETLOAD_MAX_STREAMS < 0xFFFF
    # The RX window is indexed with a mask.
    window = lib.NETLOAD_SEQ_WINDOW
    assert window > 0 and window & (window - 1) == 0
    t = (packets.Eth() / packets.IPv4() / packets.UDP()).build()
    spec = streams.Stream(t, size=64).compile(lib.NETLOAD_SIGNATURE_BYTES)
    assert [len(f) for f in spec["frames"]] == [64 - packets.FCS_BYTES]
    assert spec["frames"][0][-lib.NETLOAD_SIGNATURE_BYTES:] == bytes(16)  # room, zeroed


def test_name_arrays_have_the_declared_length() -> None:
    info = dict(ffi.typeof("struct netload_port_info").fields)
    assert info["name"].type.length == info["driver"].type.length == lib.NETLOAD_NAME_BYTES


def test_python_pacing_and_burst_limits_agree_with_c() -> None:
    from pytest_netload.traffic import patterns

    assert patterns.MAX_GAPS == lib.NETLOAD_MAX_GAPS
    assert patterns.MAX_PHASES == lib.NETLOAD_MAX_PHASES


def test_histogram_layout_is_log_linear_with_bounded_error() -> None:
    n = lib.NETLOAD_HIST_BUCKETS
    lower = ffi.new("uint64_t[]", n)
    assert lib.netload_hist_lower_bounds(lower, n) == 0
    bounds = [int(lower[i]) for i in range(n)]
    assert bounds == sorted(set(bounds)) and bounds[0] == 0
    for i in range(1, n - 1):
        width = bounds[i + 1] - bounds[i]
        assert width <= max(1, bounds[i] // 64), (i, bounds[i], width)
    for value in [0, 1, 127, 128, 129, 255, 256, 1000, 10**6, 10**9, 10**12]:
        i = lib.netload_hist_index(value)
        assert bounds[i] <= value and (i == n - 1 or value < bounds[i + 1]), value


@pytest.mark.parametrize("bits", range(lib.NETLOAD_HIST_MIN_SUB_BITS, lib.NETLOAD_HIST_MAX_SUB_BITS + 1))
def test_latency_histogram_precision_is_configurable(bits: int) -> None:
    n = lib.netload_hist_buckets(bits)
    lower = ffi.new("uint64_t[]", n)
    assert lib.netload_hist_lower_bounds_bits(bits, lower, n) == 0
    bounds = [int(lower[i]) for i in range(n)]
    assert bounds == sorted(set(bounds)) and bounds[-1] < 2**45 <= bounds[-1] * 2
    for i in range(1, n - 1):
        assert bounds[i + 1] - bounds[i] <= max(1, bounds[i] >> (bits - 1)), (bits, i)


def test_histogram_precision_outside_the_range_is_refused() -> None:
    assert lib.netload_hist_buckets(lib.NETLOAD_HIST_MIN_SUB_BITS - 1) == 0
    assert lib.netload_hist_buckets(lib.NETLOAD_HIST_MAX_SUB_BITS + 1) == 0
    lower = ffi.new("uint64_t[]", 1)
    assert lib.netload_hist_lower_bounds_bits(lib.NETLOAD_HIST_MAX_SUB_BITS + 1, lower, 1) < 0


def test_the_generated_facts_are_the_extensions() -> None:
    """pytest_netload/_native_facts.py (generated from the header) against the compiled
    extension: every constant, and the signature trailer's layout."""
    from pytest_netload import _native_facts

    facts = {k: v for k, v in vars(_native_facts).items() if k.isupper() and
             isinstance(v, int)}
    assert len(facts) >= 20
    for name, value in facts.items():
        assert getattr(lib, f"NETLOAD_{name}") == value, name
    assert struct.calcsize(_native_facts.SIGNATURE_FORMAT) == \
        ffi.sizeof("struct netload_signature") == lib.NETLOAD_SIGNATURE_BYTES
    offsets = [ffi.offsetof("struct netload_signature", f) for f in _native_facts.SIGNATURE_FIELDS]
    assert offsets == [0, 2, 4, 8]


@pytest.mark.parametrize(("options", "lcores_arg"), [
    ({"lcores": [0, 1]}, ["-l", "0,1"]),  # main on the lowest, one worker
    ({"lcores": [3]}, ["--lcores=0@3,1@3"]),  # one CPU: worker beside the main lcore
    ({"lcores": [1, 0], "main_cpu": 0}, ["--lcores=0@0,1@0,2@1"]),  # 2 workers on 2 CPUs
    ({"lcores": [2, 3], "main_cpu": 0}, ["--lcores=0@0,1@2,2@3"]),
])
def test_eal_lcores_put_a_worker_beside_the_main_only_when_asked(
        options: dict[str, object], lcores_arg: list[str]) -> None:
    args = facade.default_eal_args(hugepages=False, **options)  # type: ignore[arg-type]
    assert args[1:1 + len(lcores_arg)] == lcores_arg
