"""``tests/test_writes.py`` on both backends (``conftest.backend``)."""

from ..test_writes import *  # noqa: F403
