"""``tests/test_transfer_roundtrip.py`` on both backends (``conftest.backend``)."""

from ..test_transfer_roundtrip import *  # noqa: F403
