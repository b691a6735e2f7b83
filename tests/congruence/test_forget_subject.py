"""``tests/test_forget_subject.py`` on both backends (``conftest.backend``)."""

from ..test_forget_subject import *  # noqa: F403
