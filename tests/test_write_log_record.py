"""The write log record's text built straight from the pending list (``_log._rowids``)
must be byte for byte what the general path (``canonical_body`` of the grouped body)
gives, or ``verify()`` would fail on records written one way and checked the other; and
its hash must be SHA-256's whichever implementation computes it."""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memvara import Memvara, SQLiteStore
from memvara._domain.ledger import _builtin_sha256, canonical_body, canonical_ids, record_hash
from memvara.store.sqlite._log import _LISTED_ALONE, LOG_OPS, _new_rows, _new_turns, _rowids

from .conftest import Clock

_DETERMINISTIC = settings(max_examples=300, deadline=None, derandomize=True)
"""The same examples every run (the suite is deterministic)."""
_Row = tuple[str, "int | None", "str | None"]
_ROWIDS = st.integers(min_value=1, max_value=2**62)
_LISTED = st.tuples(st.sampled_from(sorted(_LISTED_ALONE)), _ROWIDS, st.none())
_OTHER = st.one_of(
    st.tuples(st.sampled_from(sorted(set(LOG_OPS) - _LISTED_ALONE)), _ROWIDS, st.none()),
    st.tuples(st.sampled_from(["aliases_learned", "note", "kept"]), st.none(), st.none()),
)


def _grouped(rows: list[_Row]) -> dict[str, list[int]]:
    """What ``WriteLog._body`` makes of a list of rowids: each op's rows, in order."""
    body: dict[str, list[int]] = {}
    for op, row, _ in rows:
        assert row is not None
        body.setdefault(op, []).append(row)
    return body


@_DETERMINISTIC
@given(st.lists(_LISTED, min_size=1, max_size=8), _ROWIDS, _ROWIDS)
def test_the_text_built_from_rowids_is_the_canonical_text_of_their_body(
        rows: list[_Row], top: int, top_turn: int) -> None:
    listed = _rowids(rows, top, top_turn)
    assert listed is not None
    text, new, new_turns = listed
    body = _grouped(rows)
    assert text == canonical_body(body) == canonical_ids(body)
    assert sorted(new) == sorted(_new_rows(body, top))
    assert new_turns == _new_turns(body, top_turn)


def test_the_common_shapes_give_the_texts_the_general_path_gives() -> None:
    shapes: list[tuple[list[_Row], str]] = [
        ([("added", 7, None)], '{"added":[7]}'),
        ([("added", 8, None), ("ended", 6, None)], '{"added":[8],"ended":[6]}'),
        ([("ended", 6, None), ("added", 8, None)], '{"added":[8],"ended":[6]}'),
        ([("turns_added", 16, None), ("added", 8, None), ("ended", 6, None)],
         '{"added":[8],"ended":[6],"turns_added":[16]}'),
        ([("turns_added", 3, None), ("turns_added", 2, None), ("added", 9, None)],
         '{"added":[9],"turns_added":[3,2]}'),
        ([("ended", 5, None), ("ended", 5, None)], '{"ended":[5,5]}'),
    ]
    for rows, expected in shapes:
        listed = _rowids(rows, 0, 0)
        assert listed is not None and listed[0] == expected == canonical_body(_grouped(rows))
    assert _rowids([("restored", 4, None), ("added", 2, None)], 3, 0) == ('{"added":[2],"restored":[4]}', [4], [])
    assert _rowids([("turns_added", 4, None)], 9, 3) == ('{"turns_added":[4]}', [], [4])
    assert _rowids([("turns_added", 4, None)], 0, 4) == ('{"turns_added":[4]}', [], [])


@_DETERMINISTIC
@given(st.lists(_LISTED, max_size=4), _OTHER, st.lists(_LISTED, max_size=4))
def test_any_other_entry_leaves_the_list_to_the_general_path(before: list[_Row], other: _Row,
                                                             after: list[_Row]) -> None:
    assert _rowids([*before, other, *after], 0, 0) is None


def test_records_written_by_both_paths_verify_and_name_the_actor(tmp_path: Path, clock: Clock) -> None:
    with Memvara(store=SQLiteStore(str(tmp_path / "m.db")), clock=clock) as mem:
        mem.remember("ann", "lives_in", "Porto")  # one row
        mem.remember("ann", "lives_in", "Lisbon")  # a revision: added + ended
        bob = mem.remember("bob", "works_at", "Acme", actor="hr-bot").added[0]  # named, one row
        bob2 = mem.remember("bob", "works_at", "Initech", actor="hr-bot").added[0]  # named revision
        mem.remember("bob", "works_at", "Initech", actor="hr-bot")  # named, nothing added
        assert mem.forget("ann", "lives_in", actor="cleaner")  # retired
        assert mem.verify().ok
        store: Any = mem.store
        bodies = [json.loads(record[4]) for record in store.log_records(0, 100)]
        assert [record[4] for record in store.log_records(0, 100)] == [canonical_body(b) for b in bodies]
        assert len(bodies[1]) == len(bodies[3]) == 2 and "added" in bodies[1] and "added" in bodies[3]
        assert list(bodies[-1]) == ["retired"]
        for claim in (bob, bob2):
            why = mem.why(claim.id)
            assert why is not None and why.actor == "hr-bot"


# -- the record's hash ----------------------------------------------------------------------

@_DETERMINISTIC
@given(prev=st.text(alphabet="0123456789abcdef", min_size=64, max_size=64), seq=_ROWIDS,
       at=st.integers(min_value=0, max_value=2**62), actor=st.text(), action=st.text(), body=st.text())
def test_a_record_hash_is_hashlibs_sha256_of_the_canonical_form(
        prev: str, seq: int, at: int, actor: str, action: str, body: str) -> None:
    """Hashed with CPython's own SHA-256 (faster where a write hashes one record), a
    record's hash is still the one any SHA-256 gives, so a chain checks anywhere."""
    form = f"{prev}\n{seq}\n{at}\n{len(actor)}:{actor}\n{len(action)}:{action}\n{body}"
    assert record_hash(prev, seq, at, actor, action, body) == \
        hashlib.sha256(form.encode("utf-8", "surrogatepass")).hexdigest()


def test_without_cpythons_own_sha256_the_hash_is_hashlibs() -> None:
    def only(names: set[str]) -> Callable[[str], Any]:
        def import_module(name: str) -> Any:
            if name not in names:
                raise ImportError(name)
            return importlib.import_module(name)
        return import_module

    assert _builtin_sha256(only(set())) is hashlib.sha256
    found = _builtin_sha256(only({"_sha256", "_sha2"}))
    assert found is not hashlib.sha256
    assert found(b"abc").hexdigest() == hashlib.sha256(b"abc").hexdigest()
    assert _builtin_sha256(only({"json"})) is hashlib.sha256  # imported, but no sha256 in it
