"""The original GroundEval ``config.yaml``, mapped onto the native manifest.

Every key of the original format is either mapped onto the native model or
reported as a :class:`LegacyNote` (a verifier warning naming the key): ``GE107``
for a key of the original format that groundeval cannot honour, ``GE106`` for a
key the original format does not have. Neither kind ever fails the load; only a
bad *value* does, with a location in ``config.yaml``.

The mapping is a pure function of the parsed mapping: it does not depend on the
order of the keys, and it remembers where each native location came from
(:meth:`LegacyConfig.legacy_loc`) so errors found on the native model point at
the line of ``config.yaml`` the user wrote. ``docs/formats.md`` has the table of
every key and where it goes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# A causal link or silence pair without max_gap_days had no window in the original
# (the next matching event at any later time); the native model needs a number.
NO_LIMIT_DAYS = 36500.0
# The original ranked a query_template selector's search with this many hits.
ORIGINAL_SELECTOR_LIMIT = 5

_EVALUATION_PASSTHROUGH = (
    "perspective_actors",
    "easy_ratio",
    "medium_ratio",
    "hard_ratio",
    "max_perspective_questions",
    "max_counterfactual_questions",
    "max_silence_questions",
    "seed",
    # native evaluation settings, accepted in config.yaml as groundeval extensions
    "max_per_actor",
    "max_per_event_type",
    "counterfactual_negative_ratio",
    "shortcut_limit",
    "shortcut_min_questions",
    "gates",
    "scoring",
)
_RENAMED_EVALUATION = {"max_questions_per_actor": "max_per_actor", "max_questions_per_event_type": "max_per_event_type"}
_ADAPTER_KEYS = (
    "provider",
    "model",
    "api_key_env",
    "base_url",
    "temperature",
    "max_tokens",
    "max_retries",
    "llm_question_prose",
    "llm_model",
)

# Keys of the original format that groundeval cannot honour, and why (shown in GE107).
_NOT_HONOURED = {
    "output_dir": "groundeval writes its outputs where the command's --out option says",
    "max_links_per_spec": "groundeval has no per-spec cap on causal links; "
    "evaluation.max_per_event_type caps questions per event type",
    "trivial_search_space": "groundeval has no list of search-space entries too generic to count",
    "provider_path": "custom providers are agents in groundeval: pass --agent module:factory",
    "api_key": "secrets are never read from the manifest: name the environment variable in api_key_env",
    "agent": "framework agents are run with --agent module:factory",
    "task_contracts": "the original's task-contract mode is not supported",
    "groundeval": "draft-review metadata of the original has no effect in groundeval",
}
_TOP_LEVEL = frozenset(
    (
        "name",
        "description",
        "timezone",
        "artifacts_dir",
        "events_file",
        "use_event_log_policy",
        "actors",
        "roles",
        "perspective",
        "causal_links",
        "silence_pairs",
    )
    + _EVALUATION_PASSTHROUGH
    + tuple(_RENAMED_EVALUATION)
    + _ADAPTER_KEYS
    + tuple(_NOT_HONOURED)
)

_ROLE_KEYS = ("subsystems", "broadcast_event_types", "external", "description")
_CAUSAL_KEYS = (
    "name",
    "cause_event_type",
    "effect_event_type",
    "max_gap_days",
    "join",
    "match_field",
    "match_value",
    "premise_template",
    "outcome_template",
    "outcome_changed",
    "mechanism_aliases",
    "description",
    "link_field",
)
_SILENCE_KEYS = (
    "name",
    "trigger_event_type",
    "response_event_type",
    "max_gap_days",
    "join",
    "match_field",
    "match_value",
    "search_space_subsystems",
    "search_space",
    "search_space_selectors",
    "description",
)
_SELECTOR_KEYS = ("subsystem", "id_template", "query_template", "limit")
_PERSPECTIVE_RENAMES = {
    "positive_ratio": "positive",
    "negative_permission_ratio": "negative_permission",
    "negative_temporal_ratio": "negative_temporal",
}
_PERSPECTIVE_NATIVE = (
    "positive",
    "negative_permission",
    "negative_temporal",
    "require_cross_subsystem_cases",
    "pivots_per_actor",
)
_PERSPECTIVE_DIFFICULTY = ("easy_ratio", "medium_ratio", "hard_ratio")


@dataclass(frozen=True)
class LegacyNote:
    """A key of ``config.yaml`` that was not mapped: ``known`` keys belong to the original
    format but cannot be honoured (GE107); the others are unknown to it (GE106)."""

    loc: tuple
    message: str
    known: bool

    @property
    def key(self) -> str:
        return dotted(self.loc)


@dataclass
class LegacyConfig:
    """The native manifest dict of an original ``config.yaml``, with what was not mapped."""

    native: dict[str, Any]
    notes: list[LegacyNote] = field(default_factory=list)
    errors: list[tuple[tuple, str]] = field(default_factory=list)  # (location in config.yaml, message)
    origin: dict[tuple, tuple] = field(default_factory=dict)  # native location prefix -> config.yaml location

    def legacy_loc(self, loc: tuple | list) -> tuple:
        """Where a native manifest location was written in ``config.yaml``."""
        loc = tuple(p for p in loc if not (isinstance(p, str) and p.startswith("function-")))
        for n in range(len(loc), -1, -1):
            if loc[:n] in self.origin:
                return self.origin[loc[:n]] + loc[n:]
        return loc


def dotted(loc: tuple | list) -> str:
    """``("silence_pairs", 0, "search_space", 1)`` -> ``silence_pairs[0].search_space[1]``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _Mapper:
    def __init__(self, data: dict[str, Any]):
        self.data = data
        self.out = LegacyConfig(native={})

    # ------------------------------------------------------------------ bookkeeping

    def at(self, native: tuple, legacy: tuple) -> None:
        self.out.origin[native] = legacy

    def note(self, loc: tuple, message: str, known: bool = True) -> None:
        self.out.notes.append(LegacyNote(loc, message, known))

    def unknown(self, loc: tuple, where: str) -> None:
        self.note(
            loc, f"unknown key {dotted(loc)!r}: {where} has no such key in the original format; ignored", known=False
        )

    def error(self, loc: tuple, message: str) -> None:
        self.out.errors.append((loc, message))

    def split(self, value: dict[str, Any], loc: tuple, known: tuple[str, ...], where: str) -> dict[str, Any]:
        """The known keys of ``value``; every other key becomes a GE106 note."""
        for k in sorted(value, key=str):
            if k not in known:
                self.unknown(loc + (k,), where)
        return {k: value[k] for k in known if k in value}

    # ------------------------------------------------------------------ top level

    def run(self, default_name: str) -> LegacyConfig:
        d = self.data
        for k in sorted(d, key=str):
            if k not in _TOP_LEVEL:
                self.unknown((k,), "the top level")
        for k in sorted(_NOT_HONOURED):
            if k in d and d[k] not in (None, [], {}, ""):
                self.note((k,), f"{k!r} is not honoured: {_NOT_HONOURED[k]}")
        for head in ("evaluation", "adapters", "access"):  # defaults: the key's would-be place
            self.at((head,), ())
        native: dict[str, Any] = {"name": d.get("name") or default_name}
        for k in ("description", "timezone"):
            if k in d:
                native[k] = d[k]
                self.at((k,), (k,))
        native["sources"] = self.sources()
        native["access"] = {"actors": d.get("actors") if d.get("actors") is not None else {}, "roles": self.roles()}
        self.at(("access", "actors"), ("actors",))
        native["evaluation"] = self.evaluation()
        native["adapters"] = self.adapters()
        self.out.native = native
        self.out.notes.sort(key=lambda n: (n.key, n.message))
        return self.out

    def _text_or_null(self, key: str) -> str | None:
        value = self.data.get(key)
        if value is not None and not isinstance(value, str):
            self.error((key,), f"expected a path (text), got {value!r}")
            return None
        return value

    def sources(self) -> dict[str, str]:
        d = self.data
        self._text_or_null("output_dir")
        events = self._text_or_null("events_file")
        artifacts = self._text_or_null("artifacts_dir")
        if "artifacts_dir" in d and d["artifacts_dir"] is None:
            self.note(
                ("artifacts_dir",),
                "'artifacts_dir' is not honoured: null (the original's context-injection "
                "mode without a corpus) is not supported; artifacts are read from artifacts/",
            )
        self.at(("sources", "events"), ("events_file",) if events else ())
        self.at(("sources", "artifacts"), ("artifacts_dir",) if artifacts else ())
        return {"events": events or "events.jsonl", "artifacts": artifacts or "artifacts"}

    def _event_log_policy(self) -> bool:
        """Whether broadcast event types apply (the original's EventLogPolicy, its default)."""
        if "use_event_log_policy" not in self.data:
            return True
        value = self.data["use_event_log_policy"]
        if value is None or value is False:
            return False  # YamlAccessPolicy: subsystem grants only, no broadcasts
        if value is True:
            self.note(
                ("use_event_log_policy",),
                "'use_event_log_policy: true' is honoured only in part: roles' "
                "broadcast_event_types apply, but taking part in an event (being in its actors) never "
                "grants access to its artifacts in groundeval's visibility cone",
            )
            return True
        self.error(("use_event_log_policy",), f"expected true or false, got {value!r}")
        return True

    def roles(self) -> Any:
        roles = self.data.get("roles")
        self.at(("access", "roles"), ("roles",))
        broadcasts = self._event_log_policy()
        if roles is None:
            return {}
        if not isinstance(roles, dict):
            return roles  # the model reports the type, at roles
        out: dict[str, Any] = {}
        for name, spec in roles.items():
            if not isinstance(spec, dict):
                out[name] = spec
                continue
            kept = self.split(spec, ("roles", name), _ROLE_KEYS, f"role {name!r}")
            if not broadcasts:
                kept.pop("broadcast_event_types", None)
            out[name] = {k: v for k, v in kept.items() if v is not None}
        return out

    # ------------------------------------------------------------------ evaluation

    def evaluation(self) -> dict[str, Any]:
        d = self.data
        ev: dict[str, Any] = {}
        for k in _EVALUATION_PASSTHROUGH:
            if d.get(k) is not None:  # null means "the default" in the original
                ev[k] = d[k]
                self.at(("evaluation", k), (k,))
        for old, new in _RENAMED_EVALUATION.items():
            if d.get(old) is None:
                continue
            if new in ev and ev[new] != d[old]:
                self.error((old,), f"conflicts with {new}: {d[new]!r} (give one of them)")
                continue
            ev[new] = d[old]
            self.at(("evaluation", new), (old,))
        if d.get("perspective") is not None:
            ev["perspective"] = self.perspective(ev)
            self.at(("evaluation", "perspective"), ("perspective",))
        for key, fn in (("causal_links", self.causal_link), ("silence_pairs", self.silence_pair)):
            value = d.get(key)
            if value is None:
                continue
            self.at(("evaluation", key), (key,))
            if not isinstance(value, list):
                ev[key] = value  # the model reports the type
                continue
            ev[key] = [fn(i, spec) for i, spec in enumerate(value)]
        return ev

    def perspective(self, ev: dict[str, Any]) -> Any:
        p = self.data["perspective"]
        if not isinstance(p, dict):
            return p
        known = tuple(_PERSPECTIVE_RENAMES) + _PERSPECTIVE_NATIVE + _PERSPECTIVE_DIFFICULTY
        kept = self.split(p, ("perspective",), known, "perspective")
        out: dict[str, Any] = {}
        for k in _PERSPECTIVE_NATIVE:
            if kept.get(k) is not None:
                out[k] = kept[k]
                self.at(("evaluation", "perspective", k), ("perspective", k))
        for old, new in _PERSPECTIVE_RENAMES.items():
            if kept.get(old) is None:
                continue
            if new in out and out[new] != kept[old]:
                self.error(("perspective", old), f"conflicts with perspective.{new}: {kept[new]!r} (give one of them)")
                continue
            out[new] = kept[old]
            self.at(("evaluation", "perspective", new), ("perspective", old))
        for k in _PERSPECTIVE_DIFFICULTY:
            if kept.get(k) is None:
                continue
            if k not in ev:
                ev[k] = kept[k]  # groundeval has one difficulty mix for every track
                self.at(("evaluation", k), ("perspective", k))
            elif ev[k] != kept[k]:
                self.note(
                    ("perspective", k),
                    f"'perspective.{k}' is not honoured: groundeval has one difficulty "
                    f"mix for every track, and the top-level {k} ({ev[k]!r}) applies",
                )
        return out

    def _gap(self, spec: dict[str, Any], kept: dict[str, Any], native: tuple, legacy: tuple) -> None:
        if spec.get("max_gap_days") is None:
            kept["max_gap_days"] = NO_LIMIT_DAYS  # no window in the original
        else:
            self.at(native + ("max_gap_days",), legacy + ("max_gap_days",))

    def _joins(self, value: Any, loc: tuple, known: tuple[str, ...], where: str) -> Any:
        if isinstance(value, dict):
            return self.split(value, loc, known, where)
        if isinstance(value, list):
            return [self.split(j, loc + (i,), known, where) if isinstance(j, dict) else j for i, j in enumerate(value)]
        return value

    def causal_link(self, i: int, spec: Any) -> Any:
        native, legacy = ("evaluation", "causal_links", i), ("causal_links", i)
        self.at(native, legacy)
        if not isinstance(spec, dict):
            return spec
        kept = self.split(spec, legacy, _CAUSAL_KEYS, "a causal link")
        if "link_field" in kept:
            kept.pop("link_field")
            self.note(
                legacy + ("link_field",),
                f"'{dotted(legacy + ('link_field',))}' is not honoured: causal "
                "links are found by their join conditions; groundeval has no link_field",
            )
        self._gap(spec, kept, native, legacy)
        if "join" in kept:
            kept["join"] = self._joins(kept["join"], legacy + ("join",), ("cause", "effect"), "a causal join")
        # The original's templates state the cause and the effect as they happened (its questions ask
        # "if <premise> had not happened ..."): never an example of a different outcome.
        kept["templates_as_happened"] = True
        return {k: v for k, v in kept.items() if v is not None}

    def silence_pair(self, i: int, spec: Any) -> Any:
        native, legacy = ("evaluation", "silence_pairs", i), ("silence_pairs", i)
        self.at(native, legacy)
        if not isinstance(spec, dict):
            return spec
        kept = self.split(spec, legacy, _SILENCE_KEYS, "a silence pair")
        self._gap(spec, kept, native, legacy)
        if "join" in kept:
            kept["join"] = self._joins(
                kept["join"], legacy + ("join",), ("cause", "effect", "trigger", "response"), "a silence join"
            )
        # search_space: id-template strings (native) and selector mappings (original) side by side;
        # search_space_selectors: the original's other name for the selector list.
        ids: list[Any] = []
        selectors: list[Any] = []
        for key in ("search_space", "search_space_selectors"):
            value = kept.pop(key, None)
            if value is None:
                continue
            if not isinstance(value, list):
                value = [value]  # the original accepted one selector as a mapping
            for j, entry in enumerate(value):
                src = legacy + (key, j)
                if key == "search_space" and not isinstance(entry, dict):
                    self.at(native + ("search_space", len(ids)), src)
                    ids.append(entry)
                else:
                    self.at(native + ("search_space_selectors", len(selectors)), src)
                    selectors.append(self.selector(entry, src))
        if ids:
            kept["search_space"] = ids
        if selectors:
            kept["search_space_selectors"] = selectors
        return {k: v for k, v in kept.items() if v is not None}

    def selector(self, entry: Any, loc: tuple) -> Any:
        if not isinstance(entry, dict):
            return entry
        kept = self.split(entry, loc, _SELECTOR_KEYS, "a search-space selector")
        kept = {k: v for k, v in kept.items() if v is not None}
        if "id_template" in kept and "query_template" in kept:
            kept.pop("query_template")  # the original rendered the id template and never ran the query
            self.note(
                loc + ("query_template",),
                f"'{dotted(loc + ('query_template',))}' is not honoured: "
                "the selector also has an id_template, which the original used instead",
            )
        kept.setdefault("limit", ORIGINAL_SELECTOR_LIMIT)
        if "query_template" in kept:
            kept["match"] = "phrase"  # the original searched the rendered query as one phrase
        return kept

    def adapters(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k in _ADAPTER_KEYS:
            if self.data.get(k) is not None:
                out[k] = self.data[k]
                self.at(("adapters", k), (k,))
        return out


def legacy_to_native(data: dict[str, Any], default_name: str) -> LegacyConfig:
    """Map an original GroundEval ``config.yaml`` (parsed) onto the native manifest layout."""
    return _Mapper(data).run(default_name)
