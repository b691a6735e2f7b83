"""``tests/test_governance_transfer.py`` on both backends (``conftest.backend``)."""

from ..test_governance_transfer import *  # noqa: F403
