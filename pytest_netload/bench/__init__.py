"""Procedures bound to real trials on the engine: the RFC 2544 measurer and runner
(runner), the rate controller (ratecontrol), the reference DUT (reference), the
objects the fixtures hand to tests (harness), trial validity (validity), progress
events (progress) and the parsed marker settings they all read (settings).

Engine-facing but pytest-free: scripts can use all of it. The plugin builds these
objects from a session's settings; nothing here imports the plugin.
"""
