"""``tests/test_listing.py`` on both backends (``conftest.backend``)."""

from ..test_listing import *  # noqa: F403
