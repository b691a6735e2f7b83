"""``tests/test_consolidate.py`` on both backends (``conftest.backend``)."""

from ..test_consolidate import *  # noqa: F403
