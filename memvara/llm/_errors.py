"""What the model seam raises and warns.

``LLMError`` joins memvara's exception tree under ``MemvaraError``: the model call itself
failed (no connection, a timeout, an HTTP error status, a refusal). The SDK's exception
is kept as ``__cause__``. A reply that arrives but is not usable is *not* an error: it
yields no claims, and the backend says why in ``last_rejected``.
"""

from __future__ import annotations

from .._errors import MemvaraError

__all__ = ["DegradedExtractionWarning", "LLMError"]


class LLMError(MemvaraError):
    """The model call failed: transport, timeout, HTTP status or refusal."""

    code = "llm_error"


class DegradedExtractionWarning(UserWarning):
    """No extraction model is configured, so prose the rules miss yields no claims."""
