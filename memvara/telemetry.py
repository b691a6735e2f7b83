"""Counters for the failures that raise nothing.

Some of memvara's failure modes are silent by nature: a redaction rule that stops
matching makes the write path faster, not slower; a gate tuned for English drops other
scripts without complaint. Each of these has a metric series (``SERIES`` lists them), and
a ``Recorder`` receives them.

``Recorder`` is the seam: one method, ``record(name, value=1.0, **tags)``, so an adapter
to statsd, Prometheus or OpenTelemetry is a few lines. ``MemoryRecorder`` is the
implementation that ships: it keeps every event in memory, which is what tests and
notebooks want.

Telemetry is off unless asked for. ``Memvara(telemetry=None)`` is the default, and it
is ``None`` rather than a recorder that does nothing, because every emission site is
guarded by ``if recorder is not None:`` and any value that costs something to compute
(the script of a text, a quality factor) is computed inside that guard. With telemetry
off, the write path does not pay for it at all.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Final, NamedTuple, Protocol, runtime_checkable

__all__ = ["SERIES", "MemoryRecorder", "Recorder", "Series"]


@runtime_checkable
class Recorder(Protocol):
    """Receives one event per call: a series name, a value, and string tags.

    Contract: ``record`` is called on memvara's write and read paths, possibly from
    several threads at once, so it must be thread-safe and should be quick; it should
    not raise (an exception propagates into the memvara call that emitted the event).
    Counters are emitted with the default value ``1.0``; gauges such as
    ``retrieval.quality_factor`` pass their value. Tags are small, fixed vocabularies
    (a script, a reason, a field name), never user text. A tag cannot be called
    ``name`` or ``value``, which are the method's own parameters.
    """

    def record(self, name: str, value: float = 1.0, **tags: str) -> None:
        """Record one event of series ``name``."""
        ...


class Series(NamedTuple):
    """One metric series memvara emits: its name, its tag keys and what it means."""

    name: str
    tags: tuple[str, ...]
    meaning: str


SERIES: Final = (
    Series("fast.hit", ("script",),
           "a user turn the rule-based extractor handled, with no model call"),
    Series("fast.miss", ("script",),
           "a user turn the rules did not match, left for the model"),
    Series("gate.drop", ("reason",),
           "a turn the salience gate discarded as carrying nothing to remember"),
    Series("redact.inspected", ("field", "script"),
           "a text handed to the redactor; the denominator for redact.changed"),
    Series("redact.changed", ("field", "script"),
           "a text the redactor altered; a falling ratio to inspected means rules stopped matching"),
    Series("llm.calls", ("kind",),
           "calls made to the configured model, failed ones too, by purpose (extract,"
           " classify, resolve_entity)"),
    Series("llm.failed", ("kind",),
           "an extraction call that failed, valued at the turns it left waiting for retry"),
    Series("retrieval.quality_factor", (),
           "the salience factor applied to a result, unclamped: above 1.0 is the alarm"),
    Series("consolidate.merged", (),
           "claims merged by one consolidation run, emitted at zero to prove it ran"),
    Series("rerank.failed", (),
           "a search whose reranker failed, so the fused order stood"),
)
"""The series memvara emits, with their tag keys. Every tag value is a short string from a
fixed vocabulary; ``script`` is one of ``memvara._scripts.SCRIPTS``."""


class MemoryRecorder:
    """A ``Recorder`` that keeps every event in memory, for tests and notebooks.

    Reading filters by a *subset* of tags: ``total("fast.miss")`` is the whole series,
    ``total("fast.miss", script="han")`` the slice whose events were tagged
    ``script="han"`` (whatever other tags they carry). Events are kept until
    ``clear()``, so a long-running process should use an adapter to a real metrics
    system instead. All methods are thread-safe.

    Example::

        rec = MemoryRecorder()
        rec.record("gate.drop", reason="ack_only")
        rec.total("gate.drop", reason="ack_only")   # 1.0
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, list[tuple[float, Mapping[str, str]]]] = {}

    def record(self, name: str, value: float = 1.0, **tags: str) -> None:
        """Keep one event. ``value`` is stored as a float; ``tags`` as given."""
        event = (float(value), tags)
        with self._lock:
            self._events.setdefault(name, []).append(event)

    def values(self, name: str, **tags: str) -> list[float]:
        """The values of ``name``'s events carrying all of ``tags``, in recording order."""
        wanted = tags.items()
        with self._lock:
            events = self._events.get(name, ())
            return [value for value, have in events if wanted <= have.items()]

    def total(self, name: str, **tags: str) -> float:
        """The sum of ``values(name, **tags)``; ``0.0`` for a series never recorded."""
        return sum(self.values(name, **tags), 0.0)

    def names(self) -> set[str]:
        """Every series name recorded at least once since the last ``clear()``."""
        with self._lock:
            return set(self._events)

    def clear(self) -> None:
        """Forget every event."""
        with self._lock:
            self._events.clear()

    def __repr__(self) -> str:
        with self._lock:
            count = sum(len(events) for events in self._events.values())
        return f"MemoryRecorder({count} events in {len(self._events)} series)"
