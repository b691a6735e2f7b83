"""``tests/test_model_check.py`` on both backends (``conftest.backend``): its focused
regressions as they are, and the state machine run from a test function, since a
unittest ``TestCase`` takes no fixture."""

from hypothesis.stateful import run_state_machine_as_test

from ..test_model_check import *  # noqa: F403
from ..test_model_check import MemvaraMachine, TestMemvaraAgainstTheModel

del TestMemvaraAgainstTheModel  # run below, once per backend


def test_memvara_against_the_model(backend: str) -> None:
    run_state_machine_as_test(MemvaraMachine, settings=MemvaraMachine.TestCase.settings)
