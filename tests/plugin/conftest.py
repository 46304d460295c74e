"""In-process pytester sessions (pytester.runpytest) remove every module they imported
from sys.modules when they end. matplotlib (the HTML report's plots) does not survive
that: the next session's report failed with "'Figure' object has no attribute 'items'"
when the first import of matplotlib happened inside an earlier session (an order
dependence: test_records before test_fake_sessions). Imported here first, it stays."""

import pytest_netload.reports.html.plots  # noqa: F401  (imports matplotlib)
