"""``tests/test_isolation_matrix.py`` on both backends (``conftest.backend``)."""

from ..test_isolation_matrix import *  # noqa: F403
