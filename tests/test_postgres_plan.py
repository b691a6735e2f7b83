"""Text search on a store past ``PLAN_MIN_ROWS``: PostgreSQL plans it as SQLite does.

Both backends take the same 4,400 claims, so both plan each question (rare, common and
floor phrases, the exact head, the window) and must return the same ids with the same
scores, compared with ``==``. Where the plan's head is provably exact, it is also the
head of PostgreSQL's exact query (``_text.bm25_sql``); where it fills from the window,
the list may differ from the exact one, and the test shows that it does.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memvara import STATES, Claim, Memvara, NullLLM, Scope
from memvara.store import TimeQuery
from memvara._domain.time import to_micros
from memvara.store.sqlite._bm25 import PLAN_MIN_ROWS

from .conftest import Clock
from .postgres_server import drop_schemas, fresh_schema, pg_dsn

CLOCK = Clock()  # one clock for both memories, never advanced
SUBJECTS = 1100  # four claims each: 4,400 rows, past PLAN_MIN_ROWS (2,048)

# Each row says "user"; "lives" is in a quarter; "green" in 2,150 rows (just under half,
# and more than eight budgets of 256: never rare); "user_5" in four; "lives-in" is two
# tokens (a phrase counted from its rarer one).
QUESTIONS = (
    ["user_5", "lives"],  # rare + common: the exact head, then the window
    ["user", "lives"],  # floor + rare: every candidate is sure
    ["user", "nothing_matches_this"],  # floor only matches: filled with zeros
    ["green", "user"],  # no rare phrase: common window, then floor
    ["user_5", "user_6"],  # together under one budget: the exact query
    ["lives-in", "user_7"],  # a two-token phrase
    ["lives"],  # one phrase: the exact query
)


def fill(mem: Memvara) -> None:
    for user in ("u1", "u2"):
        batch: list[Claim] = []
        for s in range(SUBJECTS // 2):
            n = s * 2 + (user == "u2")
            green = "green " if n < 1075 else ""
            old = "old town " if n < 100 else ""  # longer rows first: the window's pick
            batch.extend([
                Claim(f"user_{n}", "lives_in", f"{old}city_c{n % 97}"),
                Claim(f"user_{n}", "works_at", f"org_o{n % 89}"),
                Claim(f"user_{n}", "likes", f"{green}thing_t{n % 83}"),
                Claim(f"user_{n}", "speaks", f"{green}lang_l{n % 7}"),
            ])
        mem.scope(user=user).remember_many(batch)
        mem.scope(user=user).add([  # 2,200 turns: episodes plan too
            f"{'green ' if s < 540 else ''}user_{s * 2 + (user == 'u2')} lives here"
            for s in range(SUBJECTS)])
    mem.search("warm up")


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[Memvara, Memvara]]:
    dsn = pg_dsn()
    from memvara.store.postgres import PostgresStore

    schema = fresh_schema()
    lite = Memvara(clock=CLOCK, llm=NullLLM())
    pg = Memvara(store=PostgresStore(dsn, schema=schema), clock=CLOCK, llm=NullLLM())
    try:
        fill(lite)
        fill(pg)
        yield lite, pg
    finally:
        lite.close()
        pg.close()
        drop_schemas(dsn, [schema])


def _tq(mem: Memvara) -> TimeQuery:
    now = to_micros(CLOCK(), "now")
    return TimeQuery(known_at=now, valid_at=now)


@pytest.mark.parametrize("limit", [1, 7, 40])
@pytest.mark.parametrize("terms", QUESTIONS, ids=" ".join)
def test_both_backends_plan_the_same_list(
    pair: tuple[Memvara, Memvara], terms: list[str], limit: int
) -> None:
    lite, pg = pair
    tq = _tq(lite)
    for scope in (Scope(user="u1"), Scope(user="u2")):
        for states in (["live"], list(STATES)):
            found = lite.store.search_claims_text(scope, tq, states, None, terms, limit)
            assert found == pg.store.search_claims_text(scope, tq, states, None, terms, limit)
            if terms[-1] != "nothing_matches_this":
                assert found, terms


@pytest.mark.parametrize("terms", QUESTIONS, ids=" ".join)
def test_turns_plan_the_same_list_on_both_backends(
    pair: tuple[Memvara, Memvara], terms: list[str]
) -> None:
    lite, pg = pair
    tq = _tq(lite)
    assert sum(pg.store.stats(Scope(user=u), tq.known_at)["episodes"]
               for u in ("u1", "u2")) >= PLAN_MIN_ROWS
    matched = 0
    for scope in (Scope(user="u1"), Scope(user="u2")):
        found = lite.store.search_episodes_text(scope, tq, terms, 7)
        assert found == pg.store.search_episodes_text(scope, tq, terms, 7)
        matched += len(found)
    assert matched or terms[-1] == "nothing_matches_this", terms


def _exact(pg: Memvara, terms: list[str], scope: Scope, limit: int) -> list[tuple[str, float]]:
    from memvara.store.postgres._text import bm25_sql

    store = pg.store
    tq = _tq(pg)
    where, params = store._filtered(scope, tq, ["live"])  # type: ignore[attr-defined]
    phrases = [p for p in store._tokenizer.phrases(terms) if p]  # type: ignore[attr-defined]
    sql, head = bm25_sql("claims", phrases, where)
    return [(str(k), float(s)) for k, s in store._query(  # type: ignore[attr-defined]
        sql, [*head, *params, limit])]


def test_a_sure_head_is_the_exact_head_and_a_window_is_not_the_exact_list(
    pair: tuple[Memvara, Memvara],
) -> None:
    _, pg = pair
    scope = Scope(user="u2")  # user_5's
    tq = _tq(pg)
    # "user_5" (rare) outscores anything "lives" (common) alone can add: those rows are exact.
    planned = pg.store.search_claims_text(scope, tq, ["live"], None, ["user_5", "lives"], 7)
    exact = _exact(pg, ["user_5", "lives"], scope, 7)
    assert planned[:4] == exact[:4]
    assert {k for k, _ in planned[:4]} == {c.id for c in pg.scope(user="u2").get_all()
                                          if c.subject == "user_5"}
    # The rest comes from the window (the first "lives" rows by rowid, not the
    # shortest): same scores' kind, a different choice of rows.
    assert planned[4:] != exact[4:]
    assert all(s <= planned[3][1] for _, s in planned[4:])
    # Floor phrases (in half the rows or more) add under 2.2e-6 in the exact query and
    # nothing in the plan.
    sure = pg.store.search_claims_text(scope, tq, ["live"], None, ["user", "lives"], 7)
    exact_sure = _exact(pg, ["user", "lives"], scope, 7)
    assert [k for k, _ in sure] == [k for k, _ in exact_sure]
    assert [s for _, s in sure] == pytest.approx([s for _, s in exact_sure], abs=2.2e-6)
