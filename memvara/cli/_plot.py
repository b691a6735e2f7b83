"""``memvara timeline --png``: the classic bitemporal diagram of one slot.

Valid time (when a value held in the world) runs along the x axis, transaction time
(when memvara believed it) up the y axis, and each claim is the rectangle
``[valid_from, valid_to) x [recorded_at, invalidated_at)``. An open end runs to the
plot's edge: right for a value still in force, up to "now" for one still believed.
Retired claims (belief withdrawn: never true after all) are hatched with a dashed edge.
Reading across at one height gives what was believed then; reading up at one x, how
belief about that moment changed.

matplotlib is an optional extra (``pip install '.[plot]'``), imported only when a
figure is drawn, and only its Agg canvas is used: no window, no pyplot state.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from memvara import Claim

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "PlotUnavailableError", "date_number", "regions", "require_matplotlib", "save_png",
    "timeline_figure",
]

INSTALL_HINT = "pip install '.[plot]' (in a clone of memvara), or pip install matplotlib"

_COLOURS = {"live": "#4c72b0", "ended": "#55a868", "retired": "#c44e52"}
_LABELS = {
    "live": "live: still true, still believed",
    "ended": "ended: true until valid_to",
    "retired": "retired: belief withdrawn",
}


class PlotUnavailableError(RuntimeError):
    """matplotlib, which ``--png`` draws with, is not installed."""


def require_matplotlib() -> None:
    """Raise ``PlotUnavailableError``, with the install hint, unless matplotlib is installed."""
    try:
        import matplotlib  # noqa: F401 - only to learn whether it is installed
    except ImportError:
        raise PlotUnavailableError(f"--png needs matplotlib: {INSTALL_HINT}") from None


def _edges(claims: Sequence[Claim], now: datetime) -> tuple[datetime, datetime, datetime, datetime]:
    """The axes' limits: a margin left of and below the earliest instants; the right edge
    and the top a margin past the latest finite instant (and "now"), so that an open
    rectangle visibly runs off to it."""
    xs = [t for c in claims for t in (c.valid_from, c.valid_to) if t is not None] or [now]
    ys = [t for c in claims for t in (c.recorded_at, c.invalidated_at) if t is not None]
    ys.append(now)
    x_pad = max((max(xs) - min(xs)) / 12, timedelta(days=1))
    y_pad = max((max(ys) - min(ys)) / 12, timedelta(days=1))
    return min(xs) - x_pad, max(max(xs), now) + x_pad, min(ys) - y_pad, max(ys) + y_pad


def _label(text: str) -> str:
    """``text`` as a short one-line label, its ``$`` escaped (matplotlib would read
    ``$...$`` as mathematics, and fail on some)."""
    flat = " ".join(text.split())
    flat = flat if len(flat) <= 30 else flat[:27] + "..."
    return flat.replace("$", r"\$")


def date_number(value: datetime) -> float:
    """``value`` as a matplotlib date number (days since matplotlib's epoch): the unit of
    the diagram's rectangles."""
    from matplotlib.dates import date2num

    return float(date2num(value))  # type: ignore[no-untyped-call]


Region = tuple[datetime, datetime, datetime, datetime]
"""``(valid_from, valid_to, believed_from, believed_to)``: one rectangle of a diagram."""


def regions(claim: Claim, left: datetime, right: datetime, bottom: datetime,
            top: datetime) -> list[Region]:
    """The rectangles one claim covers, an open end running to the edge (``right`` in
    valid time, ``top`` in transaction time; a missing start, to ``left``/``bottom``).

    One rectangle, ``[valid_from, valid_to) x [recorded_at, invalidated_at)``, unless
    the end of valid time was learned after the claim was recorded (``alice`` moved in
    June, and memvara heard in August): until then the claim was believed open-ended,
    so below ``valid_to_known_at`` it runs to the right edge, and above it stops at
    ``valid_to``: an L, drawn as two rectangles.
    """
    start = claim.valid_from if claim.valid_from is not None else left
    believed = claim.recorded_at if claim.recorded_at is not None else bottom
    until = claim.invalidated_at if claim.invalidated_at is not None else top
    if claim.valid_to is None:
        return [(start, right, believed, until)]
    learned = max(believed, min(claim.valid_to_known_at or believed, until))
    found: list[Region] = []
    if learned > believed:
        found.append((start, right, believed, learned))
    if until > learned:
        found.append((start, claim.valid_to, learned, until))
    return found


def timeline_figure(claims: Sequence[Claim], now: datetime, title: str) -> Figure:
    """The diagram of ``claims`` (one slot's history) as a matplotlib ``Figure`` on the
    Agg canvas: each claim's ``regions()`` as ``Rectangle`` patches labelled with its
    id, in order, ``x``/``width`` in valid time and ``y``/``height`` in transaction time
    (matplotlib date numbers, ``date_number()``).

    Args:
        claims: the slot's claims, as ``history()`` returns them.
        now: the belief clock's "now": where a claim still believed ends, at the top.
        title: the figure's title.

    Raises:
        PlotUnavailableError: matplotlib is not installed.
    """
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, Rectangle

    left, right, bottom, top = _edges(claims, now)
    figure = Figure(figsize=(8, 5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for claim in claims:
        retired, colour = claim.state == "retired", _COLOURS[claim.state]
        for x0, x1, y0, y1 in regions(claim, left, right, bottom, top):
            x, y = date_number(x0), date_number(y0)
            axes.add_patch(Rectangle(
                (x, y), date_number(x1) - x, date_number(y1) - y, label=claim.id,
                facecolor=colour, edgecolor=colour, alpha=0.35 if retired else 0.5,
                linewidth=1.5, linestyle="--" if retired else "-",
                hatch="//" if retired else None))
        corner = (date_number(claim.valid_from or left), date_number(claim.recorded_at or bottom))
        axes.annotate(_label(claim.object), corner, xytext=(4, 4), textcoords="offset points",
                      fontsize=9, clip_on=True)
    axes.axhline(date_number(now), color="0.4", linewidth=0.8, linestyle=":")
    axes.annotate("now", (1.0, date_number(now)), xycoords=("axes fraction", "data"),
                  xytext=(-4, 3), textcoords="offset points", ha="right", fontsize=8,
                  color="0.3")
    axes.set_xlim(date_number(left), date_number(right))
    axes.set_ylim(date_number(bottom), date_number(top))
    for axis in (axes.xaxis, axes.yaxis):
        locator = AutoDateLocator()  # type: ignore[no-untyped-call]
        axis.set_major_locator(locator)
        axis.set_major_formatter(ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    axes.set_xlabel("valid time: when it held in the world")
    axes.set_ylabel("transaction time: when memvara believed it")
    axes.set_title(title)
    states = [s for s in ("live", "ended", "retired") if any(c.state == s for c in claims)]
    if states:
        axes.legend(handles=[
            Patch(facecolor=_COLOURS[s], edgecolor=_COLOURS[s], alpha=0.5,
                  hatch="//" if s == "retired" else None,
                  linestyle="--" if s == "retired" else "-", label=_LABELS[s])
            for s in states], loc="upper center", bbox_to_anchor=(0.5, -0.12),
            ncols=len(states), fontsize=8, frameon=False)
    axes.grid(True, linewidth=0.3, alpha=0.5)
    return figure


def save_png(figure: Figure, path: str) -> int:
    """Write ``figure`` to ``path`` as a PNG; its size in bytes."""
    figure.savefig(path, format="png")
    return os.path.getsize(path)
