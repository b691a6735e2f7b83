"""``AsyncMemvara``: every method of the sync API, as a coroutine on a worker thread.

The parity tests read the sync classes, so a method added to ``Memvara`` without an
async wrapper -- or a wrapper whose parameters drift from it -- fails here. The typed
test is checked by ``mypy --strict``: ``assert_type`` fails it if a derived coroutine's
arguments or result degrade to ``Any``, and so does each ``type: ignore`` on a wrong
call, which would then be unused. Coroutines run under ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

from memvara import (
    AsyncMemvara,
    AsyncScopedMemvara,
    Claim,
    ClosedError,
    Episode,
    InvalidArgumentError,
    Memvara,
    NullLLM,
    PredicateSpec,
    Retrieved,
    ScopedMemvara,
    SQLiteStore,
    WriteReceipt,
)
from memvara._facade.aio import _AsyncAPI
from memvara._facade.memvara import _MemoryAPI
from memvara.store import STATES

from .conftest import Clock

if TYPE_CHECKING:
    from typing_extensions import assert_type
else:
    def assert_type(value: object, _type: object) -> object:
        return value

WAIT = 10.0  # seconds: only ever reached when something hangs

# Members of the sync API that are deliberately not coroutines in the async one. Each
# still exists there, with the same parameters; add one here only with the reason.
NOT_COROUTINES = {
    "scope": "binds four strings and touches no store; returns an AsyncScopedMemvara",
}


def public_methods(cls: type) -> dict[str, inspect.Signature]:
    """The public methods of ``cls`` (inherited ones included), not its properties."""
    return {
        name: inspect.signature(getattr(cls, name))
        for name in dir(cls)
        if not name.startswith("_") and not isinstance(inspect.getattr_static(cls, name), property)
    }


def public_properties(cls: type) -> set[str]:
    return {
        name for name in dir(cls)
        if not name.startswith("_") and isinstance(inspect.getattr_static(cls, name), property)
    }


def shape(signature: inspect.Signature) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()]


@pytest.mark.parametrize(("sync", "wrapper"), [(Memvara, AsyncMemvara),
                                               (ScopedMemvara, AsyncScopedMemvara)])
def test_every_sync_method_has_an_async_counterpart_with_the_same_parameters(
    sync: type, wrapper: type
) -> None:
    methods = public_methods(sync)
    assert {"add", "search", "flush", "close"} & set(methods)  # the introspection works
    for name, signature in methods.items():
        assert hasattr(wrapper, name), f"{wrapper.__name__} has no {name}(): wrap it"
        ours = inspect.signature(getattr(wrapper, name))
        assert shape(ours) == shape(signature), f"{wrapper.__name__}.{name} drifted"
        is_coroutine = inspect.iscoroutinefunction(getattr(wrapper, name))
        assert is_coroutine == (name not in NOT_COROUTINES), name
        assert getattr(wrapper, name).__doc__, f"{wrapper.__name__}.{name} needs a docstring"
    assert public_properties(sync) <= public_properties(wrapper)
    extra = set(public_methods(wrapper)) - set(methods)
    assert extra == set(), f"async-only methods: {extra}"


def test_the_shared_sync_api_is_covered_by_the_shared_async_one() -> None:
    missing = set(public_methods(_MemoryAPI)) - set(public_methods(_AsyncAPI))
    assert missing == set()


@pytest.mark.parametrize(("sync", "wrapper"), [(Memvara, AsyncMemvara),
                                               (ScopedMemvara, AsyncScopedMemvara)])
def test_the_coroutines_are_derived_from_the_sync_methods(sync: type, wrapper: type) -> None:
    """Signature (annotations included) and docstring come from the sync method, not a
    copy; only the hand-written ``scope`` differs (its return annotation, its doc)."""
    for name in public_methods(sync):
        if name in NOT_COROUTINES:
            continue
        ours, theirs = getattr(wrapper, name), getattr(sync, name)
        assert ours.__doc__.startswith("Coroutine: the synchronous"), name
        assert ours.__doc__.endswith(inspect.cleandoc(theirs.__doc__)), name
        assert inspect.signature(ours) == inspect.signature(theirs), name
        assert inspect.unwrap(ours) is inspect.unwrap(theirs), name
        assert ours.__module__ == "memvara._facade.aio", name
        owner = next(c for c in wrapper.__mro__ if name in vars(c))
        assert ours.__qualname__ == f"{owner.__qualname__}.{name}", name
    instance: Any = object.__new__(wrapper)  # bound access, without a store
    assert inspect.ismethod(instance.search) and inspect.iscoroutinefunction(instance.search)


def test_each_wrapper_passes_every_argument_through_on_a_worker_thread(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every parameter gets a distinct marker; the sync method (replaced by a recorder)
    must receive exactly those, bound the same way, off the event loop's thread."""
    mem = Memvara(clock=clock, llm=NullLLM())
    amem = AsyncMemvara(mem)
    calls: dict[str, tuple[inspect.BoundArguments, int]] = {}

    def recorder(name: str) -> object:
        def record(*args: object, **kwargs: object) -> str:
            bound = inspect.signature(getattr(Memvara, name)).bind(mem, *args, **kwargs)
            calls[name] = (bound, threading.get_ident())
            return f"result of {name}"
        return record

    async def call_all() -> None:
        loop_thread = threading.get_ident()
        for name, signature in public_methods(Memvara).items():
            if name in NOT_COROUTINES:
                continue
            monkeypatch.setattr(mem, name, recorder(name))
            args: list[object] = []
            kwargs: dict[str, object] = {}
            for param in list(signature.parameters.values())[1:]:
                marker = f"<{name}.{param.name}>"
                if param.kind is param.POSITIONAL_OR_KEYWORD:
                    args.append(marker)
                elif param.kind is param.KEYWORD_ONLY:
                    kwargs[param.name] = marker
                else:
                    kwargs["extra_meta"] = marker
            result = await getattr(amem, name)(*args, **kwargs)
            assert result == f"result of {name}", name  # passed back as it came
            bound, thread = calls[name]
            expected = signature.bind(mem, *args, **kwargs)
            assert bound.arguments == expected.arguments, name
            assert thread != loop_thread, f"{name} ran on the event loop's thread"

    asyncio.run(call_all())
    assert "add" in calls and "remember" in calls
    monkeypatch.undo()
    mem.close()


def test_entering_a_closed_async_memory_fails(clock: Clock) -> None:
    async def main() -> None:
        mem = AsyncMemvara(Memvara(clock=clock, llm=NullLLM()))
        await mem.close()
        with pytest.raises(ClosedError):
            async with mem:  # it used to enter, and fail only at the first call inside
                pass

    asyncio.run(main())


def test_the_async_api_works_end_to_end(db_path: str, clock: Clock) -> None:
    async def main() -> None:
        async with AsyncMemvara(Memvara(db_path, clock=clock, llm=NullLLM(), user="alice")) as mem:
            receipt = await mem.add("I live in Berlin")
            assert isinstance(receipt, WriteReceipt) and len(receipt.added) == 1
            assert [r.text for r in await mem.search("where do they live?")] == [
                "alice lives in Berlin"
            ]
            assert await mem.count() == 1

            bob = mem.scope(user="bob")
            assert isinstance(bob, AsyncScopedMemvara) and bob.default_scope.user == "bob"
            assert isinstance(bob.sync, ScopedMemvara)
            await bob.add("I live in Oslo")
            assert [c.object for c in await bob.get_all()] == ["Oslo"]
            assert [c.object for c in await mem.get_all()] == ["Berlin"]
            assert repr(bob) == "<AsyncScopedMemvara user=bob>"

            queued = await mem.add("I live in Lisbon", wait=False)
            assert isinstance(queued, asyncio.Future)
            assert [c.object for c in (await queued).added] == ["Lisbon"]
            await mem.flush()
            assert [c.object for c in await mem.history("user", "lives_in")] == [
                "Berlin", "Lisbon"
            ]
            assert await mem.count(states=STATES) == 2
        with pytest.raises(ClosedError):
            await mem.count()

    asyncio.run(main())


def test_the_derived_coroutines_keep_their_types(db_path: str, clock: Clock) -> None:
    """Checked by mypy more than by running: see the module docstring."""
    async def main() -> None:
        amem = AsyncMemvara(Memvara(db_path, clock=clock, llm=NullLLM(), user="alice"))
        receipt = assert_type(await amem.remember("user", "lives_in", "Berlin"), WriteReceipt)
        assert len(receipt.added) == 1
        hits = assert_type(await amem.search("Berlin?", k=3), list[Retrieved])
        assert [h.text for h in hits] == ["user lives in Berlin"]
        claim = assert_type(await amem.get(receipt.added[0].id), "Claim | None")
        assert claim is not None and claim.object == "Berlin"
        assert assert_type(await amem.count(), int) == 1
        assert assert_type(await amem.add("hello there"), WriteReceipt).added == ()
        queued = assert_type(await amem.add("bye", wait=False), "asyncio.Future[WriteReceipt]")
        await queued
        scoped = assert_type(amem.scope(user="bob"), AsyncScopedMemvara)
        assert assert_type(await scoped.search("x"), list[Retrieved]) == []
        assert assert_type(await amem.reembed(), int) >= 1
        with pytest.raises(InvalidArgumentError):
            await amem.search(42)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await amem.count(nope=1)  # type: ignore[call-arg]
        with pytest.raises(TypeError):
            await scoped.why()  # type: ignore[call-arg]
        assert_type(await amem.close(), None)

    asyncio.run(main())


def test_the_wrapper_gives_back_what_it_wraps(db_path: str, clock: Clock) -> None:
    sync = Memvara(db_path, clock=clock, llm=NullLLM(), user="u")
    mem = AsyncMemvara(sync)
    assert mem.sync is sync
    assert mem.store is sync.store and mem.registry is sync.registry
    assert mem.embedder is sync.embedder and mem.default_scope == sync.default_scope
    assert repr(mem) == f"<AsyncMemvara wrapping {sync!r}>"
    asyncio.run(mem.close())
    store = sync.store
    assert isinstance(store, SQLiteStore) and store.closed


def test_it_wraps_only_what_it_should() -> None:
    with pytest.raises(InvalidArgumentError, match="AsyncMemvara\\(Memvara"):
        AsyncMemvara("memory.db")  # type: ignore[arg-type]
    with Memvara(llm=NullLLM()) as mem:
        with pytest.raises(InvalidArgumentError, match="ScopedMemvara"):
            AsyncScopedMemvara(mem)  # type: ignore[arg-type]


class GatedLLM:
    """A model whose ``extract`` waits until ``gate`` is set, announcing it on ``entered``."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.gate = threading.Event()

    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        self.entered.set()
        assert self.gate.wait(WAIT)
        return []

    def classify_predicate(self, name: str) -> PredicateSpec | None:
        return None


def test_the_event_loop_keeps_running_while_a_call_waits_on_the_model(
    db_path: str, clock: Clock
) -> None:
    model = GatedLLM()

    async def main() -> None:
        async with AsyncMemvara(Memvara(db_path, clock=clock, llm=model)) as mem:
            adding = asyncio.create_task(mem.add("Prose for the model"))
            assert await asyncio.to_thread(model.entered.wait, WAIT)
            assert await mem.count() == 0  # the loop and the store both still answer
            assert not adding.done()
            model.gate.set()
            receipt = await asyncio.wait_for(adding, WAIT)
            assert receipt.unextracted == 0 and receipt.llm_calls == 1

    try:
        asyncio.run(main())
    finally:
        model.gate.set()
