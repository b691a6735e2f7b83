"""``tests/test_scope.py`` on both backends (``conftest.backend``)."""

from ..test_scope import *  # noqa: F403
