"""What every chat-model backend does, less the one HTTP call that differs.

A backend subclasses ``ChatLLM`` and implements ``_complete``: send a system prompt and a
user prompt, return the reply's text. Prompts, parsing and validation are shared, so two
backends given the same reply produce the same claims.
"""

from __future__ import annotations

import math
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from .._errors import InvalidArgumentError
from .._domain.model import Claim, Episode
from ..schema import PredicateSpec, normalize_predicate
from . import _prompts, _shape
from ._errors import LLMError

__all__ = ["ChatLLM", "Reply", "check_settings"]

SHORT_REPLY_TOKENS = 512
"""The output budget of a classification or resolution call: one small JSON object."""


@dataclass(frozen=True, slots=True)
class Reply:
    """A model's answer: its text, and whether it stopped at the token limit."""

    text: str
    truncated: bool = False


def check_settings(
    model: object, max_tokens: object, timeout: object, max_retries: object,
    client: object = None, api_key: object = None,
) -> None:
    """Validate the settings every backend takes, naming the bad one.

    Raises:
        InvalidArgumentError: an empty model name, a non-positive ``max_tokens`` or
            ``timeout``, a negative ``max_retries``, or both a ``client`` and an
            ``api_key`` (the key would be silently ignored).
    """
    if not isinstance(model, str) or not model.strip():
        raise InvalidArgumentError("model", f"expected a model name, got {model!r:.60}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidArgumentError("max_tokens", f"expected a positive int, got {max_tokens!r}")
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise InvalidArgumentError("timeout", f"expected seconds > 0, got {timeout!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise InvalidArgumentError("max_retries", f"expected an int >= 0, got {max_retries!r}")
    if client is not None and api_key is not None:
        raise InvalidArgumentError("api_key", "pass client or api_key, not both")


class ChatLLM(ABC):
    """The shared half of a model backend (see ``memvara.llm.LLM`` for the contract).

    Attributes:
        model: the model name sent with every call.
        max_tokens: the output budget of an extraction call.
        calls: model calls attempted by this instance, failed ones included; a write
            reports the difference across its extraction as ``llm_calls``.
        last_rejected: one problem string per item the last ``extract()`` dropped (or the
            one reason the whole reply was unusable, raised as ``LLMError`` too); empty
            when nothing was dropped.
    """

    is_null: ClassVar[bool] = False
    """A real model: ``add()`` has an extraction tier."""

    provider: ClassVar[str] = ""

    def __init__(self, model: str, *, max_tokens: int) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self.calls = 0
        self.last_rejected: list[str] = []
        self._lock = threading.Lock()

    @property
    def extractor(self) -> str:
        """What claims from this backend record as their extractor: ``provider:model``."""
        return f"{self.provider}:{self.model}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        """Extract claims from ``turns`` with one model call (none for no turns).

        Args:
            turns: stored episodes (each with an ``id``), in conversation order.

        Returns:
            The valid claims; each cites one turn's id in ``sources``. Items the validator
            dropped are described in ``last_rejected``.

        Raises:
            InvalidArgumentError: ``turns`` are not stored episodes.
            LLMError: the call failed (transport, timeout, HTTP status, refusal), or the
                reply was unusable as a whole (empty, not JSON, no ``claims`` list).
        """
        batch = _shape.check_turns(turns)
        self.last_rejected = []
        if not batch:
            return []
        reply = self._ask(
            _prompts.EXTRACTION_SYSTEM, _prompts.extraction_prompt(batch), self.max_tokens
        )
        payload, problem = _shape.payload_from_text(reply.text)
        if problem is None:
            problem = _shape.payload_problem(payload)
        if problem is not None:
            if reply.truncated:
                problem = f"reply: cut off at max_tokens={self.max_tokens}; {problem}"
            self.last_rejected = [problem]
            raise LLMError(f"{self.provider}: the model's reply was unusable ({problem})")
        claims, problems = _shape.claims_from_payload(payload, batch, extractor=self.extractor)
        self.last_rejected = problems
        return claims

    def classify_predicate(self, name: str) -> PredicateSpec | None:
        """Ask the model for a new predicate's cardinality and volatility.

        Returns:
            The model's classification, or ``None`` when its reply is unusable (the
            write path then uses the unknown-predicate default for this write, does not
            store it, and asks again the next time).

        Raises:
            InvalidArgumentError: ``name`` is not a usable predicate name.
            LLMError: the call failed.
        """
        canonical = normalize_predicate(name)
        reply = self._ask(
            _prompts.CLASSIFICATION_SYSTEM,
            _prompts.classification_prompt(canonical),
            SHORT_REPLY_TOKENS,
        )
        payload, _ = _shape.payload_from_text(reply.text)
        return _shape.spec_from_payload(payload, canonical)

    def resolve_entity(self, surface: str, candidates: Sequence[str]) -> str | None:
        """Which of ``candidates`` names the same entity as ``surface``, if any.

        Opt-in: the write path calls it only when entity resolution by model is enabled.
        No candidates means no call.

        Returns:
            One of ``candidates`` exactly as given, or ``None``.

        Raises:
            InvalidArgumentError: ``surface`` is not a non-empty string, or ``candidates``
                is not a sequence of strings.
            LLMError: the call failed.
        """
        if not isinstance(surface, str) or not surface.strip():
            raise InvalidArgumentError(
                "surface", f"expected a non-empty string, got {surface!r:.60}"
            )
        if isinstance(candidates, str) or not isinstance(candidates, Sequence):
            raise InvalidArgumentError("candidates", "expected a sequence of strings")
        for index, candidate in enumerate(candidates):
            if not isinstance(candidate, str):
                raise InvalidArgumentError(
                    f"candidates[{index}]", f"expected a string, got {type(candidate).__name__}"
                )
        if not candidates:
            return None
        reply = self._ask(
            _prompts.RESOLUTION_SYSTEM,
            _prompts.resolution_prompt(surface, candidates),
            SHORT_REPLY_TOKENS,
        )
        payload, _ = _shape.payload_from_text(reply.text)
        return _shape.match_from_payload(payload, candidates)

    def _ask(self, system: str, prompt: str, max_tokens: int) -> Reply:
        with self._lock:
            self.calls += 1
        try:
            return self._complete(system, prompt, max_tokens)
        except LLMError:
            raise
        except Exception as exc:  # a 200 the SDK cannot parse: a proxy's page, another API
            raise LLMError(f"{self.provider}: the response is no reply the SDK can read"
                           f" ({type(exc).__name__}: {str(exc):.200})") from exc

    @abstractmethod
    def _complete(self, system: str, prompt: str, max_tokens: int) -> Reply:
        """Send one request; return the reply, or raise ``LLMError`` from the SDK's error."""
        ...
