"""``tests/test_corrections.py`` on both backends (``conftest.backend``)."""

from ..test_corrections import *  # noqa: F403
