"""``tests/test_reviews.py`` on both backends (``conftest.backend``)."""

from ..test_reviews import *  # noqa: F403
