"""A misspelled or foreign keyword fails loudly, and says which keyword was meant.

The facade's methods take no ``**kwargs``: metadata goes through ``meta=``, so a stray
keyword cannot be stored as data or move a write. Python already refuses an unknown
keyword; ``checked_keywords`` adds the keyword the caller most likely meant, including
mem0's spellings (``user_id=`` is memvara's ``user=``). It costs nothing on a good call:
it looks only at a ``TypeError`` raised by binding the arguments themselves.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["FOREIGN_KEYWORDS", "checked_keywords"]

FOREIGN_KEYWORDS = {
    "user_id": "user",
    "agent_id": "agent",
    "run_id": "session",
    "session_id": "session",
    "tenant_id": "tenant",
    "org_id": "tenant",
    "metadata": "meta",
    "top_k": "k",
    "limit": "k",
    "memory_id": "claim_id",
    "id": "claim_id",
    "object": "obj",
}
"""Keywords other memory libraries use, and memvara's name for each."""

_UNEXPECTED = re.compile(r"got an unexpected keyword argument '(\w+)'")

_F = TypeVar("_F", bound=Callable[..., Any])


def suggestion(keyword: str, accepted: list[str]) -> str:
    """The keyword among ``accepted`` that ``keyword`` most likely meant, or ``""``."""
    foreign = FOREIGN_KEYWORDS.get(keyword)
    if foreign in accepted:
        return foreign
    close = difflib.get_close_matches(keyword, accepted, n=1, cutoff=0.6)
    return close[0] if close else ""


def checked_keywords(method: _F) -> _F:
    """``method``, raising ``TypeError`` that names the keyword meant when a call passes
    one it does not take."""
    accepted = [name for name, p in inspect.signature(method).parameters.items()
                if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and name != "self"]

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except TypeError as exc:
            found = _UNEXPECTED.search(str(exc))
            tb = exc.__traceback__
            if found is None or tb is None or tb.tb_next is not None:
                raise  # raised inside the method, not by binding its arguments
            meant = suggestion(found.group(1), accepted)
            hint = f"; did you mean {meant}=?" if meant else f"; it takes {', '.join(accepted)}"
            raise TypeError(f"{method.__name__}() got an unexpected keyword argument"
                            f" {found.group(1)!r}{hint}") from None

    return call  # type: ignore[return-value]


def check_every_public_method(cls: type) -> None:
    """Wrap every public method defined on ``cls`` with ``checked_keywords``."""
    for name, value in list(vars(cls).items()):
        if (not name.startswith("_") or name == "__init__") and inspect.isfunction(value):
            setattr(cls, name, checked_keywords(value))
