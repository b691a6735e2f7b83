"""``tests/test_write_log.py`` on both backends (``conftest.backend``)."""

from ..test_write_log import *  # noqa: F403
