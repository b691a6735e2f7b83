"""Pydantic AI tools over a memvara memory: ``remember``, ``recall`` and ``search``.

>>> tools = MemvaraTools(mem.scope(user="alice"))            # doctest: +SKIP
>>> agent = Agent(model, tools=tools.tools())                 # doctest: +SKIP

The model writes and reads the memory itself, through three tools:

- ``remember(subject, predicate, object, valid_from=None, valid_to=None)`` stores one fact
  with ``Memvara.remember()``; the answer says which earlier values it closed.
- ``recall(query)`` returns ``Memvara.recall()``'s block of live facts, labelled as
  stored reference data rather than instructions.
- ``search(query, k=None, valid_at=None, known_at=None, as_of=None)`` returns ranked
  facts at any instant on either clock, each with its interval and its belief dates.

What it keeps: nearly everything. The model names the subject and the predicate, so a
single-valued slot closes its old value (contradiction resolution by key, no model on the
write path) and both clocks are kept; reads can be asked "as of" a past instant on either
clock; scope is the handle's, never a tool argument. What it loses: the predicate the
model invents is matched by name and alias only, so ``home_city`` does not contradict
``lives_in`` unless the registry says they are one (declare them with
``memory.registry``); the model chooses what to store, so nothing is remembered from
turns it does not pass to ``remember`` (there is no ``add()`` of the conversation); and
instants travel as ISO-8601 strings, which must carry a UTC offset.

Called directly, a method raises memvara's errors (``InvalidTimeError`` for a bad
instant, naming the keyword); inside an agent run the same message goes back to the
model as a ``ModelRetry``, so it can correct the call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic_ai import ModelRetry, Tool

from .. import InvalidArgumentError
from ._handles import MemoryHandle, instant, sync_handle

__all__ = ["MemvaraTools"]

_F = TypeVar("_F", bound=Callable[..., Any])


def _retry_on_bad_input(method: _F) -> _F:
    """``method`` with memvara's argument errors turned into ``ModelRetry``, whose message
    the agent sends back to the model (the error stays chained as its cause)."""

    @functools.wraps(method)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except InvalidArgumentError as exc:
            raise ModelRetry(str(exc)) from exc

    return run  # type: ignore[return-value]


class MemvaraTools:
    """The tools an ``Agent`` is given to remember, recall and search one memory.

    Args:
        memory: a ``Memvara`` or ``ScopedMemvara`` (or an async one): the scope every
            tool reads and writes. The model cannot choose another.
        k: how many results ``search`` returns when the model does not say (1 and up).

    Raises:
        InvalidArgumentError: ``memory`` is not a memvara handle, or ``k`` is not a
            positive integer.
    """

    def __init__(self, memory: MemoryHandle, *, k: int = 5) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidArgumentError("k", f"expected a positive integer, got {k!r:.40}")
        self._memory = sync_handle(memory)
        self._k = k

    def remember(
        self,
        subject: str,
        predicate: str,
        object: str,
        valid_from: str | None = None,
        valid_to: str | None = None,
    ) -> dict[str, Any]:
        """Store one fact about the world, such as ("alice", "lives_in", "Lisbon").

        A fact whose predicate holds one value at a time (lives_in, works_at) closes the
        value stored before it, which stays in the history.

        Args:
            subject: who or what the fact is about.
            predicate: the relation, in snake_case (lives_in, works_at, likes).
            object: the value.
            valid_from: when it became true, ISO-8601 with a UTC offset (default: now).
            valid_to: when it stopped being true, ISO-8601 with a UTC offset.

        Returns:
            The stored fact's id and text, and the text of every earlier value it closed.
        """
        receipt = self._memory.remember(
            subject, predicate, object, valid_from=instant(valid_from, "valid_from"),
            valid_to=instant(valid_to, "valid_to"))
        stored = receipt.added or receipt.reinforced
        return {
            "id": stored[0].id,
            "text": stored[0].text,
            "new": bool(receipt.added),
            "closed": [claim.text for claim in receipt.closed],
        }

    def recall(self, query: str) -> str:
        """What is believed and true now about a topic, as lines to read.

        Args:
            query: the topic, in words.

        Returns:
            One line per stored fact (empty when nothing is stored about it).
        """
        return self._memory.recall(query, k=self._k)

    def search(
        self,
        query: str,
        k: int | None = None,
        valid_at: str | None = None,
        known_at: str | None = None,
        as_of: str | None = None,
    ) -> list[dict[str, Any]]:
        """Find stored facts, best first, as the world was and as it was known at any time.

        Args:
            query: what to look for, in words.
            k: at most this many results.
            valid_at: the instant in the world the facts must hold at (ISO-8601 with a
                UTC offset; default now).
            known_at: read the memory as it was believed at this instant (default now).
            as_of: both instants at once; not combinable with valid_at or known_at.

        Returns:
            Each fact's id, text, score, and when it held and was believed.
        """
        found = self._memory.search(
            query, k=self._k if k is None else k, valid_at=instant(valid_at, "valid_at"),
            known_at=instant(known_at, "known_at"), as_of=instant(as_of, "as_of"))
        results = []
        for result in found:
            claim = result.to_dict()["claim"]
            results.append({
                "id": result.id, "text": result.text, "score": round(result.score, 4),
                **{key: claim[key] for key in ("subject", "predicate", "object", "valid_from",
                                               "valid_to", "recorded_at", "invalidated_at")},
            })
        return results

    def tools(self) -> list[Tool[Any]]:
        """The three tools, for ``Agent(..., tools=...)``; a bad argument from the model
        comes back to it as a ``ModelRetry`` naming the argument.

        Pydantic AI runs the tool calls of one response side by side; ``remember`` is a
        barrier (``sequential=True``), so the reads the model asked for after a write
        see it and those before it do not, while reads still run together."""
        return [
            Tool(_retry_on_bad_input(method), takes_ctx=False, sequential=sequential)
            for method, sequential in ((self.remember, True), (self.recall, False),
                                       (self.search, False))
        ]
