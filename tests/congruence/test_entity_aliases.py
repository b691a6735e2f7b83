"""``tests/test_entity_aliases.py`` on both backends (``conftest.backend``)."""

from ..test_entity_aliases import *  # noqa: F403
