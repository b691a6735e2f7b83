"""``tests/test_model_failure.py`` on both backends (``conftest.backend``)."""

from ..test_model_failure import *  # noqa: F403
