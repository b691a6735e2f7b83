"""What the model seam raises and warns.

``LLMError`` joins memvara's exception tree under ``MemvaraError``: the model call itself
failed (no connection, a timeout, an HTTP error status, a refusal), or its extraction
reply was unusable as a whole (empty, not JSON, no ``claims`` list): either way nothing
was read from the turns, so ``add()`` keeps them waiting for a retry. The SDK's exception
is kept as ``__cause__``. Single items a usable reply gets wrong are dropped, and the
backend says why in ``last_rejected``.
"""

from __future__ import annotations

from .._domain.results import WriteReceipt
from .._errors import MemvaraError

__all__ = ["DegradedExtractionWarning", "ExtractionPendingError", "LLMError"]


class LLMError(MemvaraError):
    """The model call failed (transport, timeout, HTTP status, refusal) or its reply was
    unusable as a whole."""

    code = "llm_error"


class ExtractionPendingError(LLMError):
    """The model failed inside ``add()``, but nothing was lost: the call's turns and the
    claims its rules read are stored (``receipt``), and the turns left for the model wait
    for ``Memvara.retry_extraction()`` (``receipt.pending``, their ids)."""

    code = "extraction_pending"

    def __init__(self, message: str, receipt: WriteReceipt) -> None:
        self.receipt = receipt
        super().__init__(message)

    @property
    def pending(self) -> tuple[str, ...]:
        """The ids of the stored turns waiting for extraction."""
        return self.receipt.pending


class DegradedExtractionWarning(UserWarning):
    """No extraction model is configured, so prose the rules miss yields no claims."""
