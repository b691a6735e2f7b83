"""``tests/test_forget_subject_random.py`` on both backends (``conftest.backend``)."""

from ..test_forget_subject_random import *  # noqa: F403
