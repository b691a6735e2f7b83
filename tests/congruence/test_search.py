"""``tests/test_search.py`` on both backends (``conftest.backend``)."""

from ..test_search import *  # noqa: F403
