"""``OpenAILLM``: the model seam over OpenAI's Chat Completions API.

Transport only: the prompts, the JSON parsing and every rule about a valid claim are
shared with the other backends (``memvara.llm._shape``). The ``openai`` SDK is an
optional extra, imported when a backend is built, never when this module is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._optional import require
from ._chat import ChatLLM, Reply, check_settings
from ._errors import LLMError

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAILLM"]

_HINT = "OpenAILLM needs the openai SDK: pip install 'memvara[openai]'"


class OpenAILLM(ChatLLM):
    """Extraction, predicate classification and entity resolution by an OpenAI model.

    Every method makes at most one ``chat.completions.create`` call, in JSON mode
    (``response_format={"type": "json_object"}``); ``extract`` sends all its turns in that
    one call. Replies are validated by the shared rules; see ``memvara.llm.LLM``.

    Args:
        model: the model name sent with every call.
        client: an ``openai.OpenAI`` to use as is (its own key, timeout and retry
            settings apply). When omitted one is built from ``api_key``, ``timeout`` and
            ``max_retries``; the key then falls back to ``OPENAI_API_KEY``.
        api_key: the key for the built client; not allowed with ``client``.
        max_tokens: the output budget of an extraction call (``max_completion_tokens``).
        timeout: seconds the built client waits for one response.
        max_retries: how often the built client retries a failed request.

    Raises:
        ImportError: no ``client`` was given and the ``openai`` SDK is not installed.
        InvalidArgumentError: a setting is out of range, or both ``client`` and
            ``api_key`` were given.
        LLMError: the SDK refused to build a client (no API key, for one).
    """

    provider = "openai"

    def __init__(
        self,
        model: str = "gpt-4.1",
        *,
        client: openai.OpenAI | None = None,
        api_key: str | None = None,
        max_tokens: int = 4096,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        check_settings(model, max_tokens, timeout, max_retries, client, api_key)
        super().__init__(model, max_tokens=max_tokens)
        if client is None:
            sdk = require("openai", _HINT)
            try:
                client = sdk.OpenAI(api_key=api_key, timeout=timeout, max_retries=max_retries)
            except sdk.OpenAIError as exc:
                raise LLMError(f"openai: could not build a client: {exc}") from exc
        self.client: openai.OpenAI = client

    def _complete(self, system: str, prompt: str, max_tokens: int) -> Reply:
        sdk = require("openai", _HINT)
        try:
            completion = self.client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": prompt},
                ],
                response_format={"type": "json_object"},
                max_completion_tokens=max_tokens,
            )
        except sdk.OpenAIError as exc:
            raise LLMError(f"openai: {type(exc).__name__}: {exc}") from exc
        if not completion.choices:
            return Reply("")
        choice = completion.choices[0]
        if choice.message.refusal:
            raise LLMError(f"openai: the model refused the request: {choice.message.refusal:.200}")
        if choice.finish_reason == "content_filter":
            raise LLMError(f"openai: the reply was withheld by the content filter ({self.model})")
        return Reply(choice.message.content or "", truncated=choice.finish_reason == "length")
