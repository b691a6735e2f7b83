"""Export and import carry what governance keeps: the archive, the tombstones and (when
asked) the write logs, each checked before anything is written."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path

import pytest

from memvara import Memvara, export_jsonl, import_jsonl
from memvara._errors import ImportConflictError, InvalidArgumentError, InvalidExportError, StoreError
from memvara.llm import NullLLM
from memvara.store.base import GovernanceTransferStore

from .conftest import Clock

ALL = ("live", "ended", "retired")


def governed(clock: Clock) -> Memvara:
    """A memory with an archived claim, a tombstone and a few log records."""
    mem = Memvara(clock=clock, llm=NullLLM())
    mem.remember("ann", "lives_in", "Porto", user="ann")
    clock.advance(days=1)
    mem.remember("ann", "lives_in", "Lisbon", user="ann", actor="ops")
    mem.remember("Zed", "likes", "tea", user="zed")
    clock.advance(days=100)
    mem.prune(timedelta(days=30))
    mem.forget_subject("Zed", reason="request", requested_by="dpo")
    return mem


def exported(mem: Memvara, **kwargs: bool) -> str:
    out = io.StringIO()
    export_jsonl(mem, out, **kwargs)
    return out.getvalue()


def test_archive_tombstones_and_logs_travel_and_the_logs_chain_on(clock: Clock) -> None:
    source = governed(clock)
    text = exported(source, include_log=True)
    kinds = [json.loads(line).get("type") for line in text.splitlines()[1:]]
    assert kinds.count("archived") == 1 and kinds.count("tombstone") == 1
    assert kinds.count("log") == len(source.store.log_records(0, 100))  # type: ignore[attr-defined]
    with Memvara(clock=clock, llm=NullLLM()) as target:
        counts = import_jsonl(target, io.StringIO(text))
        assert counts["archived"] == 1 and counts["tombstones"] == 1 and counts["log"] == kinds.count("log")
        assert [(c.id, c.object) for c in target.archived()] == [(c.id, c.object) for c in source.archived()]
        assert target.tombstones() == source.tombstones()
        assert [c.id for c in target.get_all(user="ann", states=ALL)] == \
            [c.id for c in source.get_all(user="ann", states=ALL)]
        assert target.verify().ok  # its own chain: one record, the import
        again = exported(target, include_log=True)
        theirs = [line for line in again.splitlines() if '"type":"log"' in line]
        mine = target.store.log_identity()  # type: ignore[attr-defined]
        assert sum(f'"store":"{mine}"' in line for line in theirs) == 1
        assert len(theirs) == kinds.count("log") + 1  # the source's chain, carried on
        restored = target.restore_archived()
        assert [c.object for c in target.history("ann", "lives_in", user="ann")] == ["Porto", "Lisbon"]
        assert restored == [c.id for c in source.archived()]
        with Memvara(clock=clock, llm=NullLLM()) as third:  # and it imports again, both chains
            assert import_jsonl(third, io.StringIO(again))["log"] == len(theirs)
    source.close()


def test_without_include_log_no_log_travels_and_a_plain_memory_answers_as_before(clock: Clock) -> None:
    with governed(clock) as source:
        text = exported(source)
        assert '"type":"log"' not in text and '"log"' not in text.splitlines()[0]
        with Memvara(clock=clock, llm=NullLLM()) as plain:
            plain.remember("bo", "likes", "jam")
            assert export_jsonl(plain, io.StringIO()) == {
                "predicates": 0, "aliases": 0, "episodes": 0, "claims": 1}
        with pytest.raises(InvalidArgumentError, match="include_log"):
            export_jsonl(source.scope(user="ann"), io.StringIO(), include_log=True)
        with pytest.raises(InvalidArgumentError, match="include_log"):
            export_jsonl(source, io.StringIO(), include_log="yes")  # type: ignore[arg-type]


def test_what_the_store_holds_already_is_a_conflict_naming_its_line(clock: Clock) -> None:
    with governed(clock) as source:
        text = exported(source, include_log=True)
        with Memvara(clock=clock, llm=NullLLM()) as target:
            import_jsonl(target, io.StringIO(text))
            anchor = target.anchor()
            with pytest.raises(ImportConflictError, match="archive"):
                import_jsonl(target, io.StringIO(text))
            tomb_only = "\n".join(line for line in text.splitlines()
                                  if '"type":"tombstone"' in line or '"format"' in line)
            header = json.loads(tomb_only.splitlines()[0])
            header["counts"] = {"predicates": 0, "aliases": 0, "episodes": 0, "claims": 0,
                                "tombstones": 1}
            one = json.dumps(header) + "\n" + tomb_only.splitlines()[1] + "\n"
            with pytest.raises(ImportConflictError, match="line 2: tombstone .* already"):
                import_jsonl(target, io.StringIO(one))
            logs = [line for line in text.splitlines() if '"type":"log"' in line]
            header["counts"] = {"predicates": 0, "aliases": 0, "episodes": 0, "claims": 0,
                                "log": len(logs)}
            with pytest.raises(ImportConflictError, match="log record 1 of store .* already"):
                import_jsonl(target, io.StringIO(json.dumps(header) + "\n" + "\n".join(logs) + "\n"))
            assert target.anchor() == anchor  # nothing was written


def test_an_edited_log_line_or_a_log_below_the_root_is_refused(clock: Clock) -> None:
    with governed(clock) as source:
        text = exported(source, include_log=True)
    edited = text.replace('"action":"prune"', '"action":"remember"', 1)
    with Memvara(clock=clock, llm=NullLLM()) as target:
        with pytest.raises(InvalidExportError, match="does not chain"):
            import_jsonl(target, io.StringIO(edited))
        logs = [line for line in text.splitlines() if '"type":"log"' in line]
        header = json.loads(text.splitlines()[0])
        header["counts"] = {"predicates": 0, "aliases": 0, "episodes": 0, "claims": 0,
                            "log": len(logs)}
        with pytest.raises(ImportConflictError, match="root scope only"):
            import_jsonl(target.scope(user="ann"),
                         io.StringIO(json.dumps(header) + "\n" + "\n".join(logs) + "\n"))


def test_rows_outside_the_importing_scope_are_refused(clock: Clock) -> None:
    with governed(clock) as source:
        text = exported(source)
    with Memvara(clock=clock, llm=NullLLM()) as target:
        bob = target.scope(user="bob")
        archived_only = [line for line in text.splitlines() if '"type":"archived"' in line]
        header = {"format": "memvara", "version": 2, "exported_at": "2026-10-01T00:00:00+00:00",
                  "scope": {"tenant": None, "user": None, "agent": None, "session": None},
                  "counts": {"predicates": 0, "aliases": 0, "episodes": 0, "claims": 0, "archived": 1}}
        with pytest.raises(ImportConflictError, match="archived claim is in scope"):
            import_jsonl(bob, io.StringIO(json.dumps(header) + "\n" + archived_only[0] + "\n"))
        tombs = [line for line in text.splitlines() if '"type":"tombstone"' in line]
        header["counts"] = {"predicates": 0, "aliases": 0, "episodes": 0, "claims": 0, "tombstones": 1}
        with pytest.raises(ImportConflictError, match="tombstone's scope"):
            import_jsonl(bob, io.StringIO(json.dumps(header) + "\n" + tombs[0] + "\n"))


@pytest.mark.parametrize(("edit", "problem"), [
    (lambda d: {**d, "erased": 3}, "tombstone.erased: expected an object"),
    (lambda d: {**d, "reason": 5}, "tombstone.reason"),
])
def test_a_bad_tombstone_line_is_named(clock: Clock, edit: object, problem: str) -> None:
    with governed(clock) as source:
        text = exported(source)
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if '"type":"tombstone"' in line)
    lines[at] = json.dumps(edit(json.loads(lines[at])))  # type: ignore[operator]
    with Memvara(clock=clock, llm=NullLLM()) as target:
        with pytest.raises(InvalidExportError, match=problem):
            import_jsonl(target, io.StringIO("\n".join(lines) + "\n"))


def test_a_bad_log_line_is_named(clock: Clock) -> None:
    with governed(clock) as source:
        text = exported(source, include_log=True)
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if '"type":"log"' in line)
    lines[at] = json.dumps({**json.loads(lines[at]), "seq": 0})
    with Memvara(clock=clock, llm=NullLLM()) as target:
        with pytest.raises(InvalidExportError, match=f"line {at + 1}: log.seq"):
            import_jsonl(target, io.StringIO("\n".join(lines) + "\n"))


def test_a_store_without_governance_exports_none_and_refuses_a_file_with_some(
        clock: Clock, tmp_path: Path) -> None:
    from .store_without import store_without
    with governed(clock) as source:
        text = exported(source)
    bare = store_without("dump_archived")
    with Memvara(store=bare(), clock=clock, llm=NullLLM()) as target:
        target.remember("bo", "likes", "jam")
        assert '"type":"archived"' not in exported(target)
        with pytest.raises(StoreError, match="GovernanceTransferStore"):
            import_jsonl(target, io.StringIO(text))
        assert target.count() == 1
        with Memvara(clock=clock, llm=NullLLM()) as plain:
            first = plain.remember("cy", "likes", "tea").added[0]
            plain.remember("di", "likes", "tea")
            plain.erase(first.id)  # only row 2 travels: row 1 is the target's
            assert import_jsonl(target, io.StringIO(exported(plain)))["claims"] == 1


def test_an_archived_claim_whose_row_a_claim_holds_is_a_conflict(clock: Clock) -> None:
    with governed(clock) as source:
        text = exported(source)
    archived = [line for line in text.splitlines() if '"type":"archived"' in line][0]
    rowid = json.loads(archived)["id"].split("-")[0]
    with Memvara(clock=clock, llm=NullLLM()) as target:
        for i in range(int(rowid[1:])):
            target.remember("bo", "likes", f"thing{i}")
        header = json.loads(text.splitlines()[0])
        header["counts"] = {"predicates": 0, "aliases": 0, "episodes": 0, "claims": 0, "archived": 1}
        with pytest.raises(ImportConflictError, match="line 2: "):
            import_jsonl(target, io.StringIO(json.dumps(header) + "\n" + archived + "\n"))


def test_the_store_refuses_a_tombstone_or_log_record_it_holds(clock: Clock) -> None:
    with governed(clock) as source:
        store = source.store
        assert isinstance(store, GovernanceTransferStore)
        tomb = store.tombstones()[0]
        with pytest.raises(StoreError, match="already"):
            store.restore_tombstones([tomb])
        record = ("other", (1, 0, "", "write", "{}", "0" * 64))
        assert store.restore_logs([record]) == 1
        with pytest.raises(StoreError, match="already"):
            store.restore_logs([record])
        assert store.foreign_logs() == [record]


def reviewed(clock: Clock) -> Memvara:
    mem = Memvara(clock=clock, llm=NullLLM())
    mem.remember("Maya", "lives_in", "Porto", user="maya")
    mem.observe("Maya", "lives_in", "Lisbon", support=["a", "b"], user="maya")
    mem.observe("Maya", "lives_in", "Faro", support=["c"], user="maya", actor="crawler")
    return mem


def only(text: str, kind: str) -> str:
    lines = [line for line in text.splitlines() if f'"type":"{kind}"' in line]
    header = json.loads(text.splitlines()[0])
    header["counts"] = {"predicates": 0, "aliases": 0, "episodes": 0, "claims": 0,
                        ("evidence" if kind == "evidence" else kind + "s"): len(lines)}
    return json.dumps(header) + "\n" + "\n".join(lines) + "\n"


def test_reviews_and_their_evidence_travel(clock: Clock) -> None:
    with reviewed(clock) as source:
        text = exported(source)
        assert export_jsonl(source, io.StringIO())["reviews"] == 1
        with Memvara(clock=clock, llm=NullLLM()) as target:
            counts = import_jsonl(target, io.StringIO(text))
            assert (counts["reviews"], counts["evidence"]) == (1, 3)
            assert target.reviews() == source.reviews()
            echo = target.observe("Maya", "lives_in", "Faro", support=["c"], user="maya")
            assert (echo.grounds, echo.echoes) == (1, 1)  # the pending ground came along
            assert target.resolve(target.reviews()[0].id, "keep").status == "kept"
            with pytest.raises(ImportConflictError, match="review 'r1' is in this store already"):
                import_jsonl(target, io.StringIO(only(text, "review")))
            with pytest.raises(StoreError, match="in this store already"):
                import_jsonl(target, io.StringIO(only(text, "evidence")))
            assert len(target.reviews(user="maya")) == 0  # nothing half-done
        with Memvara(clock=clock, llm=NullLLM()) as other:
            with pytest.raises(ImportConflictError, match="the review is in scope"):
                import_jsonl(other.scope(user="bob"), io.StringIO(only(text, "review")))


@pytest.mark.parametrize(("kind", "edit", "problem"), [
    ("review", {"status": "maybe"}, "review: status must be"),
    ("review", {"held": "c1"}, "review: status must be"),
    ("evidence", {"polarity": 2}, "evidence: polarity must be"),
    ("evidence", {"observed_at": "today"}, "evidence: polarity must be 1 or -1 and instants"),
    ("review", {"subject": ""}, "review.subject"),
])
def test_a_bad_review_line_is_named(clock: Clock, kind: str, edit: dict[str, object],
                                    problem: str) -> None:
    with reviewed(clock) as source:
        text = only(exported(source), kind)
    lines = text.splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), **edit})
    with Memvara(clock=clock, llm=NullLLM()) as target:
        with pytest.raises(InvalidExportError, match=f"line 2: {problem}"):
            import_jsonl(target, io.StringIO("\n".join(lines) + "\n"))
