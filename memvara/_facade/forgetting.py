"""``forget_subject()``: erase everything a memory holds about one subject, outside
stores included, and leave a tombstone; ``tombstones()`` reads them back."""

from __future__ import annotations

import weakref

from .._domain import args as _args
from .._domain.args import UNSET, ScopeArg
from .._domain.erasure import ErasureManifest, ErasureRequest, ErasureTarget
from .._domain.model import Scope
from .._errors import ClaimNotFoundError, InvalidArgumentError, StoreError
from .._write.aliases import USER
from ..store.base import ForgetStore, Store, Tombstone, WriteLogStore
from .core import Core, Handle
from .governance import check_actor, logged

__all__ = ["ForgetAPI"]

_TARGETS: weakref.WeakKeyDictionary[Core, list[ErasureTarget]] = weakref.WeakKeyDictionary()
"""The outside stores registered on each open memory (every handle on it shares them)."""


class _Forgetful(ForgetStore, WriteLogStore):
    """A store that can erase a subject and key its digest."""


def _forget_of(store: Store) -> _Forgetful:
    if not isinstance(store, ForgetStore) or not isinstance(store, WriteLogStore):
        raise StoreError(f"{type(store).__name__} cannot erase a subject (it is no ForgetStore"
                         " with a write log)")
    return store  # type: ignore[return-value]  # both protocols, checked above


class ForgetAPI(Handle):
    """Erasure of a subject across its lineage."""

    def add_erasure_target(self, target: ErasureTarget) -> None:
        """Have every later ``forget_subject()`` on this memory ask ``target`` (a vector
        database, a cache) to erase the subject too.

        Raises:
            InvalidArgumentError: not an ``ErasureTarget`` (a ``name`` and ``erase()``),
                or a name another registered target has.
        """
        self._core.check_open()
        if not isinstance(target, ErasureTarget) or not isinstance(target.name, str) \
                or not target.name.strip():
            raise InvalidArgumentError("target", "expected an object with a non-blank .name"
                                       " and .erase(request) -> bool")
        held = _TARGETS.setdefault(self._core, [])
        if any(t.name == target.name for t in held):
            raise InvalidArgumentError("target", f"a target named {target.name!r:.40} is registered")
        held.append(target)

    def forget_subject(
        self,
        subject: str,
        *,
        reason: str,
        requested_by: str,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
        actor: str | None = None,
    ) -> ErasureManifest:
        """ERASE (not retire: despite the name, nothing is kept to read) everything this
        scope and the scopes beneath it hold about ``subject``, under any of its names.

        Erased, in one transaction: every claim about the subject or naming it as the
        object, in any state, archived ones too; every claim citing one of those as its
        source, and so on; the turns only those claims cited; the aliases of the subject
        learned here; the reviews and evidence ``observe()`` filed about it or for it as
        a value. Every other turn of those scopes that names the subject keeps its
        text with each name (an alias too) replaced by ``[erased]`` (and loses its vector), and
        so does every other claim of those scopes, archived ones too, in its text (then
        indexed again, its vector dropped), its metadata's strings and its sources: an
        adapter's transcript message, a note, a URL. Then each registered
        ``ErasureTarget`` is asked to erase it too. Calls ``add(wait=False)`` queued
        before it are applied first, so their turns are erased too.

        Promises: once it returns, no file of the store (the database, its write-ahead
        log, the vector files) holds the erased text; the write log and the tombstone
        hold only ids, counts and the subject's digest keyed by the store's secret (a
        plain hash of a name can be confirmed by guessing it). Does not promise: text
        naming the subject inside another value (``"maya's cafe"`` as an object or a
        subject), ``actor=`` strings in the write log, copies outside the store that no
        target covers, or backups.

        Args:
            reason, requested_by: kept in the tombstone (any name of the subject in them
                is replaced too).

        Returns:
            An ``ErasureManifest``: the counts, the tombstone's id, and each target's
            confirmation; ``complete`` only when every target confirmed. Called again
            for a subject already erased, it asks the targets again (to finish an
            incomplete erasure) and erases whatever was written about it since.

        Raises:
            ClaimNotFoundError: nothing in these scopes names ``subject`` (no claim,
                alias, review or turn) and no tombstone does (nothing is written).
            InvalidArgumentError: a blank subject, reason or requested_by.
            StoreError: the store cannot erase a subject.
        """
        scope = self._at(tenant, user, agent, session)
        subject = _args.check_text(subject, "subject")
        reason = _args.check_text(reason, "reason")
        requested_by = _args.check_text(requested_by, "requested_by")
        check_actor(actor, scope)
        store = _forget_of(self._core.store)
        self._core.background.settle()  # an add(wait=False) queued before: erased too
        keys = self._core.aliases.keys_of(scope, subject)
        entity = keys[1] if len(keys) > 1 and keys[0] != keys[1] else keys[0]
        aliases = [k for k in keys[1:] if k not in (keys[0], USER)]  # names with no claim of their own
        digest = store.log_digest(entity)
        earlier = store.tombstones(digest)
        at = self._core.writer.now()
        tombstone = Tombstone(_fresh_id(f"t{at}-{digest[:8]}", earlier), at, reason, requested_by,
                              digest)
        with logged(self._core, "forget_subject", scope, actor):
            erased = store.erase_subject(scope, keys, (subject, *aliases), tombstone)
        if erased is None and not earlier:
            raise ClaimNotFoundError(
                subject, f"nothing in this scope names {subject!r:.60}", argument="subject")
        self._core.aliases.reload()
        self._core.forget_erased()
        request = ErasureRequest(subject, erased.names if erased else (subject,),
                                 erased.claim_ids if erased else (),
                                 erased.episode_ids if erased else (),
                                 tombstone.id if erased else str(earlier[-1]["id"]))
        targets = {t.name: _ask(t, request) for t in _TARGETS.get(self._core, [])}
        if targets:
            store.confirm_targets(request.tombstone, targets)
        counts = erased.counts if erased else dict.fromkeys(
            ("claims", "archived", "episodes_erased", "episodes_scrubbed", "claims_scrubbed",
             "aliases"), 0)
        return ErasureManifest(request.tombstone, digest, targets=targets, **counts)

    def tombstones(
        self,
        *,
        tenant: ScopeArg = UNSET,
        user: ScopeArg = UNSET,
        agent: ScopeArg = UNSET,
        session: ScopeArg = UNSET,
    ) -> list[dict[str, object]]:
        """The tombstones of the erasures asked for in this scope and every scope beneath
        it (at the root: every one), oldest first, as ``reviews()`` lists reviews: each
        one's ``id``, ``at`` (microseconds), ``reason``, ``requested_by``, the
        ``subject_digest``, the ``scope`` it was asked in, the counts ``erased`` and the
        ``targets`` that confirmed. No name of the subject. A user's handle does not see
        another user's erasures, nor the root's."""
        scope = self._at(tenant, user, agent, session)
        self._core.check_open()
        return [t for t in _forget_of(self._core.store).tombstones()
                if scope.holds(Scope.from_dict(t["scope"]))]


def _fresh_id(wanted: str, earlier: list[dict[str, object]]) -> str:
    """``wanted``, or ``wanted-2``, ``-3``... where one of the subject's earlier tombstones
    has it: an injected clock may give two erasures of one subject the same instant."""
    taken = {t["id"] for t in earlier}
    n = 1
    tombstone_id = wanted
    while tombstone_id in taken:
        n += 1
        tombstone_id = f"{wanted}-{n}"
    return tombstone_id


def _ask(target: ErasureTarget, request: ErasureRequest) -> bool:
    """One target's answer: ``True`` only if it said so (an exception is a no)."""
    try:
        return target.erase(request) is True
    except Exception:  # its own failure: recorded as unconfirmed, the erasure stands
        return False
