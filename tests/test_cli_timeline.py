"""``memvara timeline``: one slot on both clocks, as a table and as the bitemporal
diagram (``--png``), whose rectangles are checked against the claims' instants."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import pytest

from memvara import Claim, Memvara, NullLLM
from memvara.cli._plot import date_number, regions, timeline_figure
from tests.cli_story import Story, run
from tests.cli_story import story  # noqa: F401 - the fixture the tests below take
from tests.conftest import AUG, JAN, JUL, JUN, MAR, NOW, SEP

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def slot(path: str, subject: str, predicate: str) -> list[Claim]:
    with Memvara(path, user="alice", read_only=True, llm=NullLLM()) as mem:
        return mem.history(subject, predicate)


def test_the_table(story: Story, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "timeline", "--db", story.path, "--user", "alice",
                         "alice", "lives_in")
    assert status == 0
    assert out.splitlines() == [
        "alice lives_in: 2 claims on both clocks",
        "object  state  valid (world clock)                         believed (belief clock)",
        "Berlin  ended  2026-01-06T00:00:00Z..2026-06-24T00:00:00Z  2026-01-06T00:00:00Z..open",
        "Lisbon  live   2026-06-24T00:00:00Z..open                  2026-08-10T00:00:00Z..open",
    ]
    _, out, _ = run(capsys, "timeline", "--db", story.path, "--user", "alice", "alice", "works_at")
    assert out.splitlines()[2].split() == [
        "Acme", "retired", "2026-01-06T00:00:00Z..open", "2026-01-06T00:00:00Z..2026-03-01T00:00:00Z"]
    _, out, _ = run(capsys, "timeline", "--db", story.path, "--user", "alice", "--json",
                    "alice", "lives_in")
    assert json.loads(out) == [c.to_dict() for c in slot(story.path, "alice", "lives_in")]
    _, out, _ = run(capsys, "timeline", "--db", story.path, "--user", "alice", "alice", "owns")
    assert out == "alice owns: 0 claims on both clocks\n"


def rectangles(figure: object) -> list[tuple[str, float, float, float, float]]:
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    assert isinstance(figure, Figure)
    (axes,) = figure.axes
    return [(str(p.get_label()), p.get_x(), p.get_y(), p.get_width(), p.get_height())
            for p in axes.patches if isinstance(p, Rectangle)]


def box(label: str, x0: datetime, x1: datetime, y0: datetime, y1: datetime
        ) -> tuple[str, float, float, float, float]:
    x, y = date_number(x0), date_number(y0)
    return (label, x, y, date_number(x1) - x, date_number(y1) - y)


def test_the_diagram_has_a_rectangle_per_belief(story: Story) -> None:
    pytest.importorskip("matplotlib")
    claims = slot(story.path, "alice", "lives_in") + slot(story.path, "alice", "works_at")
    figure = timeline_figure(claims, NOW, "alice lives_in")
    (axes,) = figure.axes
    from matplotlib.dates import num2date

    x_lo, x_hi = axes.get_xlim()
    y_lo, y_hi = axes.get_ylim()
    left, right = num2date(x_lo), num2date(x_hi)  # type: ignore[no-untyped-call]
    top = num2date(y_hi)  # type: ignore[no-untyped-call]
    assert left < JAN and right > NOW and top > NOW and num2date(y_lo) < JAN  # type: ignore[no-untyped-call]
    berlin, lisbon, acme = (c.id for c in claims)
    drawn = rectangles(figure)
    expected = [
        box(berlin, JAN, right, JAN, AUG),  # believed open-ended until the move was heard
        box(berlin, JAN, JUN, AUG, top),    # then ended at the move
        box(lisbon, JUN, right, AUG, top),  # still true, still believed: to both edges
        box(acme, JAN, right, JAN, MAR),    # retired in March
    ]
    assert [d[0] for d in drawn] == [e[0] for e in expected]
    for got, want in zip(drawn, expected):
        assert got[1:] == pytest.approx(want[1:], abs=1e-6), got[0]
    styles = {str(p.get_label()): (p.get_hatch(), p.get_linestyle()) for p in axes.patches}
    assert styles[acme] == ("//", "--") and not styles[lisbon][0] and styles[lisbon][1] == "-"
    legend = axes.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == [
        "live: still true, still believed", "ended: true until valid_to",
        "retired: belief withdrawn"]
    assert [t.get_text() for t in axes.texts if t.get_text() != "now"] == [
        "Berlin", "Lisbon", "Acme"]
    assert axes.get_title() == "alice lives_in"


def test_the_png(story: Story, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    target = tmp_path / "t.png"
    status, out, _ = run(capsys, "timeline", "--db", story.path, "--user", "alice",
                         "--known-at", "2026-10-01T00:00:00Z", "alice", "lives_in", "--png",
                         str(target))
    assert status == 0
    size = target.stat().st_size
    assert out.splitlines()[-1] == f"wrote {target} ({size:,} bytes)"
    assert target.read_bytes().startswith(PNG_SIGNATURE) and size > 10_000
    pixels = imread(str(target))
    assert pixels.shape[:2] == (500, 800)
    colours = {tuple(p) for p in pixels.reshape(-1, pixels.shape[-1]).round(2).tolist()}
    assert len(colours) > 20  # drawn, not blank
    status, out, err = run(capsys, "timeline", "--db", story.path, "--user", "alice", "--json",
                           "--png", str(tmp_path / "j.png"), "alice", "works_at")
    assert status == 0 and json.loads(out)[0]["state"] == "retired"
    assert err.startswith(f"wrote {tmp_path / 'j.png'} (")


def test_an_empty_slot_draws_nothing(story: Story, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "none.png"
    status, _, err = run(capsys, "timeline", "--db", story.path, "alice", "lives_in", "--png",
                         str(target))
    assert status == 1  # the root scope holds none of alice's claims
    assert err == f"memvara timeline: no claims for alice lives_in here; {target} was not written\n"
    assert not target.exists()


def test_without_matplotlib(story: Story, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    status, out, err = run(capsys, "timeline", "--db", story.path, "--user", "alice",
                           "alice", "lives_in", "--png", str(tmp_path / "t.png"))
    assert (status, out) == (2, "")
    assert err == ("memvara timeline: --png needs matplotlib: pip install '.[plot]' (in a clone"
                   " of memvara), or pip install matplotlib\n")
    assert not (tmp_path / "t.png").exists()
    status, _, err = run(capsys, "timeline", "--db", story.path, "a", "b", "--png", str(tmp_path))
    assert status == 2 and err.startswith(f"memvara timeline: {tmp_path} is a folder")


def test_regions_of_unusual_claims() -> None:
    edges = (day_before := JAN.replace(day=1), NOW, day_before, NOW)
    known_from_the_start = Claim("a", "p", "x", valid_from=JAN, valid_to=MAR, recorded_at=JUN,
                                 valid_to_known_at=JUN)
    assert regions(known_from_the_start, *edges) == [(JAN, MAR, JUN, NOW)]
    retired_before_the_end_was_heard = Claim(
        "a", "p", "x", valid_from=JAN, valid_to=MAR, recorded_at=JAN, invalidated_at=JUN,
        valid_to_known_at=SEP)
    assert regions(retired_before_the_end_was_heard, *edges) == [(JAN, NOW, JAN, JUN)]
    undated = Claim("a", "p", "x", valid_to=JUL)
    assert regions(undated, *edges) == [(day_before, JUL, day_before, NOW)]


def test_labels_are_short_plain_text() -> None:
    pytest.importorskip("matplotlib")
    odd = Claim("a", "p", "costs $5 and\nthen $6, " + "y" * 40, valid_from=JAN, recorded_at=JAN,
                id="c1-0")
    figure = timeline_figure([odd], NOW, "odd")
    (axes,) = figure.axes
    assert axes.get_legend() is not None
    assert timeline_figure([], NOW, "nothing").axes[0].get_legend() is None
    assert [t.get_text() for t in axes.texts][0] == r"costs \$5 and then \$6, yyyyy..."
