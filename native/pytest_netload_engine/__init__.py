"""The native DPDK 22.11 traffic engine of pytest-netload: its cffi extension, nothing else.

`pytest_netload_engine._netload_native` (``ffi``, ``lib``) is built from this distribution's
C sources (include/, src/) against the system's DPDK. Its one user is
``pytest_netload.engine.facade``, inside an engine host process; it is not an API.
Installed with ``pip install 'pytest-netload[engine]'``.
"""
