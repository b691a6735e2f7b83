"""``tests/test_reassertion.py`` on both backends (``conftest.backend``)."""

from ..test_reassertion import *  # noqa: F403
