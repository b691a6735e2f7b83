"""``add()``: raw conversation in, episodes and claims out, through four tiers.

Cheapest first, each tier deciding what reaches the next:

0. exact duplicates of a turn already held at the scope (or earlier in the same call)
   are skipped; then near-duplicates, by cosine of the turn's vector against the scope's
   recent turns. Skipped turns are not stored again.
1. the salience gate (``_gate``) drops filler ("ok thanks", a lone emoji). The turn is
   stored as an episode; it is only not mined for claims.
1b. rules (``_rules``) read unambiguous first-person declaratives in user turns.
2. whatever is left goes to the model in **one** ``extract`` call; with no model it is
   counted as ``unextracted`` (``Memvara()`` warned about that when it was built).

Everything slow (redaction, embedding, the model call, classifying a new predicate)
happens before the write transaction opens; the episodes and claims then land in one
transaction, all or nothing.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import numpy as np
import numpy.typing as npt

from .._domain import args as _args
from . import gate as _gate
from . import rules as _rules
from .._errors import InvalidArgumentError
from .._domain.entities import entity_key
from .._domain.model import ROLES, Claim, Episode, Scope
from .._domain.results import Skip, WriteReceipt
from .scripts import script_of
from .._domain.time import from_micros, to_micros
from ..llm import LLM, ExtractionPendingError, LLMError
from ..redact import Redactor
from ..schema import PredicateRegistry, PredicateSpec
from ..telemetry import Recorder
from .echo import echoes, strip_blocks
from .encode import encode_checked
from .recent import RecentTurns
from .writer import Writer
from ..embed import Embedder
from ..store.base import Store

__all__ = ["MAX_TURN_CHARS", "NEAR_DUPLICATE", "Ingest", "Turn"]

MAX_TURN_CHARS = 1_000_000
"""A turn longer than this is refused (a whole document belongs in a loader, not a turn)."""
NEAR_DUPLICATE = 0.97
"""Cosine at or above which a turn repeats one of the scope's recent turns."""
RECENT_TURNS = 32
"""How many of a scope's latest turns a new turn is compared with for near-duplicates."""
RECENT_SCOPES = 128
DUPLICATE_WINDOW = timedelta(minutes=10)
"""How close in time two identical turns (same text, role and scope) must be said for
the second to be a copy of the first, not a statement made again."""
WAITING_COPIES = 10_000
"""How many waiting turns a call that skipped a copy looks through for it."""
RULES_EXTRACTOR = "rules:v1"
ENTITY_CANDIDATES = 50
"""How many of the owner's recent names a new name is compared against."""


@dataclass(slots=True)
class Turn:
    role: str
    content: str
    ts: datetime | None
    name: str | None = None  # the speaker's name, from an OpenAI-style message
    id: str | None = None  # an Episode's own id, when it was given one


class Ingest:
    """Runs ``add()`` for one memory: its writer, store, embedder, model and options."""

    def __init__(
        self,
        writer: Writer,
        store: Store,
        embedder: Embedder,
        registry: PredicateRegistry,
        llm: LLM,
        *,
        redactor: Redactor | None = None,
        recorder: Recorder | None = None,
        resolve_entities: bool = False,
        duplicate_window: timedelta = DUPLICATE_WINDOW,
    ) -> None:
        self._window = duplicate_window // timedelta(microseconds=1)
        self._writer = writer
        self._store = store
        self._embedder = embedder
        self._registry = registry
        self._llm = llm
        self._redactor = redactor
        self._recorder = recorder
        self._resolve_entities = resolve_entities
        # Latest turn vectors per scope, so a near-duplicate check costs a product, not
        # a read of the sidecar (recent.py).
        self._recent = RecentTurns(store, turns=RECENT_TURNS, scopes=RECENT_SCOPES,
                                   threshold=NEAR_DUPLICATE)
        # A number for each turn this memory stores, in the turn's id: two calls at one
        # instant (an injected clock standing still) saying the same text are two turns
        # when an erasure scrubbed the first since, and must not share an id. Counted per
        # memory, so the same calls on a new memory give the same ids.
        self._serial = itertools.count()

    def add(
        self, messages: object, role: str, ts: datetime | None, scope: Scope,
        meta: Mapping[str, object] | None = None,
    ) -> WriteReceipt:
        """Store ``messages`` as episodes and what they say as claims; see the module."""
        started = time.perf_counter()
        turns = self._redacted(_turns(messages, role, ts))
        now = self._writer.now()
        recorder = self._recorder
        skipped: list[Skip] = []

        # Tier 0a: copies. A turn is a copy when it repeats a stored turn of the scope
        # (same text and role) said within the window, or a turn earlier in this call,
        # or names an episode id already stored. Said again later, it is a new turn.
        at = [now if t.ts is None else to_micros(t.ts, "ts") for t in turns]
        held = self._store.copies_of(scope, {t.content for t in turns})
        given = [t.id for t in turns if t.id]
        known_ids = set(self._store.episodes_by_ids(given)) if given else set()
        fresh: list[Turn] = []
        fresh_at: list[int] = []
        seen: set[tuple[str, str]] = set()
        for turn, when in zip(turns, at):
            if (turn.content, turn.role) in seen or turn.id in known_ids or any(
                    role == turn.role and abs(when - ts) <= self._window
                    for role, ts in held.get(turn.content, ())):
                skipped.append(Skip(turn.content, "duplicate"))
            else:
                seen.add((turn.content, turn.role))
                fresh.append(turn)
                fresh_at.append(when)

        # Tier 0b: near-copies, by the vectors every stored turn gets anyway.
        vectors = encode_checked(self._embedder, [t.content for t in fresh])
        kept, kept_vectors, kept_at = self._not_near_duplicates(
            scope, fresh, fresh_at, vectors, skipped)
        episodes = [_episode(t, scope, now, next(self._serial)) for t in kept]
        # Who "I" is in each turn: the message's name, else the scope's user, else "user".
        speakers = {e.id: t.name or scope.user or _rules.SUBJECT for e, t in zip(episodes, kept)}

        # Tier 1 and 1b: the gate, then the rules on what the gate let through.
        claims: list[Claim] = []
        for_model: list[Episode] = []
        for said in episodes:
            episode = _unechoed(said)  # a pasted recall() block is not read
            if said.content and not episode.content:  # nothing but the block: an empty turn is "empty"
                skipped.append(Skip(said.content, "echo"))
                continue
            reason = _gate.drop_reason(episode.content)
            if reason is not None:
                skipped.append(Skip(episode.content, reason))
                if recorder is not None:
                    recorder.record("gate.drop", reason=reason)
                continue
            found = _rules.extract(episode.content) if episode.role == "user" else []
            if recorder is not None and episode.role == "user":
                series = "fast.hit" if found else "fast.miss"
                recorder.record(series, script=script_of(episode.content))
            if found:
                claims.extend(self._rule_claim(f, episode, scope, now, speakers[episode.id])
                              for f in found)
            else:
                for_model.append(episode)

        # Tier 2: one model call for everything left, or a count of what was not read.
        # A failing model loses nothing: the turns and the rule claims are stored, and the
        # turns left for the model are marked to be read again (retry()).
        unextracted, llm_calls = 0, 0
        failure: LLMError | None = None
        if for_model:
            if getattr(self._llm, "is_null", False):
                unextracted = len(for_model)
            else:
                try:
                    extracted, llm_calls = self._extract(for_model)
                except LLMError as exc:
                    failure, unextracted, llm_calls = exc, len(for_model), 1
                else:
                    claims.extend(self._unechoed_claims(
                        self._model_claims(extracted, for_model, scope, now, speakers),
                        for_model, now, skipped))
        waiting = [e.id for e in for_model] if failure is not None else []
        named = {e.id: t.name for e, t in zip(episodes, kept) if t.name} if waiting else {}
        copies = [] if len(fresh) == len(turns) or getattr(self._llm, "is_null", False) \
            else self._waiting_copies(scope, {s.content for s in skipped})

        if meta:
            claims = [replace(c, meta={**meta, **c.meta}) for c in claims]
        if not episodes and not claims:  # every turn was a repeat: nothing to write
            receipt = WriteReceipt()
        else:
            receipt = self._writer.remember(
                claims, "ended", episodes=episodes, unextracted=waiting, speakers=named,
                call_meta=json.dumps(meta, sort_keys=True, ensure_ascii=False) if meta and waiting else None,
                reason="" if failure is None else type(failure.__cause__ or failure).__name__,
                episode_vectors=kept_vectors if episodes else None,
            )
        if episodes:
            self._recent.remember(scope, [t.role for t in kept], kept_at, kept_vectors)
        receipt = replace(
            receipt,
            skipped=tuple(skipped),
            unextracted=unextracted,
            llm_calls=llm_calls,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            pending=(*waiting, *copies),
        )
        if failure is not None:
            if self._recorder is not None:
                self._recorder.record("llm.failed", float(len(waiting)), kind="extract")
            raise ExtractionPendingError(
                f"{failure}; the call's {len(episodes)} turns and {len(receipt.added)} rule"
                f" claims are stored, and {len(waiting)} turns wait for retry_extraction()",
                receipt,
            ) from failure
        return receipt

    def _waiting_copies(self, scope: Scope, copies: set[str]) -> list[str]:
        """The stored turns of exactly ``scope`` with one of these texts that still wait
        for the model: a turn said again after a failed call is skipped as a copy, and
        the receipt's ``pending`` names the copy ``retry_extraction()`` will read."""
        return [e.id for e in self._store.unextracted_episodes(scope, WAITING_COPIES)
                if e.scope == scope and e.content in copies]

    def retry(self, scope: Scope, limit: int) -> WriteReceipt:
        """Read again, with the model, up to ``limit`` turns of ``scope``'s subtree that
        wait for extraction; unmark them in the same transaction as their claims, so a
        second retry cannot write them twice. A failing model leaves them waiting."""
        started = time.perf_counter()
        turns = self._store.unextracted_episodes(scope, limit)
        if not turns:
            return WriteReceipt(elapsed_ms=(time.perf_counter() - started) * 1000.0)
        if getattr(self._llm, "is_null", False):
            raise LLMError(f"{len(turns)} turns wait for extraction, but this memory has no"
                           " model: open it with llm= to read them")
        now = self._writer.now()
        claims: list[Claim] = []
        calls = 0
        by_scope: dict[Scope, list[Episode]] = {}
        for turn in turns:
            by_scope.setdefault(turn.scope, []).append(turn)
        skipped: list[Skip] = []
        for own, group in by_scope.items():
            group = [_unechoed(turn) for turn in group]
            try:
                extracted, used = self._extract(group)
            except LLMError as exc:
                if self._recorder is not None:
                    self._recorder.record("llm.failed", float(len(turns)), kind="extract")
                raise ExtractionPendingError(
                    f"{exc}; {len(turns)} turns still wait for extraction",
                    WriteReceipt(llm_calls=calls + 1, pending=tuple(t.id for t in turns)),
                ) from exc
            calls += used
            marks = self._store.unextracted_marks([t.id for t in group])
            speakers = {t.id: marks.get(t.id, (None, None))[0] or own.user or _rules.SUBJECT
                        for t in group}
            claims.extend(_with_call_meta(self._unechoed_claims(
                self._model_claims(extracted, group, own, now, speakers), group, now, skipped), marks))
        read = {t.id: t.content for t in turns}
        with self._store.transaction():
            # Still waiting, as the model read it? A turn erased, scrubbed or read by another
            # retry while the model ran is not written from what it said before.
            held = {t.id for t in self._store.unextracted_episodes(scope, limit)
                    if read.get(t.id) == t.content}
            receipt = self._writer.remember([c for c in claims if set(c.sources) <= held],
                                            "ended", extracted=sorted(held))
        return replace(receipt, llm_calls=calls, skipped=tuple(skipped),
                       elapsed_ms=(time.perf_counter() - started) * 1000.0)

    def _unechoed_claims(
        self, claims: list[Claim], turns: list[Episode], now: int, skipped: list[Skip],
    ) -> list[Claim]:
        """``claims`` less those read from a turn that is not the user's and re-stating
        a value their slot holds or held (``echo.echoes``); each dropped one is skipped."""
        others = {t.id for t in turns if t.role != "user"}
        if not others:
            return claims
        echoed = {id(c) for c in echoes(
            self._store, [c for c in claims if c.sources and c.sources[0] in others],
            self._writer.key_of, now)}
        skipped.extend(Skip(c.text, "echo") for c in claims if id(c) in echoed)
        return [c for c in claims if id(c) not in echoed]

    # -- the tiers --------------------------------------------------------------------
    def _redacted(self, turns: list[Turn]) -> list[Turn]:
        redactor, recorder = self._redactor, self._recorder
        if redactor is None:
            return turns
        return [Turn(turn.role, _redact(redactor, recorder, turn.content, "content"), turn.ts,
                     # a message's name becomes the subject of what it says: a turn's text too
                     None if turn.name is None else _redact(redactor, recorder, turn.name, "name"),
                     turn.id) for turn in turns]

    def _not_near_duplicates(
        self,
        scope: Scope,
        turns: list[Turn],
        at: list[int],
        vectors: npt.NDArray[np.float32],
        skipped: list[Skip],
    ) -> tuple[list[Turn], npt.NDArray[np.float32], list[int]]:
        """The turns that are no near-copy (cosine ``NEAR_DUPLICATE`` or more) of a turn
        of the same role said within the window: one of the scope's recent ones, or one
        kept earlier in this call."""
        near = self._recent.near(scope, [t.role for t in turns], at, vectors, self._window)
        # one product for the call's turns against each other; only a turn that comes
        # close to an earlier one has the other's role looked at
        close = vectors @ vectors.T >= NEAR_DUPLICATE if len(turns) > 1 else None
        keep: list[int] = []
        kept = [False] * len(turns)
        for i, turn in enumerate(turns):
            if near[i] or (close is not None and any(
                    kept[j] and turns[j].role == turn.role for j in np.flatnonzero(close[:i, i]))):
                skipped.append(Skip(turn.content, "near_duplicate"))
                continue
            keep.append(i)
            kept[i] = True
        if len(keep) == len(turns):  # the common case: nothing was near (no copy made)
            return turns, vectors, at
        return [turns[i] for i in keep], vectors[keep], [at[i] for i in keep]

    def forget_recent(self) -> None:
        """Drop every scope's recent turn vectors: read again from the store when next needed."""
        self._recent.clear()

    def use_embedder(self, embedder: Embedder) -> None:
        """Encode with ``embedder`` from now on; the cached turn vectors were another's."""
        self._embedder = embedder
        self._recent.clear()

    def _rule_claim(
        self, found: _rules.RuleClaim, episode: Episode, scope: Scope, now: int, speaker: str,
    ) -> Claim:
        return self._writer.build(
            speaker, found.predicate, found.object, scope, now,
            valid_from=episode.ts, polarity=found.polarity, sources=(episode.id,),
            extractor=RULES_EXTRACTOR,
        )

    def _extract(self, turns: list[Episode]) -> tuple[list[Claim], int]:
        before = getattr(self._llm, "calls", None)
        try:
            extracted = list(self._llm.extract(turns))
        except LLMError:
            raise
        except Exception as exc:  # a user's model: any failure is the model's, not ours
            raise LLMError(f"the model's extract() failed: {type(exc).__name__}: {exc}") from exc
        finally:  # a failed call is a call made
            after = getattr(self._llm, "calls", None)
            calls = after - before if isinstance(before, int) and isinstance(after, int) else 1
            if self._recorder is not None:
                self._recorder.record("llm.calls", float(calls), kind="extract")
        return extracted, calls

    def _model_claims(
        self, extracted: Iterable[object], turns: list[Episode], scope: Scope, now: int,
        speakers: Mapping[str, str],
    ) -> list[Claim]:
        """The model's claims, checked like any write; a bad one is dropped, not fatal.
        A claim about ``user`` read from a user's turn is about that turn's speaker."""
        by_id = {t.id: t for t in turns}
        items = [item for item in extracted if isinstance(item, Claim)]
        if self._resolve_entities:
            self._resolve_names(items, scope)
        out: list[Claim] = []
        for item in items:
            cited = item.sources if isinstance(item.sources, (tuple, list)) else ()
            sources = tuple(s for s in cited if isinstance(s, str) and s in by_id) or (turns[0].id,)
            said = by_id[sources[0]]
            subject = item.subject
            if said.role == "user" and isinstance(subject, str) and entity_key(
                    subject) == _rules.SUBJECT:
                subject = speakers[said.id]
            try:
                self._learn_predicate(item.predicate)  # refuses a name no write could take
                out.append(self._writer.build(
                    subject, item.predicate, item.object, scope, now,
                    valid_from=item.valid_from or said.ts, valid_to=item.valid_to,
                    sources=sources, confidence=item.confidence,
                    memory_type=item.memory_type, polarity=item.polarity,
                    extractor=item.extractor or "llm", meta=item.meta,
                ))
            except InvalidArgumentError:
                continue
        return out

    def _resolve_names(self, items: list[Claim], scope: Scope) -> None:
        """Ask the model, once per name new to this owner, whether it is another name of
        an entity the owner already has; learn the alias if so."""
        resolve = getattr(self._llm, "resolve_entity")
        candidates = self._store.entity_surfaces(Scope(scope.tenant, scope.user), ENTITY_CANDIDATES)
        known = {self._writer.key_of(scope, c) for c in candidates}
        asked: set[str] = set()
        for item in items:
            for surface in (item.subject, item.object):
                if not isinstance(surface, str) or not surface.strip():
                    continue
                key = self._writer.key_of(scope, surface)
                if key in known or key in asked or not candidates:
                    continue
                asked.add(key)
                try:
                    answer = resolve(surface, candidates)
                except Exception:  # noqa: BLE001 - a failing resolver costs the alias, not the turn
                    answer = None
                if self._recorder is not None:
                    self._recorder.record("llm.calls", kind="resolve_entity")
                if isinstance(answer, str) and answer in candidates:
                    # A candidate's key is known, so it differs from this new one.
                    self._writer.learn_alias(scope, surface, answer, via="llm")
                    known.add(key)

    def _learn_predicate(self, name: object) -> None:
        """Classify a predicate the registry has never seen: once, then persisted."""
        if not isinstance(name, str) or not name.strip():
            return
        canonical = self._registry.canonical(name)
        if self._registry.is_known(canonical):
            return
        try:
            answer = self._llm.classify_predicate(canonical)
        except Exception:  # noqa: BLE001 - a failing classifier costs the class, not the turn
            answer = None
        if self._recorder is not None:
            self._recorder.record("llm.calls", kind="classify")
        if not isinstance(answer, PredicateSpec):  # no usable answer: the default holds
            return  # for now, nothing is kept
        # Only the classification is taken: the name is ours, and a model's aliases
        # could claim a slot another predicate owns.
        spec = self._registry.register(
            PredicateSpec(canonical, answer.cardinality, answer.volatility)
        )
        self._store.save_predicates([spec])


def _unechoed(turn: Episode) -> Episode:
    """The turn as the tiers read it: any ``recall()`` block in it left out."""
    content = strip_blocks(turn.content)
    return turn if content == turn.content else replace(turn, content=content)


# -- normalizing what add() accepts -------------------------------------------------------
def _turns(messages: object, role: str, ts: datetime | None) -> list[Turn]:
    """``add()``'s argument as turns: a string, strings, Episodes or role/content dicts."""
    role = _check_role(role, "role")
    if ts is not None:
        to_micros(ts, "ts")
    if isinstance(messages, (str, Episode, Mapping)):
        messages = [messages]
    if not isinstance(messages, Sequence) or isinstance(messages, (bytes, bytearray)):
        raise InvalidArgumentError(
            "messages", "expected a string, a list of strings, Episodes or role/content dicts,"
            f" got {type(messages).__name__}"
        )
    turns: list[Turn] = []
    for i, item in enumerate(messages):
        where = f"messages[{i}]"
        if isinstance(item, Turn):  # already checked (a queued add's, frozen_turns)
            turns.append(item)
        elif isinstance(item, str):
            turns.append(Turn(role, _content(item, where), ts))
        elif isinstance(item, Episode):
            when = item.ts if item.ts is not None else ts
            if when is not None:
                to_micros(when, f"{where}.ts")
            turns.append(Turn(_check_role(item.role, f"{where}.role"),
                              _content(item.content, f"{where}.content"), when,
                              id=_args.check_text(item.id, f"{where}.id") if item.id else None))
        elif isinstance(item, Mapping):
            name = item.get("name")
            if name is not None:
                name = _args.check_text(name, f"{where}.name")
            content = item.get("content")
            if content is None and (item.get("tool_calls") or item.get("function_call")):
                content = ""  # OpenAI's tool call has no text: a turn the gate skips, counted
            turns.append(Turn(
                _check_role(item.get("role", role), f"{where}.role"),
                _content(_dict_content(content, f"{where}.content"), f"{where}.content"),
                ts, name,
            ))
        else:
            raise InvalidArgumentError(
                where, f"expected a string, an Episode or a dict, got {type(item).__name__}"
            )
    return turns


def _redact(redactor: Redactor, recorder: Recorder | None, text: str, field: str) -> str:
    """``text`` as ``redactor`` rewrites it, counted as ``field`` in the telemetry."""
    clean = redactor.redact(text)
    if not isinstance(clean, str):  # before anything is stored: the text is what it returns
        raise InvalidArgumentError("redactor", f"redact() must return the text as a string,"
                                   f" got {type(clean).__name__}")
    if recorder is not None:
        script = script_of(text)
        recorder.record("redact.inspected", field=field, script=script)
        if clean != text:
            recorder.record("redact.changed", field=field, script=script)
    return clean


def _dict_content(value: object, where: str) -> object:
    """OpenAI-style content: a string, or a list of ``{"type": "text", "text": ...}`` parts."""
    if isinstance(value, list):
        parts = []
        for j, part in enumerate(value):
            if not (isinstance(part, Mapping) and isinstance(part.get("text"), str)):
                raise InvalidArgumentError(f"{where}[{j}]", "expected a {'type': 'text', 'text': str} part")
            parts.append(part["text"])
        return "\n".join(parts)
    return value


def _content(value: object, where: str) -> str:
    text = _args.check_text(value, where, allow_empty=True, allow_nul=True)
    if len(text) > MAX_TURN_CHARS:
        raise InvalidArgumentError(where, f"is {len(text):,} characters; a turn holds at most {MAX_TURN_CHARS:,}")
    if "\x00" in text:
        raise InvalidArgumentError(where, "contains a NUL character")
    return text


def _check_role(value: object, where: str) -> str:
    if value not in ROLES:
        raise InvalidArgumentError(where, f"must be one of {', '.join(ROLES)}; got {value!r:.40}")
    return str(value)


def _episode(turn: Turn, scope: Scope, now: int, serial: int) -> Episode:
    """The stored form of a turn, with its id set now so claims can cite it."""
    recorded = from_micros(now)
    ts = turn.ts if turn.ts is not None else recorded
    digest = hashlib.blake2b(
        "\x1f".join([*(v or "" for v in scope.values()), turn.role, turn.content,
                     str(to_micros(ts, "ts")), str(now), str(serial)]).encode("utf-8", "surrogatepass"),
        digest_size=8,
    ).hexdigest()
    return Episode(turn.content, turn.role, ts, recorded, scope, turn.id or f"e{digest}")


def _with_call_meta(claims: list[Claim], marks: Mapping[str, tuple[str | None, str | None]]) -> list[Claim]:
    """``claims`` read again from waiting turns, each with the ``meta`` of the call that
    stored its turn added (as ``add()`` adds it), from the turn's mark."""
    out = []
    for claim in claims:
        kept = marks.get(claim.sources[0], (None, None))[1] if claim.sources else None
        out.append(claim if kept is None else replace(claim, meta={**json.loads(kept), **claim.meta}))
    return out
