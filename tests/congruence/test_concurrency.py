"""``tests/test_concurrency.py`` on both backends (``conftest.backend``)."""

from ..test_concurrency import *  # noqa: F403
