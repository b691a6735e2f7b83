"""``tests/test_belief_order.py`` on both backends (``conftest.backend``)."""

from ..test_belief_order import *  # noqa: F403
