"""``tests/test_clocks.py`` on both backends (``conftest.backend``)."""

from ..test_clocks import *  # noqa: F403
