"""In-process pytester sessions (pytester.runpytest) remove every module they imported
from sys.modules when they end. matplotlib (the HTML report's plots) does not survive
that: the next session's report failed with "'Figure' object has no attribute 'items'"
when the first import of matplotlib happened inside an earlier session (an order
dependence: test_records before test_fake_sessions). Imported here first, it stays."""

import pytest_netload.reports.html.plots  # noqa: F401  (imports matplotlib)

# The same holds for numpy's and scipy's extension modules ("cannot load module more than
# once per process"): the plugin imports them only once a netload test runs, so the first
# in-process session to do so would lose them. What netload sessions import, imported here.
import pytest_netload.bench.landing  # noqa: F401,E402
import pytest_netload.bench.rfc2889  # noqa: F401,E402
import pytest_netload.bench.runner  # noqa: F401,E402
import pytest_netload.bench.y1564  # noqa: F401,E402
import pytest_netload.engine.client  # noqa: F401,E402
import pytest_netload.engine.fake  # noqa: F401,E402
import pytest_netload.plugin.markers  # noqa: F401,E402
import pytest_netload.reports.html  # noqa: F401,E402
import pytest_netload.verdicts.assertions  # noqa: F401,E402
import scipy.stats  # noqa: F401,E402
import weasyprint  # noqa: F401,E402  (report.pdf: --netload-report=pdf)

import pytest


@pytest.fixture(autouse=True)
def _not_a_ci_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI job on the default topology shows "built-in DUT, not your device" in the header
    and the report (options.BUILTIN_NOTE): the sessions here are not one unless a test
    says so, whatever environment ran this suite."""
    monkeypatch.delenv("CI", raising=False)
