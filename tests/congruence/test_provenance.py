"""``tests/test_provenance.py`` on both backends (``conftest.backend``)."""

from ..test_provenance import *  # noqa: F403
