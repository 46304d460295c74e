"""The engine: its client (client.py), its host process (host.py) and the facade over
the native core (facade.py), imported where used.

The EAL's memory bounds are here, not in client.py, so that checking
--netload-engine-memory (plugin/options.py) loads nothing of the client.
"""

MIN_MEMORY_MB = 64
MAX_MEMORY_MB = 1 << 20  # 1 TiB
