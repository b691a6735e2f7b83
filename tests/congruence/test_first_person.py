"""``tests/test_first_person.py`` on both backends (``conftest.backend``)."""

from ..test_first_person import *  # noqa: F403
