"""The model seam: what ``add()`` asks of a language model, and the backends that answer.

``LLM`` is the protocol. ``NullLLM`` is the default, "no model": the write path's rules
still run, and whatever they miss yields no claims (the facade warns once with
``DegradedExtractionWarning``). ``AnthropicLLM`` and ``OpenAILLM`` are the shipped
backends; they are lazy attributes, so ``import memvara.llm`` imports neither their
modules nor their SDKs, and naming one imports its module but not its SDK, which is
imported when a backend is built (``pip install 'memvara[anthropic]'`` or
``'memvara[openai]'``).

Every backend is transport only. What counts as a valid claim is decided in one place,
``memvara/llm/_shape.py``: a reply yields the same claims whichever model wrote it.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

from .._domain.model import Claim, Episode
from ..schema import Cardinality, PredicateSpec, Volatility
from ._errors import DegradedExtractionWarning, ExtractionPendingError, LLMError

if TYPE_CHECKING:
    from .anthropic import AnthropicLLM
    from .openai import OpenAILLM

__all__ = [
    "AnthropicLLM",
    "DegradedExtractionWarning",
    "ExtractionPendingError",
    "LLM",
    "LLMError",
    "NullLLM",
    "OpenAILLM",
]

_LAZY = {"AnthropicLLM": ".anthropic", "OpenAILLM": ".openai"}


@runtime_checkable
class LLM(Protocol):
    """What the write path asks of a model.

    Contract:

    - ``extract(turns)`` reads stored episodes (each has an ``id``) and returns the claims
      they state, each citing the id of its turn in ``sources``, with ``subject``,
      ``predicate`` (snake_case; aliases are folded later by the registry), ``object``,
      ``polarity``, ``confidence``, ``memory_type`` and, when the text says so,
      ``valid_from`` set. Times other than ``valid_from``, the scope and the rendered text
      are left for the write path. No turns means no claims. A reply the backend cannot
      use yields fewer claims (or none), never an exception; a failed call raises
      ``LLMError``.
    - ``classify_predicate(name)`` says how many values a predicate takes and how fast it
      goes stale. The write path asks once per unknown predicate and persists the answer.
      ``None`` means no usable answer: that write uses the unknown-predicate default,
      ``MANY``/``SLOW``, stores nothing, and the next write asks again.

    Optional, outside the protocol: ``resolve_entity(surface, candidates) -> str | None``
    names the candidate that is another name for ``surface`` (``"Big Blue"`` for
    ``"IBM"``) or ``None``. It is opt-in because entity surface forms never run out; the
    shipped backends provide it. An ``is_null`` attribute that is true marks an
    implementation with no extraction tier (``NullLLM``); its absence means a real model.
    """

    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        """The claims ``turns`` state; see the class docstring."""
        ...

    def classify_predicate(self, name: str) -> PredicateSpec | None:
        """The cardinality and volatility of a predicate not yet in the schema, or
        ``None`` when the model gave no usable answer."""
        ...


class NullLLM:
    """No model: extracts nothing and classifies every predicate as ``MANY``/``SLOW``.

    The default ``llm=``. With it, ``add()`` stores only the facts its rules can read, and
    ``WriteReceipt.unextracted`` counts the turns that reached the extraction tier.
    """

    is_null: ClassVar[bool] = True
    """There is no extraction tier; the facade warns once."""

    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        """No claims, for any turns."""
        return []

    def classify_predicate(self, name: str) -> PredicateSpec:
        """The unknown-predicate default: ``MANY``, ``SLOW``, under the normalized name.

        Raises:
            InvalidArgumentError: ``name`` is not a usable predicate name.
        """
        return PredicateSpec(name, Cardinality.MANY, Volatility.SLOW)

    def __repr__(self) -> str:
        return "NullLLM()"


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
