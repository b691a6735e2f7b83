"""Metadata goes through ``meta=`` and only the scope keywords choose a scope; a keyword
the API does not take fails with a ``TypeError`` that names the keyword meant."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from memvara import AsyncMemvara, Memvara, NullLLM, Scope
from memvara._facade.keywords import suggestion


@pytest.mark.parametrize("call, wrong, meant", [
    (lambda m, kw: m.remember("u", "likes", "tea", **kw), "user_id", "user"),
    (lambda m, kw: m.remember("u", "likes", "tea", **kw), "valid_form", "valid_from"),
    (lambda m, kw: m.remember("u", "likes", "tea", **kw), "metadata", "meta"),
    (lambda m, kw: m.remember("u", "likes", "tea", **kw), "run_id", "session"),
    (lambda m, kw: m.search("tea", **kw), "top_k", "k"),
    (lambda m, kw: m.add("I live in Oslo", **kw), "agent_id", "agent"),
    (lambda m, kw: m.get_all(**kw), "as_off", "as_of"),
    (lambda m, kw: m.scope(**kw), "usr", "user"),
])
def test_a_wrong_keyword_names_the_one_meant(call: Any, wrong: str, meant: str) -> None:
    with Memvara(llm=NullLLM()) as mem:
        with pytest.raises(TypeError, match=f"'{wrong}'; did you mean {meant}=") as caught:
            call(mem, {wrong: "x"})
        assert caught.value.__cause__ is None
        assert mem.count(states=["live", "ended", "retired"]) == 0  # nothing was written


def test_an_unrelated_keyword_lists_what_is_taken() -> None:
    with Memvara(llm=NullLLM()) as mem:
        with pytest.raises(TypeError, match="'colour'; it takes subject, predicate, obj"):
            mem.remember("u", "likes", "tea", colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="'user_id'; did you mean user="):
        Memvara(user_id="bob")  # type: ignore[call-arg]


def test_a_type_error_from_inside_a_call_is_not_reworded() -> None:
    with Memvara(llm=NullLLM()) as mem:
        mem.close()

        class Odd:
            def __str__(self) -> str:
                raise TypeError("got an unexpected keyword argument 'x'")

        with pytest.raises(Exception) as caught:
            mem.remember("u", "likes", Odd())  # type: ignore[arg-type]
        assert "did you mean" not in str(caught.value)


def test_metadata_is_data_and_never_moves_a_write() -> None:
    with Memvara(llm=NullLLM(), user="ann") as mem:
        claim = mem.remember("u", "likes", "tea", meta={"user": "bob", "source": "chat"}).added[0]
        assert claim.scope == Scope(user="ann") and claim.meta == {"user": "bob", "source": "chat"}
        assert mem.count(user="bob") == 0
        bulk = mem.remember_many([mem.get(claim.id) or claim], meta={"batch": 7, "source": "x"})
        assert bulk.reinforced[0].meta["source"] == "chat"  # a claim's own key wins
        turn = mem.add("I live in Oslo", meta={"channel": "sms"})
        assert [c.meta for c in turn.added] == [{"channel": "sms"}]


def test_bad_meta_is_refused_by_name() -> None:
    with Memvara(llm=NullLLM()) as mem:
        for bad in ([("a", 1)], {"a": {1, 2}}, {"": 1}):
            with pytest.raises(ValueError, match="^meta: "):
                mem.remember("u", "likes", "tea", meta=bad)  # type: ignore[arg-type]
            with pytest.raises(ValueError, match="^meta: "):
                mem.add("I live in Oslo", meta=bad)  # type: ignore[arg-type]
        assert mem.count(states=["live", "ended", "retired"]) == 0


def test_the_async_twin_names_the_keyword_meant_too() -> None:
    async def calls() -> None:
        async with AsyncMemvara(Memvara(llm=NullLLM())) as amem:
            with pytest.raises(TypeError, match="did you mean user="):
                await amem.remember("u", "likes", "tea", user_id="bob")  # type: ignore[call-arg]
            with pytest.raises(TypeError, match="did you mean meta="):
                await amem.add("hi", metadata={})  # type: ignore[call-overload]

    asyncio.run(calls())


def test_suggestion_prefers_a_known_foreign_spelling() -> None:
    assert suggestion("user_id", ["user", "users"]) == "user"
    assert suggestion("zzz", ["user"]) == ""
    assert suggestion("limit", ["subject", "k"]) == "k"
