"""``AnthropicLLM``: the model seam over Anthropic's Messages API.

Transport only: the prompts, the JSON parsing and every rule about a valid claim are
shared with the other backends (``memvara.llm._shape``). The ``anthropic`` SDK is an
optional extra, imported when a backend is built, never when this module is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._optional import require
from ._chat import ChatLLM, Reply, check_settings
from ._errors import LLMError

if TYPE_CHECKING:
    import anthropic

__all__ = ["AnthropicLLM"]

_HINT = "AnthropicLLM needs the anthropic SDK: pip install 'memvara[anthropic]'"


class AnthropicLLM(ChatLLM):
    """Extraction, predicate classification and entity resolution by a Claude model.

    Every method makes at most one ``messages.create`` call; ``extract`` sends all its
    turns in that one call. Replies are read as JSON (a fenced ```` ```json ```` block is
    accepted) and validated by the shared rules; see ``memvara.llm.LLM``.

    Args:
        model: the model name sent with every call.
        client: an ``anthropic.Anthropic`` to use as is (its own key, timeout and retry
            settings apply). When omitted one is built from ``api_key``, ``timeout`` and
            ``max_retries``; the key then falls back to ``ANTHROPIC_API_KEY``.
        api_key: the key for the built client; not allowed with ``client``.
        max_tokens: the output budget of an extraction call.
        timeout: seconds the built client waits for one response.
        max_retries: how often the built client retries a failed request.

    Raises:
        ImportError: no ``client`` was given and the ``anthropic`` SDK is not installed.
        InvalidArgumentError: a setting is out of range, or both ``client`` and
            ``api_key`` were given.
        LLMError: the SDK refused to build a client (no credentials, for one).
    """

    provider = "anthropic"

    def __init__(
        self,
        model: str = "claude-opus-5",
        *,
        client: anthropic.Anthropic | None = None,
        api_key: str | None = None,
        max_tokens: int = 4096,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        check_settings(model, max_tokens, timeout, max_retries, client, api_key)
        super().__init__(model, max_tokens=max_tokens)
        if client is None:
            sdk = require("anthropic", _HINT)
            try:
                client = sdk.Anthropic(api_key=api_key, timeout=timeout, max_retries=max_retries)
            except sdk.AnthropicError as exc:
                raise LLMError(f"anthropic: could not build a client: {exc}") from exc
        self.client: anthropic.Anthropic = client

    def _complete(self, system: str, prompt: str, max_tokens: int) -> Reply:
        sdk = require("anthropic", _HINT)
        try:
            message = self.client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=system,
                messages=[{"role": "user", "content": prompt}],
            )
        except sdk.AnthropicError as exc:
            raise LLMError(f"anthropic: {type(exc).__name__}: {exc}") from exc
        if message.stop_reason == "refusal":
            raise LLMError(f"anthropic: the model refused the request ({self.model})")
        text = "".join(block.text for block in message.content if block.type == "text")
        return Reply(text, truncated=message.stop_reason == "max_tokens")
