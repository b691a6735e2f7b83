"""The predicate registry: how many values a predicate takes, and how fast it goes stale.

Contradiction is mostly a property of the schema. ``lives_in`` holds one value at a time,
so a new city closes the old one on a keyed ``(subject, predicate)`` lookup; ``likes``
holds many, so values accumulate. An unknown predicate is ``MANY``: keeping two facts
costs ranking, dropping a true one costs information, and the first is recoverable.

Aliases are one slot: ``lives_in``, ``resides_in``, ``based_in`` and ``moved_to`` all key
as ``lives_in``, or the contradiction between them would be invisible.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from enum import Enum

from ._errors import InvalidArgumentError

__all__ = [
    "BUILTIN_PREDICATES",
    "Cardinality",
    "PredicateRegistry",
    "PredicateSpec",
    "Volatility",
    "normalize_predicate",
]


class Cardinality(str, Enum):
    """How many values one subject holds for a predicate at one instant."""

    ONE = "one"
    MANY = "many"


class Volatility(str, Enum):
    """How fast a predicate's facts go stale; retrieval decays recency by it."""

    STATIC = "static"
    SLOW = "slow"
    FAST = "fast"

    @property
    def half_life(self) -> timedelta | None:
        """The recency half-life: never for STATIC, two years for SLOW, a week for FAST."""
        return _HALF_LIVES[self]


_HALF_LIVES = {
    Volatility.STATIC: None,
    Volatility.SLOW: timedelta(days=730),
    Volatility.FAST: timedelta(days=7),
}


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def normalize_predicate(name: object, argument: str = "predicate") -> str:
    """Lower-case a predicate name and join its words with ``_``.

    Raises:
        InvalidArgumentError: ``name`` is not a string, or has no word characters.
    """
    if not isinstance(name, str):
        raise InvalidArgumentError(argument, f"expected a string, got {type(name).__name__}")
    words = name.replace("-", " ").replace("_", " ").casefold().split()
    if not words or "\x00" in name or not _encodable(name):
        raise InvalidArgumentError(argument, f"{name!r:.60} is not a usable predicate name")
    return "_".join(words)


@dataclass(frozen=True, slots=True)
class PredicateSpec:
    """A predicate's cardinality, volatility and the aliases that key to it."""

    name: str
    cardinality: Cardinality = Cardinality.MANY
    volatility: Volatility = Volatility.SLOW
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", normalize_predicate(self.name, "PredicateSpec.name"))
        if not isinstance(self.cardinality, Cardinality):
            raise InvalidArgumentError(
                "PredicateSpec.cardinality", "expected Cardinality.ONE or Cardinality.MANY"
            )
        if not isinstance(self.volatility, Volatility):
            raise InvalidArgumentError(
                "PredicateSpec.volatility", "expected Volatility.STATIC, SLOW or FAST"
            )
        if isinstance(self.aliases, str):
            raise InvalidArgumentError("PredicateSpec.aliases", "expected a tuple of names")
        object.__setattr__(
            self,
            "aliases",
            tuple(normalize_predicate(a, "PredicateSpec.aliases") for a in self.aliases),
        )


_ONE, _MANY = Cardinality.ONE, Cardinality.MANY
_STATIC, _SLOW, _FAST = Volatility.STATIC, Volatility.SLOW, Volatility.FAST

BUILTIN_PREDICATES: tuple[PredicateSpec, ...] = (
    PredicateSpec("name", _ONE, _STATIC, ("is_named", "called", "full_name")),
    PredicateSpec("born_in", _ONE, _STATIC, ("birthplace", "place_of_birth")),
    PredicateSpec("born_on", _ONE, _STATIC, ("birthday", "date_of_birth")),
    PredicateSpec("nationality", _ONE, _STATIC, ("citizen_of",)),
    PredicateSpec("lives_in", _ONE, _SLOW, ("resides_in", "based_in", "moved_to", "lives_at")),
    PredicateSpec("works_at", _ONE, _SLOW, ("works_for", "employed_by", "employer")),
    PredicateSpec("job_title", _ONE, _SLOW, ("role", "works_as", "position")),
    PredicateSpec("email", _ONE, _SLOW, ("email_address",)),
    PredicateSpec("phone", _ONE, _SLOW, ("phone_number", "mobile")),
    PredicateSpec("timezone", _ONE, _SLOW, ("time_zone",)),
    PredicateSpec("married_to", _ONE, _SLOW, ("spouse", "husband", "wife")),
    PredicateSpec("age", _ONE, _SLOW),
    PredicateSpec("likes", _MANY, _SLOW, ("loves", "enjoys", "is_into")),
    PredicateSpec("dislikes", _MANY, _SLOW, ("hates",)),
    PredicateSpec("prefers", _MANY, _SLOW, ("preference",)),
    PredicateSpec("speaks", _MANY, _STATIC, ("language",)),
    PredicateSpec("allergic_to", _MANY, _STATIC, ("allergy",)),
    PredicateSpec("has_pet", _MANY, _SLOW, ("owns_pet",)),
    PredicateSpec("knows", _MANY, _SLOW, ("friend_of",)),
    PredicateSpec("reports_to", _ONE, _SLOW, ("manager",)),
    PredicateSpec("working_on", _MANY, _FAST, ("current_task",)),
    PredicateSpec("plans_to", _MANY, _FAST),
)
"""The seed schema: common personal-fact predicates with their cardinality and volatility."""


class PredicateRegistry:
    """Canonical predicate names, their specs and aliases.

    Unknown predicates resolve to a ``MANY``/``SLOW`` spec under their own normalized
    name. Specs are added with ``register()``; a ``Memvara`` persists every non-seed spec
    in its store, so a fresh process reuses what an earlier one declared or learned.

    Args:
        specs: the starting schema; ``BUILTIN_PREDICATES`` when omitted.

    Raises:
        InvalidArgumentError: two specs claim the same name or alias.
    """

    def __init__(self, specs: Iterable[PredicateSpec] = BUILTIN_PREDICATES) -> None:
        self._lock = threading.Lock()
        self._specs: dict[str, PredicateSpec] = {}
        self._alias: dict[str, str] = {}
        self._resolved: dict[object, str] = {}  # raw name -> canonical, cleared on register
        if isinstance(specs, (str, PredicateSpec)) or not isinstance(specs, Iterable):
            raise InvalidArgumentError("specs", f"expected an iterable of PredicateSpec, such as"
                                       f" BUILTIN_PREDICATES + (PredicateSpec(...),), got {specs!r:.60}")
        for spec in specs:
            self.register(spec)

    def register(self, spec: PredicateSpec, *, replace: bool = False) -> PredicateSpec:
        """Add a spec (or, with ``replace=True``, overwrite one of the same name).

        Returns:
            The spec now in force for that name.

        Raises:
            InvalidArgumentError: not a ``PredicateSpec``, or a name or alias already
                belongs to another predicate.
        """
        if not isinstance(spec, PredicateSpec):
            raise InvalidArgumentError("spec", f"expected a PredicateSpec, got {type(spec).__name__}")
        with self._lock:
            current = self._specs.get(spec.name)
            if current is not None and not replace:
                if current != spec:
                    raise InvalidArgumentError(
                        "spec", f"predicate {spec.name!r} is already registered as {current}"
                    )
                return current
            if spec.name in self._alias and self._alias[spec.name] != spec.name:
                raise InvalidArgumentError(
                    "spec", f"{spec.name!r} is already an alias of {self._alias[spec.name]!r}"
                )
            for alias in spec.aliases:
                owner = self._alias.get(alias)
                if owner is not None and owner != spec.name:
                    raise InvalidArgumentError(
                        "spec", f"alias {alias!r} already belongs to {owner!r}"
                    )
            if current is not None:
                for alias in current.aliases:
                    self._alias.pop(alias, None)
            self._resolved = {}
            self._specs[spec.name] = spec
            self._alias[spec.name] = spec.name
            for alias in spec.aliases:
                self._alias[alias] = spec.name
            return spec

    def canonical(self, name: object) -> str:
        """The slot name a predicate keys under: its alias target, or itself normalized."""
        if isinstance(name, str):
            cached = self._resolved.get(name)
            if cached is not None:
                return cached
        normal = normalize_predicate(name)
        canonical = self._alias.get(normal, normal)
        if len(self._resolved) < 65_536:
            self._resolved[name] = canonical
        return canonical

    def spec(self, name: object) -> PredicateSpec:
        """The spec in force for ``name``; an unknown predicate is ``MANY``/``SLOW``."""
        canonical = self.canonical(name)
        known = self._specs.get(canonical)
        return known if known is not None else PredicateSpec(canonical)

    def is_known(self, name: object) -> bool:
        """Whether ``name`` (or the predicate it aliases) has a registered spec."""
        return self.canonical(name) in self._specs

    def __iter__(self) -> Iterator[PredicateSpec]:
        return iter(list(self._specs.values()))

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(name.strip()) and self.is_known(name)
