"""memvara.compat.Memory: mem0's method surface on memvara, and what it refuses.

The tests that compare shapes with mem0, or run mem0's own README quick start, need the
real ``mem0ai`` package (the ``bench`` extra) and skip without it; the rest need only
memvara. The chat model of the quick start is a stand-in (it is not what is tested).
"""

from __future__ import annotations

import asyncio
import importlib.metadata as md
import re
import sys
import types
import warnings
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from memvara import ClaimNotFoundError, InvalidArgumentError, Memvara, NullLLM, Scope
from memvara.compat import AsyncMemory, Memory, MemoryNotFoundError, NoTranslationError

from .conftest import Clock

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def m(clock: Clock) -> Iterator[Memory]:
    shim = Memory(memory=Memvara(clock=clock, llm=NullLLM()))
    yield shim
    shim.memvara.close()


def iso_with_offset(text: object) -> datetime:
    assert isinstance(text, str)
    parsed = datetime.fromisoformat(text)
    assert parsed.utcoffset() is not None, text
    return parsed


# -- mem0's README quick start, with only the import changed -----------------------------


class _StandInChat:
    """The quick start's OpenAI client: records each system prompt, answers "Noted"."""

    prompts: list[str] = []

    def __init__(self) -> None:
        self.chat = types.SimpleNamespace(completions=self)

    def create(self, *, model: str, messages: list[dict[str, str]]) -> Any:
        _StandInChat.prompts.append(messages[0]["content"])
        message = types.SimpleNamespace(content="Noted.")
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])


def offline_mem0() -> types.ModuleType:
    """bench/_mem0_offline.py, which turns mem0's telemetry off before mem0 is imported
    (mem0 reads the switch once, at import); skips where mem0ai is not installed."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import _mem0_offline
    finally:
        sys.path.remove(str(ROOT / "bench"))
    pytest.importorskip("mem0", reason="mem0ai (the bench extra) is not installed")
    return _mem0_offline


def quick_start() -> str:
    """The first Python block under "Basic Usage" of the installed mem0ai's README."""
    offline_mem0()
    readme = md.distribution("mem0ai").read_text("METADATA") or ""
    section = readme[readme.index("### Basic Usage"):]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None
    return found.group(1)


def test_mem0s_readme_quick_start_runs_with_only_the_import_changed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    code = quick_start()
    assert code.count("from mem0 import Memory") == 1
    code = code.replace("from mem0 import Memory", "from memvara.compat import Memory")
    monkeypatch.setitem(sys.modules, "openai", types.SimpleNamespace(OpenAI=_StandInChat))
    said = iter(["I live in Berlin", "Where do I live?", "exit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(said))
    _StandInChat.prompts = []
    namespace: dict[str, Any] = {"__name__": "mem0_quick_start"}
    exec(compile(code, "mem0-readme-quick-start", "exec"), namespace)
    namespace["main"]()
    memory = namespace["memory"]
    assert isinstance(memory, Memory)
    # the second question's prompt carried the memory the first turn stored
    assert "- default_user lives in Berlin" in _StandInChat.prompts[1]
    found = memory.search("where does default_user live?", filters={"user_id": "default_user"})
    assert [r["memory"] for r in found["results"]][:1] == ["default_user lives in Berlin"]
    memory.close()


# -- shapes, measured against the real package ---------------------------------------------


@pytest.fixture
def real_mem0(tmp_path: Path) -> Iterator[Any]:
    offline = offline_mem0()
    oracle = offline.NewMessagesOracle({"I live in Berlin": ["Lives in Berlin"],
                                "I like tea": ["Likes tea"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Qdrant's local-mode notice
        memory = offline.open_mem0(str(tmp_path / "history.db"), oracle)
        yield memory
        memory.close()


def test_every_result_has_mem0s_shape(real_mem0: Any, m: Memory) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = real_mem0.add("I live in Berlin", user_id="alice", metadata={"src": "chat"})
        their_id = theirs["results"][0]["id"]
        their: dict[str, Any] = {
            "add": theirs, "get": real_mem0.get(their_id),
            "get_all": real_mem0.get_all(filters={"user_id": "alice"}),
            "search": real_mem0.search("Berlin", filters={"user_id": "alice"}),
            "history": real_mem0.history(their_id),
            "delete": real_mem0.delete(their_id),
            "delete_all": real_mem0.delete_all(user_id="alice"),
            "reset": real_mem0.reset(),
        }
    ours_add = m.add("I live in Berlin", user_id="alice", metadata={"src": "chat"})
    our_id = ours_add["results"][0]["id"]
    ours: dict[str, Any] = {
        "add": ours_add, "get": m.get(our_id, user_id="alice"),
        "get_all": m.get_all(filters={"user_id": "alice"}),
        "search": m.search("Berlin", filters={"user_id": "alice"}),
        "history": m.history(our_id, user_id="alice"),
        "delete": m.delete(our_id, user_id="alice"),
        "delete_all": m.delete_all(user_id="alice"),
    }
    m.reset()
    for call in ("add", "get_all", "search"):
        assert set(ours[call]) == set(their[call]) == {"results"}, call
        assert set(ours[call]["results"][0]) == set(their[call]["results"][0]), call
    assert set(ours["get"]) == set(their["get"])
    assert set(ours["history"][0]) == set(their["history"][0])
    assert ours["history"][0]["event"] == their["history"][0]["event"] == "ADD"
    assert ours["delete"] == their["delete"] and ours["delete_all"] == their["delete_all"]
    assert their["reset"] is None and m.memvara.stats()["claims"] == 0
    for got in (ours["get"], their["get"], ours["search"]["results"][0]):
        assert got is not None
        iso_with_offset(got["created_at"]) and iso_with_offset(got["updated_at"])
        assert got["metadata"] == {"src": "chat"} and got["user_id"] == "alice"
    assert isinstance(ours["search"]["results"][0]["score"], float)
    assert ours["get"]["score"] is None  # as mem0's get() has it


# -- scopes ---------------------------------------------------------------------------------


def test_the_ids_map_onto_memvaras_scope_levels(m: Memory) -> None:
    m.add("I live in Oslo", user_id="bob", agent_id="helper", run_id="r1")
    claim = m.memvara.get_all(user="bob", agent="helper", session="r1")[0]
    assert claim.scope == Scope(None, "bob", "helper", "r1")
    assert m.get_all(user_id=" bob ", agent_id="helper", run_id="r1")["results"][0]["run_id"] == "r1"
    m.add("I live in Rome", user_id=42)  # type: ignore[arg-type]  # an int id is written as a string, as mem0 does
    assert m.get_all(filters={"user_id": "42"})["results"][0]["memory"] == "42 lives in Rome"


def test_a_default_scope_serves_calls_that_name_none(clock: Clock) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the extension is not deprecated: no warning
        shim = Memory(user_id="alice", llm=NullLLM())
    assert shim.default_scope == Scope(user="alice") and "alice" in repr(shim)
    shim.add("I live in Berlin")
    assert shim.get_all()["results"][0]["user_id"] == "alice"
    assert shim.get_all(user_id="carol")["results"] == []  # a call's id replaces it
    shim.close()


def test_memvaras_scope_rule_is_not_mem0s_filter(m: Memory) -> None:
    """mem0's filters={"user_id": "alice"} also matches alice's agent- and run-scoped
    rows; memvara's user-level read sees only the user level and broader (the guide)."""
    m.add("I live in Berlin", user_id="alice", run_id="r1")
    assert m.get_all(filters={"user_id": "alice"})["results"] == []
    assert len(m.get_all(filters={"user_id": "alice", "run_id": "r1"})["results"]) == 1


def test_a_call_with_no_scope_is_refused(m: Memory) -> None:
    for call in (lambda: m.add("I live in Oslo"), lambda: m.search("Oslo"),
                 lambda: m.get_all(), lambda: m.delete_all(), lambda: m.get("c1")):
        with pytest.raises(InvalidArgumentError, match="user_id, agent_id or run_id"):
            call()


@pytest.mark.parametrize("ids, message", [
    ({"user_id": "a b"}, "without whitespace"), ({"user_id": "  "}, "without whitespace"),
    ({"agent_id": True}, "expected a string id"), ({"run_id": 1.5}, "expected a string id"),
])
def test_a_bad_id_is_refused(m: Memory, ids: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        m.add("I live in Oslo", **ids)
    with pytest.raises(InvalidArgumentError, match=message):
        Memory(**ids)


def test_filters_must_agree_with_the_keywords(m: Memory) -> None:
    with pytest.raises(InvalidArgumentError, match="disagrees with filters"):
        m.search("x", user_id="a", filters={"user_id": "b"})
    assert m.search("x", user_id="a", filters={"user_id": "a"}) == {"results": []}
    with pytest.raises(InvalidArgumentError, match="filters: expected a dict"):
        m.get_all(filters=[("user_id", "a")])  # type: ignore[arg-type]


# -- stores -------------------------------------------------------------------------------


def test_two_memories_never_share_unless_a_file_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMVARA_DB", raising=False)
    one, two = Memory(llm=NullLLM()), Memory(llm=NullLLM())
    one.add("I live in Oslo", user_id="u")
    assert two.get_all(user_id="u")["results"] == []
    one.close()
    two.close()
    monkeypatch.setenv("MEMVARA_DB", str(tmp_path / "env.db"))
    with Memory(llm=NullLLM()) as first:
        first.add("I live in Oslo", user_id="u")
    with Memory(llm=NullLLM()) as again:
        assert len(again.get_all(user_id="u")["results"]) == 1
    with Memory(tmp_path / "own.db", llm=NullLLM()) as own:  # a path wins over the variable
        assert own.get_all(user_id="u")["results"] == []
    assert (tmp_path / "own.db").exists()


def test_a_wrapped_memvara_stays_open_and_is_used_as_opened(clock: Clock) -> None:
    inner = Memvara(clock=clock, llm=NullLLM(), tenant="acme")
    with Memory(memory=inner, user_id="u") as shim:
        shim.add("I live in Oslo")
        assert shim.memvara is inner and shim.default_scope == Scope("acme", "u")
    assert inner.get_all(tenant="acme", user="u")[0].object == "Oslo"  # still open
    with pytest.raises(InvalidArgumentError, match="memory: a Memvara passed in"):
        Memory("x.db", memory=inner)
    with pytest.raises(InvalidArgumentError, match="memory: expected a Memvara"):
        Memory(memory="x.db")  # type: ignore[arg-type]
    inner.close()


# -- the calls ----------------------------------------------------------------------------


def test_add_reports_what_it_wrote_and_what_it_closed(m: Memory, clock: Clock) -> None:
    first = m.add({"role": "user", "content": "I live in Berlin"}, user_id="alice")
    assert [r["event"] for r in first["results"]] == ["ADD"]
    clock.advance(days=1)
    second = m.add([{"role": "user", "content": "I live in Lisbon"}], user_id="alice")
    assert [(r["event"], r["memory"]) for r in second["results"]] == [
        ("ADD", "alice lives in Lisbon"), ("DELETE", "alice lives in Berlin")]
    assert m.add("hello there", user_id="alice") == {"results": []}


def test_timestamp_is_when_the_messages_were_said(m: Memory) -> None:
    said = datetime(2025, 5, 1, tzinfo=timezone.utc)
    m.add("I live in Berlin", user_id="a", timestamp=said)
    assert m.memvara.get_all(user="a")[0].valid_from == said
    m.add("I work at Kovac Labs", user_id="a", timestamp=said.timestamp() + 60)
    assert m.memvara.get_all(user="a", predicate="works_at")[0].valid_from == said.replace(minute=1)
    with pytest.raises(InvalidArgumentError, match="timestamp: expected a datetime"):
        m.add("I live in Oslo", user_id="a", timestamp="yesterday")  # type: ignore[arg-type]


def test_search_and_get_all_count_like_mem0(m: Memory, clock: Clock) -> None:
    for liking in ("tea", "chess", "jazz"):
        m.add(f"I like {liking}", user_id="fan")
        clock.advance(hours=1)
    assert len(m.get_all(user_id="fan")["results"]) == 3
    assert len(m.get_all(user_id="fan", top_k=2)["results"]) == 2
    assert len(m.get_all(user_id="fan", limit=1)["results"]) == 1
    assert len(m.search("what does fan like", user_id="fan", limit=2)["results"]) == 2
    assert m.search("likes", user_id="fan", top_k=0) == {"results": []}
    newest = m.get_all(user_id="fan")["results"][0]
    assert newest["memory"] == "fan likes jazz" and "score" not in newest
    with pytest.raises(InvalidArgumentError, match="limit: pass top_k or limit"):
        m.search("likes", user_id="fan", top_k=1, limit=1)
    for bad in (-1, True, "3"):
        with pytest.raises(InvalidArgumentError, match="top_k: expected an int"):
            m.get_all(user_id="fan", top_k=bad)  # type: ignore[arg-type]


def test_search_scores_explain_and_threshold(m: Memory) -> None:
    m.add("I live in Berlin", user_id="a")
    best = m.search("Berlin", user_id="a", explain=True)["results"][0]
    assert 0 < best["score"] <= 2 and best["score_details"]["summary"]
    assert m.search("Berlin", user_id="a", threshold=2.0)["results"] == []
    assert "score_details" not in m.search("Berlin", user_id="a")["results"][0]
    assert m.search("Berlin", user_id="a", threshold=0)["results"][0]["id"] == best["id"]


@pytest.mark.parametrize("bad", [-1, 2.5, float("nan"), "high", True])
def test_a_bad_threshold_is_named_threshold(m: Memory, bad: object) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        m.search("Berlin", user_id="a", threshold=bad)  # type: ignore[arg-type]
    assert str(caught.value) == (f"threshold: expected a number from 0 to 2 (memvara's scores),"
                                 f" got {bad!r}")


def test_metadata_is_kept_and_filtered_by_equality(m: Memory) -> None:
    m.add("I like tea", user_id="a", metadata={"topic": "drink"})
    m.add("I like chess", user_id="a", metadata={"topic": "game"})
    assert [r["memory"] for r in m.get_all(filters={"user_id": "a", "topic": "game"})["results"]] \
        == ["a likes chess"]
    found = m.search("I like", filters={"user_id": "a", "topic": "drink"}, top_k=5)["results"]
    assert [r["metadata"] for r in found] == [{"topic": "drink"}]


@pytest.mark.parametrize("filters, error, named", [
    ({"topic": {"ne": "x"}}, NoTranslationError, "'ne'"),
    ({"topic": {"regex": "x"}}, InvalidArgumentError, "unknown filter operator"),
    ({"AND": [{"topic": "x"}]}, NoTranslationError, "logical filter operators"),
    ({"topic": "*"}, NoTranslationError, "wildcard"),
    ({"actor_id": "bob"}, NoTranslationError, "actor"),
])
def test_filter_operators_are_refused_by_name(
        m: Memory, filters: dict[str, Any], error: type[Exception], named: str) -> None:
    for call in (m.search, m.get_all):
        with pytest.raises(error, match=named):
            if call is m.search:
                m.search("tea", filters={"user_id": "a", **filters})
            else:
                m.get_all(filters={"user_id": "a", **filters})


def test_a_wildcard_id_is_refused_not_read_as_a_user_named_star(m: Memory) -> None:
    m.add("I like tea", user_id="a")
    for key in ("user_id", "agent_id", "run_id"):
        with pytest.raises(NoTranslationError) as caught:
            m.get_all(filters={key: "*"})  # mem0: every id; it used to read an empty scope "*"
        assert str(caught.value) == (f"filters[{key!r}]: the '*' wildcard would read every scope"
                                     " at once; memvara reads one scope and those above it: name"
                                     " the id")


def test_ids_inside_a_logical_filter_name_the_operator(m: Memory) -> None:
    with pytest.raises(NoTranslationError, match=r"^filters\['OR'\]: logical filter operators"):
        m.search("tea", filters={"OR": [{"user_id": "a"}, {"user_id": "b"}]})  # was "no user_id"
    with pytest.raises(InvalidArgumentError, match="needs at least one of user_id"):
        m.search("tea", filters={"topic": "x"})  # no ids at all: still the scope's error


def test_bad_metadata_on_add_is_named_metadata(m: Memory) -> None:
    for bad, problem in (("x", "expected a mapping, got str"),
                         ({"when": object()}, "must be JSON-serializable")):
        with pytest.raises(InvalidArgumentError, match=f"^metadata: {problem}"):
            m.add("I like tea", user_id="a", metadata=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="^messages: "):
        m.add(None, user_id="a", metadata={"topic": "x"})  # type: ignore[arg-type]
    assert m.memvara.stats(user="a")["episodes"] == 0


def test_calls_with_no_honest_translation_say_why(m: Memory) -> None:
    cases: list[tuple[Any, str]] = [
        (lambda: m.update("c1", text="x"), "never rewrites a memory in place"),
        (lambda: Memory.from_config({"llm": {}}), "configuration"),
        (lambda: AsyncMemory.from_config({"llm": {}}), "configuration"),
        (lambda: Memory({"llm": {}}), "configuration"),  # type: ignore[arg-type]
        (lambda: m.add("x", user_id="a", infer=False), "always reads the facts"),
        (lambda: m.add("x", user_id="a", memory_type="procedural_memory"), "procedural"),
        (lambda: m.add("x", user_id="a", prompt="Extract"), "prompt"),
        (lambda: m.add("x", user_id="a", expiration_date="2027-01-01"), "on a date"),
        (lambda: m.search("x", user_id="a", rerank=True), "read_reranker"),
        (lambda: m.search("x", user_id="a", reference_date="2026-01-01"), "as_of"),
    ]
    for call, why in cases:
        with pytest.raises(NoTranslationError, match=why) as caught:
            call()
        assert isinstance(caught.value, NotImplementedError) and caught.value.code == "no_translation"
    assert m.memvara.stats()["episodes"] == 0  # nothing was written


def test_switches_must_be_booleans(m: Memory) -> None:
    for kwargs in ({"explain": 1}, {"show_expired": "no"}, {"rerank": None}):
        with pytest.raises(InvalidArgumentError, match="expected True or False"):
            m.search("x", user_id="a", **kwargs)
    with pytest.raises(InvalidArgumentError, match="infer: expected True or False"):
        m.add("x", user_id="a", infer="yes")  # type: ignore[arg-type]
    assert m.get_all(user_id="a", show_expired=True) == {"results": []}


def test_an_unknown_keyword_is_named(m: Memory) -> None:
    with pytest.raises(TypeError, match="'categories'"):
        m.add("x", user_id="a", categories=["x"])  # type: ignore[call-arg]


def test_a_missing_memory_is_a_memvara_not_found_and_a_value_error(m: Memory) -> None:
    added = m.add("I live in Berlin", user_id="a")["results"][0]["id"]
    assert m.get("c-none", user_id="a") is None and m.history("c-none", user_id="a") == []
    assert m.get(added, user_id="b") is None  # ids are read inside a scope
    with pytest.raises(MemoryNotFoundError) as caught:
        m.delete("c-none", user_id="a")
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ClaimNotFoundError)
    assert "memory_id" in str(caught.value) and caught.value.memory_id == "c-none"
    assert caught.value.argument == "memory_id"
    assert m.delete(added, user_id="a") == {"message": "Memory deleted successfully!"}
    assert m.get(added, user_id="a") is None
    with pytest.raises(ValueError, match="no memory"):
        m.delete(added, user_id="a")  # already retired
    for bad in ("", None, 7):
        with pytest.raises(InvalidArgumentError, match="memory_id"):
            m.get(bad, user_id="a")  # type: ignore[arg-type]


def test_history_is_the_slots_timeline(m: Memory, clock: Clock) -> None:
    first = m.add("I live in Berlin", user_id="a")["results"][0]["id"]
    clock.advance(days=1)
    second = m.add("I live in Lisbon", user_id="a")["results"][0]["id"]
    clock.advance(days=1)
    m.delete(second, user_id="a")
    rows = m.history(first, user_id="a")
    assert rows == m.history(second, user_id="a")  # either id names the slot
    assert [(r["event"], r["memory_id"], r["old_memory"], r["new_memory"]) for r in rows] == [
        ("ADD", first, None, "a lives in Berlin"),
        ("UPDATE", second, "a lives in Berlin", "a lives in Lisbon"),
        ("DELETE", second, "a lives in Lisbon", None)]
    assert [r["is_deleted"] for r in rows] == [False, False, True]
    assert iso_with_offset(rows[2]["updated_at"]) == clock.now


def test_delete_all_retires_exactly_the_scope(m: Memory) -> None:
    m.add("I live in Berlin", user_id="a")
    m.add("I like tea", user_id="a", run_id="r1")
    assert m.delete_all(user_id="a") == {"message": "Memories deleted successfully!"}
    assert m.get_all(user_id="a")["results"] == []
    assert len(m.get_all(user_id="a", run_id="r1")["results"]) == 1  # narrower: kept
    assert m.memvara.count(user="a", states=["retired"]) == 1  # retired, not erased
    m.add("I speak Polish", user_id="a")
    m.delete_all(user_id="a", run_id="r1")  # sees the user level, retires only its own
    assert [r["memory"] for r in m.get_all(user_id="a")["results"]] == ["a speaks Polish"]
    assert m.get_all(user_id="a", run_id="r1")["results"][0]["memory"] == "a speaks Polish"


def test_reset_erases_everything(m: Memory) -> None:
    m.add("I live in Berlin", user_id="a")
    m.reset()
    assert m.memvara.stats()["claims"] == 0


def test_async_memory_mirrors_memory(clock: Clock) -> None:
    async def scenario() -> None:
        async with AsyncMemory(memory=Memvara(clock=clock, llm=NullLLM()), user_id="a") as am:
            assert am.default_scope == Scope(user="a") and "AsyncMemory" in repr(am)
            added = (await am.add("I live in Berlin"))["results"][0]["id"]
            assert (await am.search("Berlin"))["results"][0]["id"] == added
            assert (await am.get(added))["memory"] == "a lives in Berlin"  # type: ignore[index]
            assert len((await am.get_all())["results"]) == 1
            assert (await am.history(added))[0]["event"] == "ADD"
            with pytest.raises(NoTranslationError):
                await am.update(added, text="x")
            await am.delete(added)
            await am.delete_all()
            await am.reset()
            assert am.memvara.stats()["claims"] == 0
            am.memvara.close()
        assert AsyncMemory.add.__doc__ and "worker thread" in AsyncMemory.add.__doc__

    asyncio.run(scenario())


def test_async_memory_wraps_every_method_of_memory() -> None:
    def methods(cls: type) -> set[str]:
        return {name for name in vars(cls)
                if not name.startswith("_") and callable(getattr(cls, name))}

    assert methods(Memory) - {"from_config"} == methods(AsyncMemory) - {"from_config"}
    for name in methods(AsyncMemory) - {"from_config"}:
        assert asyncio.iscoroutinefunction(getattr(AsyncMemory, name)), name


def test_the_shim_is_memvaras_own_code_and_imports_no_mem0() -> None:
    import subprocess

    import memvara.compat

    assert memvara.compat.__all__ == sorted(memvara.compat.__all__)
    probe = ("import sys, memvara, memvara.compat;"
             " print(sorted(m for m in sys.modules if m.split('.')[0] in ('mem0', 'qdrant_client')))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True, timeout=120)
    assert result.stdout.strip() == "[]"
