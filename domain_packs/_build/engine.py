"""A small deterministic engine that turns a domain description into a pack.

A domain is a workflow (ordered steps, each an event type that creates or touches
an artifact), a list of cases (one run of the workflow each, some with steps
missing), a cast of actors with role windows, and a few standalone events (policy
docs, meetings, direct messages, HR files). Cases overlap in time, so cause-type
and effect-type events of *different* cases sit next to each other: those pairs fail
the join and become Counterfactual negatives. Dropped steps become Silence absences.

The engine checks its own output before writing (every actor declared and holding a
role when acting, responses strictly after triggers and inside the gap, every
referenced artifact written), so a pack that builds is a pack the verifier accepts.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import yaml

UTC = timezone.utc
_FIELD = re.compile(r"\{([a-z_.]+)\}")


@dataclass
class Step:
    """One workflow step of a case: an event, and the artifact it writes or touches."""

    key: str
    type: str
    role: str | list[str]
    after: str | None = None
    hours: float = 4.0
    subsystem: str | None = None  # None: the step only references earlier artifacts
    art: str | None = None  # artifact id template, e.g. "JIRA-{case_no}"
    title: str = ""
    body: str = ""
    refs: list[str] = field(default_factory=list)  # earlier steps whose artifacts the event references
    restricted: str | None = None  # "actors": only the acting actors; "role:<name>": that role
    n_actors: int = 1
    with_external: bool = False  # an external actor (customer, counterparty) takes part
    facts: dict[str, Any] = field(default_factory=dict)
    requires: list[str] = field(default_factory=list)  # dropped when any of these is dropped
    join_actors: list[str] = field(default_factory=list)  # earlier steps whose first actor also takes part
    with_bot: bool = False  # the domain's system actor (a bot) takes part


@dataclass
class Case:
    no: str
    start_hour: float  # hours after the pack start
    subject: dict[str, str]
    drop: list[str] = field(default_factory=list)


@dataclass
class Extra:
    """A standalone event with (optionally) its own artifact."""

    id: str
    type: str
    at_hour: float
    actors: list[str]
    subsystem: str | None = None
    art: str | None = None
    title: str = ""
    body: str = ""
    visibility: dict[str, list[str]] | None = None
    refs: list[str] = field(default_factory=list)  # artifact ids referenced by the event
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class Domain:
    name: str
    title: str
    description: str
    story: str
    tracks: dict[str, str]
    start: datetime
    case_key: str  # facts field naming the case, e.g. "incident_id"
    case_prefix: str  # e.g. "INC-"
    roles: dict[str, dict[str, Any]]
    actors: dict[str, Any]  # manifest actor specs (shorthand allowed)
    steps: list[Step]
    cases: list[Case]
    causal: list[dict[str, Any]]  # {name, cause, effect, gap, aliases, premise, outcome, description}
    silence: list[dict[str, Any]]  # {name, trigger, response, gap, selectors, description}
    extras: list[Extra] = field(default_factory=list)
    restrictions: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    perspective_actors: list[str] = field(default_factory=list)
    seed: int = 11
    timezone: str = "UTC"
    display: dict[str, str] = field(default_factory=dict)


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _windows(spec: Any) -> list[dict[str, Any]]:
    if isinstance(spec, str):
        return [{"role": spec}]
    if isinstance(spec, list):
        return spec
    if "roles" in spec:
        return spec["roles"]
    return [spec]


def _parse(t: Any) -> datetime | None:
    if t is None:
        return None
    return datetime.fromisoformat(str(t).replace("Z", "+00:00"))


def roles_at(actor_spec: Any, ts: datetime) -> list[str]:
    out = []
    for w in _windows(actor_spec):
        since, until = _parse(w.get("since")), _parse(w.get("until"))
        if (since is None or since <= ts) and (until is None or ts < until):
            out.append(w["role"])
    return out


def fill(template: str, values: dict[str, Any]) -> str:
    def sub(m: re.Match) -> str:
        key = m.group(1)
        if key not in values:
            raise KeyError(f"template field {key!r} unknown in {template!r}")
        return str(values[key])

    return _FIELD.sub(sub, template)


class PackBuilder:
    """Builds events and artifacts of one domain, then checks and writes them."""

    def __init__(self, domain: Domain):
        self.d = domain
        self.rng = random.Random(domain.seed)
        self.events: list[dict[str, Any]] = []
        self.artifacts: dict[str, dict[str, Any]] = {}
        self.case_events: dict[str, dict[str, dict[str, Any]]] = {}

    # ------------------------------------------------------------------ cast

    def _role_pool(self, roles: list[str], ts: datetime) -> list[str]:
        return sorted(
            a
            for a, spec in self.d.actors.items()
            if not (isinstance(spec, dict) and spec.get("system")) and any(r in roles for r in roles_at(spec, ts))
        )

    def _pick(self, roles: list[str], ts: datetime, salt: int, n: int) -> list[str]:
        pool = self._role_pool(roles, ts)
        if len(pool) < n:
            raise ValueError(f"{self.d.name}: no {n} actor(s) holding {roles} at {iso(ts)}")
        start = salt % len(pool)
        return [pool[(start + i) % len(pool)] for i in range(n)]

    def _bot(self) -> str:
        return min(a for a, spec in self.d.actors.items() if isinstance(spec, dict) and spec.get("system"))

    def _externals(self, ts: datetime) -> list[str]:
        ext_roles = [r for r, v in self.d.roles.items() if v.get("external")]
        return self._role_pool(ext_roles, ts)

    # ------------------------------------------------------------------ build

    def build(self) -> None:
        d = self.d
        for ci, case in enumerate(d.cases):
            self._build_case(ci, case)
        for ex in d.extras:
            self._build_extra(ex)
        self.events.sort(key=lambda e: (e["timestamp"], e["id"]))

    def _dropped_steps(self, case: Case) -> set[str]:
        """The case's dropped steps and every step that requires one (in step order, so a drop
        carries down the chain); apart from :meth:`_build_case` to keep it short."""
        dropped = set(case.drop)
        for step in self.d.steps:
            if any(r in dropped for r in step.requires):
                dropped.add(step.key)
        return dropped

    def _build_case(self, ci: int, case: Case) -> None:
        d = self.d
        case_id = f"{d.case_prefix}{case.no}"
        values: dict[str, Any] = {"case_no": case.no, "case_id": case_id, **case.subject}
        dropped = self._dropped_steps(case)
        times: dict[str, datetime] = {}
        arts: dict[str, str] = {}
        actors_of: dict[str, list[str]] = {}
        evs: dict[str, dict[str, Any]] = {}
        t0 = d.start + timedelta(hours=case.start_hour)
        for si, step in enumerate(d.steps):
            base = t0 if step.after is None else times[step.after]
            jitter = 1.0 + self.rng.uniform(-0.2, 0.2)
            ts = base + timedelta(minutes=round(step.hours * 60 * jitter)) if step.after else base
            times[step.key] = ts
            roles = [step.role] if isinstance(step.role, str) else list(step.role)
            actors = self._pick(roles, ts, salt=ci * 7 + si, n=step.n_actors)
            for j in step.join_actors:
                if actors_of[j][0] not in actors:
                    actors.append(actors_of[j][0])
            actors_of[step.key] = actors
            values[f"actor.{step.key}"] = actors[0]
            values.setdefault("actor", actors[0])
            if step.art:
                arts[step.key] = fill(step.art, values)
                values[f"ref.{step.key}"] = arts[step.key]
            if step.key in dropped:
                continue
            ev_actors = list(actors)
            if step.with_bot:
                ev_actors.insert(0, self._bot())
            if step.with_external:
                ext = self._externals(ts)
                ev_actors.append(ext[ci % len(ext)])
            values["actor"] = actors[0]
            values["actors"] = " and ".join(actors)
            art_ids: dict[str, Any] = {}
            if step.subsystem and step.art:
                aid = arts[step.key]
                rec: dict[str, Any] = {
                    "id": aid,
                    "subsystem": step.subsystem,
                    "timestamp": iso(ts + timedelta(minutes=2)),
                    "title": fill(step.title, values),
                    "actors": list(actors),
                    "body": fill(step.body, values),
                    "case": case_id,
                }
                if step.restricted == "actors":
                    rec["visibility"] = {"actors": sorted(actors)}
                elif step.restricted and step.restricted.startswith("role:"):
                    rec["visibility"] = {"roles": step.restricted[5:].split(",")}
                self._add_artifact(rec)
                art_ids[step.key] = aid
            elif step.art:
                art_ids[step.key] = arts[step.key]
            for r in step.refs:
                if r in arts and r not in dropped:
                    art_ids[r] = arts[r]
            facts = {
                d.case_key: case_id,
                "case_no": case.no,
                **{k: fill(str(v), values) for k, v in step.facts.items()},
            }
            ev = {
                "id": f"{case_id.lower()}-{step.key}",
                "type": step.type,
                "timestamp": iso(ts),
                "actors": ev_actors,
                "artifact_ids": art_ids,
                "facts": facts,
            }
            self.events.append(ev)
            evs[step.key] = ev
        self.case_events[case_id] = evs

    def _build_extra(self, ex: Extra) -> None:
        ts = self.d.start + timedelta(hours=ex.at_hour)
        art_ids: dict[str, Any] = {}
        if ex.subsystem and ex.art:
            rec: dict[str, Any] = {
                "id": ex.art,
                "subsystem": ex.subsystem,
                "timestamp": iso(ts + timedelta(minutes=1)),
                "title": ex.title,
                "actors": sorted(a for a in ex.actors if a in self.d.actors),
                "body": ex.body,
            }
            if ex.visibility:
                rec["visibility"] = ex.visibility
            self._add_artifact(rec)
            art_ids["doc"] = ex.art
        if ex.refs:
            art_ids["refs"] = list(ex.refs)
        self.events.append(
            {
                "id": ex.id,
                "type": ex.type,
                "timestamp": iso(ts),
                "actors": list(ex.actors),
                "artifact_ids": art_ids,
                "facts": dict(ex.facts),
            }
        )

    def _add_artifact(self, rec: dict[str, Any]) -> None:
        if rec["id"] in self.artifacts:
            raise ValueError(f"{self.d.name}: duplicate artifact id {rec['id']}")
        self.artifacts[rec["id"]] = rec

    # ------------------------------------------------------------------ checks

    def check(self) -> list[str]:
        """Problems a verifier would report; the build refuses to write when any exist."""
        out = []
        ids = [e["id"] for e in self.events]
        if len(ids) != len(set(ids)):
            out.append("duplicate event ids")
        out += self._check_events()
        out += self._check_grants()
        by_case: dict[str, dict[str, dict]] = {}
        for cid, evs in self.case_events.items():
            by_case[cid] = {e["type"]: e for e in evs.values()}
        out += self._check_silence(by_case)
        out += self._check_causal_gaps(by_case)
        return out

    def _check_events(self) -> list[str]:
        """Each event's actors are declared and hold a role then; its artifacts exist by then."""
        d, out = self.d, []
        for e in self.events:
            ts = _parse(e["timestamp"])
            for a in e["actors"]:
                if a not in d.actors:
                    out.append(f"{e['id']}: undeclared actor {a}")
                elif not roles_at(d.actors[a], ts):
                    out.append(f"{e['id']}: actor {a} holds no role at {e['timestamp']}")
            for v in e["artifact_ids"].values():
                for aid in v if isinstance(v, list) else [v]:
                    if aid not in self.artifacts:
                        out.append(f"{e['id']}: references unknown artifact {aid}")
                    elif _parse(self.artifacts[aid]["timestamp"]) > ts + timedelta(minutes=5):
                        out.append(f"{e['id']}: references {aid} before it exists")
        return out

    def _check_grants(self) -> list[str]:
        """Every role grants something, every artifact's subsystem is granted, and every causal
        spec's event types occur."""
        d, out = self.d, []
        types = {e["type"] for e in self.events}
        for role, spec in d.roles.items():
            if not spec.get("subsystems") and not spec.get("external"):
                out.append(f"role {role} has no subsystems")
        granted = {g for spec in d.roles.values() for g in spec.get("subsystems", [])}
        for aid, a in self.artifacts.items():
            if a["subsystem"] not in granted:
                out.append(f"artifact {aid}: subsystem {a['subsystem']} granted to no role")
        for spec in d.causal:
            for t in (spec["cause"], spec["effect"]):
                if t not in types:
                    out.append(f"causal {spec['name']}: event type {t} never occurs")
        return out

    def _check_silence(self, by_case: dict[str, dict[str, dict]]) -> list[str]:
        """Each silence spec: responses within the gap, and at least two cases with and two
        without a response (else the pack cannot ask about it)."""
        out = []
        for spec in self.d.silence:
            present = absent = 0
            for cid, evs in by_case.items():
                trig, resp = evs.get(spec["trigger"]), evs.get(spec["response"])
                if trig is None:
                    continue
                if resp is None:
                    absent += 1
                    continue
                gap = _parse(resp["timestamp"]) - _parse(trig["timestamp"])
                if not timedelta(0) < gap <= timedelta(days=spec["gap"]):
                    out.append(f"silence {spec['name']} {cid}: response {gap} after trigger (gap {spec['gap']}d)")
                present += 1
            if present < 2 or absent < 2:
                out.append(f"silence {spec['name']}: {present} present / {absent} absent (need >= 2 each)")
        return out

    def _check_causal_gaps(self, by_case: dict[str, dict[str, dict]]) -> list[str]:
        """Each causal spec: effects within the gap after their cause, in at least two cases."""
        out = []
        for spec in self.d.causal:
            n = 0
            for cid, evs in by_case.items():
                c, e = evs.get(spec["cause"]), evs.get(spec["effect"])
                if c and e:
                    gap = _parse(e["timestamp"]) - _parse(c["timestamp"])
                    if not timedelta(0) < gap <= timedelta(days=spec["gap"]):
                        out.append(f"causal {spec['name']} {cid}: effect {gap} after cause")
                    n += 1
            if n < 2:
                out.append(f"causal {spec['name']}: only {n} linked pairs")
        return out

    # ------------------------------------------------------------------ output

    def manifest(self) -> dict[str, Any]:
        d = self.d
        case_path = f"facts.{d.case_key}"
        roles = {}
        for r, spec in d.roles.items():
            out = {
                k: v
                for k, v in spec.items()
                if k in ("subsystems", "broadcast_event_types", "external", "description")
                and v not in (None, [], False)
            }
            if spec.get("external") and "subsystems" not in out:
                out["subsystems"] = []
            roles[r] = out
        causal = []
        for s in d.causal:
            causal.append(
                {
                    k: v
                    for k, v in {
                        "name": s["name"],
                        "description": s.get("description"),
                        "cause_event_type": s["cause"],
                        "effect_event_type": s["effect"],
                        "max_gap_days": s["gap"],
                        "join": [{"cause": case_path, "effect": case_path}],
                        "mechanism_aliases": s.get("aliases", []),
                        "premise_template": s.get("premise"),
                        "outcome_template": s.get("outcome"),
                    }.items()
                    if v is not None
                }
            )
        silence = []
        for s in d.silence:
            silence.append(
                {
                    k: v
                    for k, v in {
                        "name": s["name"],
                        "description": s.get("description"),
                        "trigger_event_type": s["trigger"],
                        "response_event_type": s["response"],
                        "max_gap_days": s["gap"],
                        "join": [{"trigger": case_path, "response": case_path}],
                        "search_space_subsystems": sorted({sel["subsystem"] for sel in s["selectors"]}),
                        "search_space_selectors": s["selectors"],
                    }.items()
                    if v is not None
                }
            )
        return {
            "name": d.name,
            "description": d.description,
            "timezone": d.timezone,
            "sources": {"events": "events.jsonl", "artifacts": "artifacts"},
            "access": {"actors": d.actors, "roles": roles, "restrictions": d.restrictions},
            "evaluation": {
                "causal_links": causal,
                "silence_pairs": silence,
                "perspective": {"positive": 0.5, "negative_permission": 0.25, "negative_temporal": 0.25},
                "perspective_actors": d.perspective_actors,
                "max_per_actor": 5,
                "max_per_event_type": 5,
                "seed": d.seed,
            },
        }

    def write(self, out: Path) -> None:
        problems = self.check()
        if problems:
            raise SystemExit(f"{self.d.name}: refusing to write:\n  " + "\n  ".join(problems))
        if out.exists():
            for child in ("artifacts", "events.jsonl", "groundeval.yaml", "README.md"):
                p = out / child
                if p.is_dir():
                    shutil.rmtree(p)
                elif p.exists():
                    p.unlink()
        out.mkdir(parents=True, exist_ok=True)
        header = (
            f"# groundeval pack manifest: {self.d.name}.\n"
            "# Generated by domain_packs/_build/build_packs.py; edit the domain there and rebuild.\n"
            "# See README.md for the scenario and domain_packs/tiny/groundeval.yaml for every key explained.\n"
        )
        body = yaml.safe_dump(self.manifest(), sort_keys=False, default_flow_style=None, allow_unicode=True, width=100)
        (out / "groundeval.yaml").write_text(header + body, encoding="utf-8")
        with open(out / "events.jsonl", "w", encoding="utf-8", newline="\n") as fh:
            for e in self.events:
                fh.write(json.dumps(e, ensure_ascii=False) + "\n")
        for aid, rec in sorted(self.artifacts.items()):
            folder = out / "artifacts" / rec["subsystem"]
            folder.mkdir(parents=True, exist_ok=True)
            body_rec = {k: v for k, v in rec.items() if k not in ("id", "subsystem")}
            (folder / f"{aid}.json").write_text(
                json.dumps(body_rec, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
        (out / "README.md").write_text(self.readme(), encoding="utf-8")

    def readme(self) -> str:
        d = self.d
        lines = [f"# {d.name}: {d.title}", "", d.story.strip(), "", "## What each track tests here", ""]
        for track in ("perspective", "counterfactual", "silence"):
            lines += [f"**{track.capitalize()}.** {d.tracks[track].strip()}", ""]
        lines += ["## Cast and access", "", "| actor | role history |", "|---|---|"]
        for a, spec in sorted(d.actors.items()):
            parts = []
            for w in _windows(spec):
                when = ""
                if w.get("since"):
                    when += f" from {w['since'][:10]}"
                if w.get("until"):
                    when += f" until {w['until'][:10]}"
                parts.append(w["role"] + when)
            sysflag = " (system)" if isinstance(spec, dict) and spec.get("system") else ""
            lines.append(f"| {a}{sysflag} | {'; '.join(parts)} |")
        lines += ["", "| role | subsystems | notes |", "|---|---|---|"]
        for r, spec in sorted(d.roles.items()):
            notes = []
            if spec.get("external"):
                notes.append("external, no access")
            if spec.get("broadcast_event_types"):
                notes.append("told about " + ", ".join(spec["broadcast_event_types"]))
            lines.append(f"| {r} | {', '.join(spec.get('subsystems', [])) or '-'} | {'; '.join(notes)} |")
        restricted = sorted(aid for aid, a in self.artifacts.items() if "visibility" in a) + sorted(d.restrictions)
        lines += [
            "",
            f"Restricted artifacts: {', '.join(restricted)}.",
            "",
            "## Workflow",
            "",
            "| step | event type | artifact | restricted |",
            "|---|---|---|---|",
        ]
        for s in d.steps:
            lines.append(
                f"| {s.key} | `{s.type}` | {s.subsystem or '(touches earlier artifacts)'} "
                f"{s.art or ''} | {s.restricted or ''} |"
            )
        lines += ["", "## Causal links", ""]
        for s in d.causal:
            lines.append(
                f"- `{s['name']}`: `{s['cause']}` → `{s['effect']}` within {s['gap']} days, "
                f"joined on `facts.{d.case_key}`. {s.get('description', '')}".rstrip()
            )
        lines += ["", "## Silence pairs", ""]
        for s in d.silence:
            lines.append(
                f"- `{s['name']}`: after `{s['trigger']}` expect `{s['response']}` within {s['gap']} days "
                f"(search {', '.join(sorted({x['subsystem'] for x in s['selectors']}))}). "
                f"{s.get('description', '')}".rstrip()
            )
        lines += ["", "## Cases", "", "| case | subject | missing steps |", "|---|---|---|"]
        for c in d.cases:
            subj = c.subject.get("subject", "")
            lines.append(f"| {d.case_prefix}{c.no} | {subj} | {', '.join(c.drop) or '-'} |")
        lines += [
            "",
            f"{len(self.events)} events, {len(self.artifacts)} artifacts. "
            "Rebuild with `python domain_packs/_build/build_packs.py`.",
            "",
        ]
        return "\n".join(lines)
