"""`python -m pytest_netload ...` is the `netload` command."""

import sys

from .cli import main

sys.exit(main())
