"""Learned entity aliases, resolved in one place.

An owner (a tenant and user) may learn that two names are one entity (``"Big Blue"`` is
``"IBM"``). Writes file a subject under its entity's key (``key_of``, cached per owner);
reads reach every key an entity has been filed under (``keys_of``, read fresh, so a
reader sees aliases another process learned); ``backfill`` re-files old claims.

One alias is never learned, because it always holds: in a scope with a user, ``user``
names that user (``fold``). The cheap tier writes what a user says of themselves about
them by id, and ``remember("user", ...)`` there files under the same key, so the two
never hold two values of one slot.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .._domain import args as _args
from .._domain.entities import entity_key
from .._domain.model import Claim, Scope
from .._errors import InvalidArgumentError
from ..store.base import Store

__all__ = ["ALIAS_OWNERS_CACHED", "USER", "Aliases"]

ALIAS_OWNERS_CACHED = 4096
"""Owners whose learned aliases are kept in memory at once."""

_NO_ALIASES: Mapping[str, str] = MappingProxyType({})

USER = "user"
"""The subject that stands for whoever speaks when no name is known."""

class Aliases:
    """The aliases of every owner in one store: cached for writes, fresh for reads."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._cache: dict[tuple[str | None, str | None], Mapping[str, str]] = {}
        self._owners: set[tuple[str | None, str | None]] | None = None
        """Who has learned aliases, read once: with thousands of users and none of them
        aliased, a write asks the store nothing (a per-owner cache missed on every write
        once the users outnumbered it)."""

    def of(self, scope: Scope) -> Mapping[str, str]:
        """The aliases learned for ``scope``'s owner (its tenant and user), cached.

        A process sees aliases learned by another process after it reopens the store.
        """
        owner = (scope.tenant, scope.user)
        found = self._cache.get(owner)
        if found is None:
            if self._owners is None:
                self._owners = self._store.alias_owners()
            if owner not in self._owners:
                return _NO_ALIASES
            if len(self._cache) >= ALIAS_OWNERS_CACHED:
                self._cache.clear()
            found = self._cache[owner] = self._store.aliases(Scope(*owner))
        return found

    def reload(self) -> None:
        """Read every owner's aliases afresh at their next use (after an import wrote
        some behind this cache)."""
        self._cache.clear()
        self._owners = None

    @staticmethod
    def fold(scope: Scope, surface: str) -> str:
        """``surface``'s folded key, where ``user`` in a scope with a user is that user."""
        key = entity_key(surface)
        if key == USER and scope.user is not None:
            return entity_key(scope.user)
        return key

    def key_of(self, scope: Scope, surface: str) -> str:
        """``surface``'s entity key for ``scope``'s owner: its fold, through any alias."""
        key = self.fold(scope, surface)
        aliases = self.of(scope)
        return aliases.get(key, key) if aliases else key

    def learn(self, scope: Scope, surface: str, entity: str, at: int, via: str) -> tuple[str, str]:
        """Make ``surface`` a name of ``entity`` for ``scope``'s owner; the two keys."""
        owner = Scope(scope.tenant, scope.user)
        aliases = self.of(owner)
        alias_key = entity_key(_args.check_text(surface, "surface"))
        target = entity_key(_args.check_text(entity, "entity"))
        target = aliases.get(target, target)  # an alias of an alias names the same entity
        if alias_key == target:
            raise InvalidArgumentError("surface", f"{surface!r} already names {entity!r}")
        self._store.learn_alias(owner, alias_key, target, at, via)
        for old, new in list(aliases.items()):  # whatever pointed at the alias follows it
            if new == alias_key:
                self._store.learn_alias(owner, old, target, at, via)
        self._cache.pop((owner.tenant, owner.user), None)
        owners = self._owners
        assert owners is not None  # noqa: S101 - ``self.of(owner)`` above read them
        owners.add((owner.tenant, owner.user))
        return alias_key, target

    def keys_of(self, scope: Scope, probe: str) -> list[str]:
        """Every key ``probe`` names for ``scope``'s owner: its fold, the entity a learned
        alias maps it to, and every other alias of that entity. The owner's aliases only:
        a broader owner's never apply. Read fresh from the store."""
        key = self.fold(scope, probe)
        aliases = self.fresh(scope)
        entity = aliases.get(key, key)
        return list(dict.fromkeys([key, entity, *(a for a, e in aliases.items() if e == entity)]))

    def fresh(self, scope: Scope) -> Mapping[str, str]:
        """The aliases of ``scope``'s owner read from the store now, with ``user`` an
        alias of the scope's user: a reader's view, where the rows of a broader scope
        filed under ``user`` belong to that entity too."""
        aliases = self._store.aliases(Scope(scope.tenant, scope.user))
        if scope.user is not None and (me := entity_key(scope.user)) != USER:
            return {**aliases, USER: aliases.get(me, me)}
        return aliases

    def backfill(self, scope: Scope, at: int, *, dry_run: bool) -> list[Claim]:
        """Re-file ``scope``'s owner's claims written under an alias under its entity
        (with ``dry_run``, only say which)."""
        owner = Scope(scope.tenant, scope.user)
        return self._store.rekey_subjects(owner, self._store.aliases(owner), at, dry_run=dry_run)
