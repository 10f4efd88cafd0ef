"""Subject references: how a question names an event, exactly and without leaking.

A reference shows an event's type plus discriminators, added in a fixed order until
the words shown match exactly one event of the whole log:

1. **identifiers**, one at a time — the event's scalar facts and scalar artifact
   references (``jira JIRA-42``): the role's preferred keys first, then the rarest
   values among events of its type; never a value every such event shows, nor the
   keys its role hides (see :class:`Role`);
2. **actors** — all of them, by display name (when the role allows);
3. **time** — where the track allows it: the UTC day, then the minute, then the second.

Whether an event matches is judged on exactly what the text shows: the same
humanised type, every shown value among the event's values for that key (a list
offers each element, values compare by canonical text as joins do), every shown
actor name among its actors' names, and its time inside the shown day, minute or
second. List-valued facts and list-valued artifact references are never shown, so
they never count. A subject that stays ambiguous after every allowed discriminator
is set aside (``ambiguous_reference``), never named loosely.

Roles decide what a side may show (a per-track, per-spec decision, never a
per-question one, so what is shown cannot differ systematically between labels):
Perspective hides the target's time and its witnesses; Counterfactual hides, on
the effect, every key whose values can coincide with the cause's (so whether they
join cannot be read off the text) and the effect's own records; Silence hides
trigger keys naming a record that exists only once the response happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, NamedTuple

from ..contract.paths import join_key
from ..graph.sql import GraphSQL
from . import sql
from .text import humanize

TIME_LEVELS = ("day", "minute", "second")
_US = {"day": 86_400_000_000, "minute": 60_000_000, "second": 1_000_000}


@dataclass(frozen=True)
class Role:
    """What one side of a question may show.

    ``hide``: ``(kind, key)`` pairs never shown (kind ``f`` for a fact, ``a`` for an
    artifact reference); ``forbid``: values never shown whatever their key; ``prefer``:
    keys tried first (a spec's join keys name its subjects the way the workflow does)."""

    time: bool = True
    actors: bool = True
    hide: frozenset[tuple[str, str]] = frozenset()
    forbid: frozenset[str] = frozenset()
    prefer: tuple[tuple[str, str], ...] = ()

    def forbidding(self, values: Iterable[str]) -> "Role":
        """This role, also forbidding ``values``."""
        return replace(self, forbid=self.forbid | frozenset(values))


class Subject(NamedTuple):
    """One event to name: its id, type, time, raw record and actors."""

    event_id: str
    type: str
    ts_us: int
    record: dict[str, Any]
    actors: tuple[str, ...]


class Reference(NamedTuple):
    event_id: str
    type: str
    ids: tuple[tuple[str, str, str], ...]  # (kind, key, value), facts before artifacts, by key
    actors: tuple[str, ...]  # display names, sorted
    time: str  # '' or one of TIME_LEVELS
    ts_us: int

    def shown(self) -> dict[str, Any]:
        """What the text shows, as data (``meta.subjects`` of a question: for audits)."""
        return {
            "event_id": self.event_id,
            "type": self.type,
            "ids": [list(i) for i in self.ids],
            "actors": list(self.actors),
            "time": self.time,
        }

    def values(self) -> list[str]:
        """The identifier values the text shows (the question's allowed names)."""
        return sorted({v for _, _, v in self.ids})

    def text(self) -> str:
        parts = [f"{key.replace('_', ' ')} {value}" for _, key, value in self.ids]
        if self.actors:
            parts.append("with " + _and(self.actors))
        if self.time:
            parts.append(("on " if self.time == "day" else "at ") + format_at(self.ts_us, self.time))
        base = f"the '{humanize(self.type)}' event"
        return f"{base} ({'; '.join(parts)})" if parts else base


def _and(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def format_at(ts_us: int, level: str) -> str:
    dt = datetime.fromtimestamp(ts_us / 1_000_000, tz=timezone.utc)
    return dt.strftime({"day": "%Y-%m-%d", "minute": "%Y-%m-%d %H:%M UTC", "second": "%Y-%m-%d %H:%M:%S UTC"}[level])


def scalar_text(value: Any) -> str | None:
    """The one canonical text of a scalar value; ``None`` for lists, objects, nulls, blanks."""
    if type(value) is str:  # most values: their own canonical text (join_key's), if not blank
        return value if value.strip() else None
    if isinstance(value, dict | list) or value is None:
        return None
    keys = join_key(value)
    text = next(iter(keys)) if len(keys) == 1 else None
    return text if text and text.strip() else None


def identifiers(record: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Every ``(kind, key, value)`` a reference could show: scalar facts, scalar artifact refs."""
    out = []
    for kind, field_name in (("f", "facts"), ("a", "artifact_ids")):
        block = record.get(field_name)
        if isinstance(block, dict):
            for key in sorted(block):
                text = scalar_text(block[key])
                if text is not None and isinstance(key, str) and key.strip():
                    out.append((kind, key, text))
    return out


def all_values(record: dict[str, Any]) -> set[str]:
    """Every canonical value of a record's facts and artifact references (lists included)."""
    out: set[str] = set()
    for field_name in ("facts", "artifact_ids"):
        block = record.get(field_name)
        if isinstance(block, dict):
            for value in block.values():
                if not isinstance(value, dict):
                    out |= join_key(value)
    return out


def keyed_values(record: dict[str, Any]) -> dict[tuple[str, str], frozenset[str]]:
    """``(kind, key) -> canonical values`` of a record's facts and artifact references."""
    out = {}
    for kind, field_name in (("f", "facts"), ("a", "artifact_ids")):
        block = record.get(field_name)
        if isinstance(block, dict):
            for key, value in block.items():
                if isinstance(key, str) and not isinstance(value, dict):
                    out[(kind, key)] = join_key(value)
    return out


def path_key(path: str) -> tuple[str, str] | None:
    """The ``(kind, key)`` a dotted path names, if it is a fact or an artifact reference."""
    head, _, rest = path.partition(".")
    kind = {"facts": "f", "artifact_ids": "a"}.get(head)
    return (kind, rest) if kind and rest and "." not in rest else None


def _levels(
    s: Subject,
    role: Role,
    display: dict[str, str],
    frequency: Callable[[tuple[str, str, str]], int] | None = None,
    size: int = 0,
    shown: list[tuple[str, str, str]] | None = None,
) -> list[Reference]:
    """The references of a subject in discriminator order, each adding to the previous:
    identifiers one at a time (the role's preferred keys first, then the rarest values
    among the events of its type first — ``frequency`` — ties by kind and key; a value
    every one of the ``size`` events of its type shows tells nothing and is left out),
    then the actors, then the time at each allowed precision. The first that names
    exactly one event is used, so a question shows no more than it must. (``shown``: the
    subject's ``identifiers``, when the caller has them.)"""
    shown = identifiers(s.record) if shown is None else shown
    allowed = [i for i in shown if (i[0], i[1]) not in role.hide and i[2] not in role.forbid]
    rank = {k: n for n, k in enumerate(role.prefer)}
    freq = frequency or (lambda i: 0)
    if size:
        allowed = [i for i in allowed if freq(i) < size]
    allowed.sort(key=lambda i: (rank.get((i[0], i[1]), len(rank)), freq(i), i[0] != "f", i[1]))
    out = [
        Reference(s.event_id, s.type, tuple(sorted(allowed[:n], key=_shown_order)), (), "", s.ts_us)
        for n in range(len(allowed) + 1)
    ]
    names = tuple(sorted({display.get(a, a) for a in s.actors}))
    if role.actors and names:
        out.append(out[-1]._replace(actors=names))
    if role.time:
        out += [out[-1]._replace(time=level) for level in TIME_LEVELS]
    return out


def _shown_order(i: tuple[str, str, str]) -> tuple[bool, str]:
    return i[0] != "f", i[1]


@dataclass
class SubjectIndex:
    """Resolves references in one batch against every event of the log: the events a
    reference's words match are counted in DuckDB (``sql.match_counts``), so no posting
    list of the log ever reaches Python."""

    gs: GraphSQL
    display: dict[str, str]
    _groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _sizes: dict[str, int] = field(default_factory=dict)
    _indexed: set[tuple[str, str, str, str]] = field(default_factory=set)  # values in ge_post
    _actors: bool = False  # ge_eact built
    _fact_keys: set[str] | None = None  # keys in ge_efact (None: none loaded yet)
    # resolved, by _memo_key: (the subject's record, held so its id stays its own; the reference)
    _found: dict[tuple, tuple[Any, Reference | None]] = field(default_factory=dict)

    LEVELS_PER_ROUND = 3  # references per subject a round counts (most resolve on the first)

    def levels(self, requests: list[tuple[Any, Subject, Role]]) -> dict[Any, list[Reference]]:
        """Each subject's references in the order :meth:`resolve` tries them."""
        self._start()
        shown = [identifiers(s.record) for _, s, _ in requests]
        frequency = self._load([(s, role) for _, s, role in requests], shown)
        out = {}
        for (key, s, role), ids in zip(requests, shown):
            group = self._groups.get(s.type, (s.type,))
            out[key] = _levels(
                s,
                role,
                self.display,
                lambda i: sum(frequency.get((t, *i), 0) for t in group),
                sum(self._sizes.get(t, 0) for t in group),
                ids,
            )
        return out

    def resolve(self, requests: Iterable[tuple[Any, Subject, Role]]) -> dict[Any, Reference | None]:
        """``key -> the first reference naming exactly its subject`` (``None`` if none does).

        A subject's reference depends on the log, the subject and its role only, never on
        the other requests: one resolved before (say, by the generator for every track at
        once) is answered from memory. The others in rounds: every unresolved subject has
        its next few references counted in one query; the first that matches exactly its
        subject wins."""
        keyed = [(key, _memo_key(s, role), s, role) for key, s, role in requests]
        todo: dict[tuple, tuple[Subject, Role]] = {}
        for _, memo, s, role in keyed:
            if memo not in self._found:
                todo.setdefault(memo, (s, role))
        if todo:
            found = self._resolve([(memo, s, role) for memo, (s, role) in todo.items()])
            self._found.update((memo, (todo[memo][0].record, ref)) for memo, ref in found.items())
        return {key: self._found[memo][1] for key, memo, _, _ in keyed}

    def _resolve(self, requests: list[tuple[Any, Subject, Role]]) -> dict[Any, Reference | None]:
        levels = self.levels(requests)
        found: dict[Any, Reference | None] = {key: None for key in levels}
        step = {key: 0 for key in levels}
        while step:
            batch = [
                (key, i)
                for key, first in step.items()
                for i in range(first, min(first + self.LEVELS_PER_ROUND, len(levels[key])))
            ]
            unique = self._unique([levels[key][i] for key, i in batch])
            named = {kb for kb, ok in zip(batch, unique) if ok}
            for key, first in list(step.items()):
                last = min(first + self.LEVELS_PER_ROUND, len(levels[key]))
                hit = next((i for i in range(first, last) if (key, i) in named), None)
                if hit is not None:
                    found[key] = levels[key][hit]
                    del step[key]
                elif last == len(levels[key]):
                    del step[key]
                else:
                    step[key] = last
        return found

    def _start(self) -> None:
        if self._groups:
            return
        by_name: dict[str, list[str]] = {}
        for t in self.gs.event_types():
            by_name.setdefault(humanize(t), []).append(t)
        self._groups = {t: tuple(ts) for ts in by_name.values() for t in ts}
        self._sizes = sql.start_subjects(self.gs, self.display, {t: humanize(t) for t in self._groups})

    def _load(
        self, subjects: list[tuple[Subject, Role]], shown: list[list[tuple[str, str, str]]]
    ) -> dict[tuple[str, str, str, str], int]:
        """Index every value the subjects' references may show (``shown``: their
        identifiers; those not indexed by an earlier batch); ``(event type, kind, key, value) -> events of that type showing
        it`` for their identifiers."""
        want, ids = set(), set()
        for (s, role), idents in zip(subjects, shown):
            grp = humanize(s.type)
            ids.update((grp, *i) for i in idents)
            if role.actors:
                want.update((grp, "p", "", self.display.get(a, a)) for a in s.actors)
            if role.time:
                want.update((grp, "t", level, str(s.ts_us - s.ts_us % _US[level])) for level in TIME_LEVELS)
        new = sorted((want | ids) - self._indexed)
        if not self._actors and any(w[1] == "p" for w in new):
            sql.load_actors(self.gs)
            self._actors = True
        self._load_facts({w[2] for w in new if w[1] == "f"})
        sql.load_postings(self.gs, new, [(level, _US[level]) for level in TIME_LEVELS])
        self._indexed.update(new)
        return {(t, k, key, v): n for t, k, key, v, n in sql.frequencies(self.gs, sorted(ids))} if ids else {}

    def _load_facts(self, keys: set[str]) -> None:
        """Every event's values under these fact keys in ``ge_efact``: the first time, under
        every key of the log (one read of each document for the whole generation)."""
        if not keys:
            return
        if self._fact_keys is None:
            self._fact_keys = set()
            keys = keys | set(sql.fact_keys(self.gs))
        todo = sorted(keys - self._fact_keys)
        sql.load_facts(self.gs, todo)
        self._fact_keys.update(todo)

    def _unique(self, refs: list[Reference]) -> list[bool]:
        """Whether each reference's words match exactly its own subject among the events of the log."""
        rows, constraints = [], []
        out = [False] * len(refs)
        for rid, ref in enumerate(refs):
            shown = _constraints(ref)
            if not shown:  # the type alone: unique only if its group has one event
                out[rid] = sum(self._sizes.get(t, 0) for t in self._groups.get(ref.type, (ref.type,))) == 1
                continue
            grp = humanize(ref.type)
            rows.append((rid, ref.event_id))
            constraints += [(rid, grp, *c, len(shown)) for c in shown]
        if rows:
            for rid, (n, own) in sql.match_counts(self.gs, rows, constraints).items():
                out[rid] = n == 1 and own
        return out


def _memo_key(s: Subject, role: Role) -> tuple:
    """Everything a reference is a function of (``_levels``, ``_load``): the subject's event,
    type, time, record (by identity: the memo holds it) and actors, and the role — hashable
    however a track shaped them (a list of actors, a set of hidden keys). A track's own call
    with the requests the generator resolved (the same objects) is answered from memory; two
    requests naming one event by different records never share an answer."""
    return (
        s.event_id,
        s.type,
        s.ts_us,
        id(s.record),
        tuple(s.actors),
        role.time,
        role.actors,
        frozenset(role.hide),
        frozenset(role.forbid),
        tuple(role.prefer),
    )


def _constraints(ref: Reference) -> list[tuple[str, str, str]]:
    """The (kind, key, value) words of a reference, as ``sql.load_postings`` indexes them."""
    out = list(ref.ids) + [("p", "", a) for a in ref.actors]
    if ref.time:
        size = _US[ref.time]
        out.append(("t", ref.time, str(ref.ts_us - ref.ts_us % size)))
    return out
