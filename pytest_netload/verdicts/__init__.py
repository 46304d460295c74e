"""DUT verdicts: the assertion helpers (assertions) and the bounds they check
against (bounds). A verdict reads what was measured (measure/, rfc2544/) and never
drives traffic itself.
"""
