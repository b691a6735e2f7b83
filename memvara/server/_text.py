"""The text half of each tool's answer: what a client that shows only ``content`` (and
the model behind it) reads. Built on the ``memvara`` command's tables, with free text
left whole: a model should read the fact, not its first 48 characters."""

from __future__ import annotations

from collections.abc import Sequence

from memvara import Claim, Provenance, Retrieved, WriteReceipt
from memvara.cli._render import cell, instant, provenance_text, stats_text, table

__all__ = ["claims", "provenance", "receipt", "results", "retired", "stats"]

_WHOLE = 100_000
"""Cells of free text are flattened to one line but not cut (the line limit is the
message's)."""


def _claim_rows(found: Sequence[Claim]) -> list[list[str]]:
    return [[c.id, c.state, instant(c.valid_from), instant(c.valid_to, "open"),
             cell(c.text, _WHOLE)] for c in found]


def claims(found: Sequence[Claim]) -> str:
    """A slot's history, one claim a row."""
    if not found:
        return "No claims.\n"
    return table(["id", "state", "valid_from", "valid_to", "text"], _claim_rows(found))


def results(found: Sequence[Retrieved]) -> str:
    """Search results, best first."""
    if not found:
        return "Nothing matches.\n"
    return table(["score", "kind", "id", "state", "text"],
                 [[f"{r.score:.4f}", r.kind, r.id, r.claim.state if r.claim else "-",
                   cell(r.text, _WHOLE)] for r in found])


def receipt(done: WriteReceipt) -> str:
    """What a write did, then the claims it added."""
    line = (f"added {len(done.added)}, reinforced {len(done.reinforced)}, closed"
            f" {len(done.closed)}, skipped {len(done.skipped)}, unextracted"
            f" {done.unextracted}\n")
    written = [*done.added, *done.reinforced]
    if not written:
        return line
    return line + table(["id", "state", "valid_from", "valid_to", "text"], _claim_rows(written))


def provenance(found: Provenance) -> str:
    """``why()``'s answer, as the ``memvara why`` command prints it."""
    return provenance_text(found)


def retired(ids: Sequence[str]) -> str:
    """The ids ``memory_forget`` retired."""
    if not ids:
        return "Nothing was retired (no believed claim matched).\n"
    return f"retired {len(ids)}: {', '.join(ids)}\n"


def stats(counts: dict[str, int]) -> str:
    """The population counts."""
    return stats_text(counts)
