"""bench/perf.py stays runnable: a tiny run prints its table and writes its JSON.

Speed itself is measured by running the script, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from memvara import Memvara

from .postgres_server import pg_dsn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import perf  # noqa: E402 - the bench folder is put on the path just above


def test_perf_runs_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "perf.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "perf.py"), "--sizes", "120", "--repeats", "1",
         "--row-budget-s", "0.5", "--sample-cap-s", "0.1", "--dir", str(tmp_path / "stores"),
         "--writers", "1", "--writer-writes", "10", "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "| measure |" in result.stdout
    rows = json.loads(out.read_text())["rows"]
    measures = {row["measure"] for row in rows}
    assert any(m.startswith("remember()") for m in measures)
    assert any(m.startswith("bytes on disk") for m in measures)
    assert any(m.startswith("add()") for m in measures)
    assert "1 writer process, remember()" in measures
    assert {row["store"] for row in rows} == {"sqlite"}


def test_postgres_runs_beside_sqlite_at_a_tiny_size(tmp_path: Path) -> None:
    # The side-by-side run: both stores' rows in one table, the PostgreSQL bytes row, the
    # writer-process rows, and the schemas dropped afterwards.
    dsn = pg_dsn()
    import psycopg

    out = tmp_path / "perf.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "perf.py"), "--store", "sqlite,postgres",
         "--dsn", dsn, "--sizes", "60", "--repeats", "1", "--layouts", "root",
         "--row-budget-s", "0.2", "--sample-cap-s", "0.05", "--writers", "1,2",
         "--writer-writes", "10", "--dir", str(tmp_path / "stores"), "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "| store | measure |" in result.stdout
    rows = json.loads(out.read_text())["rows"]
    by_store = {store: {r["measure"]: r for r in rows if r["store"] == store}
                for store in ("sqlite", "postgres")}
    assert set(by_store["sqlite"]) - set(by_store["postgres"]) == {
        "bytes on disk / claim (apparent size)", "bytes on disk / claim (allocated blocks)"}
    assert set(by_store["postgres"]) - set(by_store["sqlite"]) == {
        "bytes on disk / claim (pg_total_relation_size)"}
    assert by_store["postgres"]["bytes on disk / claim (pg_total_relation_size)"]["median"] > 0
    for store in by_store.values():
        assert store["count() at root"]["note"] == "= 42: the whole store"
        assert store["1 writer process, remember()"]["median"] > 0
        assert store["2 writer processes, remember()"]["unit"] == "writes/s"
    with psycopg.connect(dsn) as conn:
        left = conn.execute("SELECT count(*) FROM pg_namespace"
                            " WHERE nspname = 'bench_perf_root_60'").fetchone()
    assert left == (0,)


def test_the_postgres_write_profile_runs_at_a_tiny_size() -> None:
    dsn = pg_dsn()
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "pg_writes.py"), "--size", "40", "--calls", "3",
         "--dsn", dsn],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "`BEGIN`, one-row `INSERT`, `COMMIT` p50" in result.stdout
    # every write is one transaction: its statements are timed, COMMIT among them
    assert result.stdout.count("| `COMMIT` | 1.00 |") == 2


def test_postgres_without_a_server_is_refused_by_name() -> None:
    with pytest.raises(SystemExit):
        perf._parse(["--store", "postgres", "--dsn", ""])
    with pytest.raises(SystemExit):
        perf._parse(["--store", "mysql"])


def test_write_samples_alternate_between_sizes_and_flip_order_each_round() -> None:
    # The machine's speed drifts over minutes: each round samples every size, so a slow
    # spell lands on both, and the size sampled first alternates.
    ran: list[tuple[str, str, int]] = []
    cfg = perf.Settings(repeats=3, build_cap_s=1.0, sample_cap_s=1.0, row_budget_s=60.0)

    def sampler(label: str, name: str) -> Callable[[int], float]:
        def sample(rep: int) -> float:
            ran.append((label, name, rep))
            return 20.0 + rep
        return sample

    def store(label: str, n: int, mem: Memvara) -> tuple[perf.Built, list[perf.WriteMeasure]]:
        built = perf.Built(mem=mem, path="", clock=perf.CounterClock(), n=n, requested=n)
        return built, [perf.WriteMeasure(name, "claims/s", 10.0, "", sampler(label, name))
                       for name in ("fresh", "bulk")]

    with Memvara() as unused:  # the samplers here write nothing
        small, large = perf._interleave(
            [store("8k", 8000, unused), store("100k", 100_000, unused)], cfg)
    assert ran == [
        ("8k", "fresh", 0), ("100k", "fresh", 0), ("100k", "fresh", 1), ("8k", "fresh", 1),
        ("8k", "fresh", 2), ("100k", "fresh", 2),
        ("8k", "bulk", 0), ("100k", "bulk", 0), ("100k", "bulk", 1), ("8k", "bulk", 1),
        ("8k", "bulk", 2), ("100k", "bulk", 2),
    ]
    assert [(r.measure, r.n, r.samples, r.passed) for r in small] == [
        ("fresh", 8000, [20.0, 21.0, 22.0], True), ("bulk", 8000, [20.0, 21.0, 22.0], True)]
    assert [r.n for r in large] == [100_000, 100_000]


def test_two_sizes_give_flatness_rows(tmp_path: Path) -> None:
    out = tmp_path / "perf.json"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "perf.py"), "--sizes", "80,160", "--repeats", "2",
         "--layouts", "root", "--row-budget-s", "0.5", "--sample-cap-s", "0.05",
         "--writers", "0", "--dir", str(tmp_path / "stores"), "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    rows = json.loads(out.read_text())["rows"]
    fresh = [r for r in rows if r["measure"] == "remember() 1 call/claim, fresh slot"]
    assert [r["n"] for r in fresh] == [80, 160]
    assert all(len(r["samples"]) == 2 for r in fresh)
    flat = [r for r in rows if r["measure"].startswith("flatness: remember()")]
    assert len(flat) == 2 and all(r["n"] == 160 for r in flat)
    ratio = fresh[1]["median"] / fresh[0]["median"]
    assert any(r["samples"] == [pytest.approx(ratio)] for r in flat)


def test_the_telemetry_control_has_no_emission_points_and_still_runs(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("telemetry_cost", ROOT / "bench" / "telemetry_cost.py")
    assert spec is not None and spec.loader is not None
    telemetry_cost = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(telemetry_cost)
    assert telemetry_cost.build_control(tmp_path) >= 6
    control = (tmp_path / "memvara" / "_write" / "ingest.py").read_text()
    assert ".record(" not in control  # every emission is gone
    assert telemetry_cost.run(tmp_path, 30) > 0
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "telemetry_cost.py"), "--runs", "1", "--turns", "30"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "median difference" in result.stdout


def test_the_search_benchmark_runs_at_a_tiny_size() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "search.py"), "--sizes", "40", "--queries", "3"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "| 40 |" in result.stdout
