"""``tests/test_retention.py`` on both backends (``conftest.backend``)."""

from ..test_retention import *  # noqa: F403
