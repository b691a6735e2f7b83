"""``tests/test_graph.py`` on both backends (``conftest.backend``)."""

from ..test_graph import *  # noqa: F403
