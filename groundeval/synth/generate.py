"""Write a deterministic synthetic organisation at any scale, streaming.

``write_org(out, events=N, seed=S)`` writes exactly N events. Workflow instances
(incidents, escalations, pull requests, CRM deals, departures, onboardings) and
single-event chatter (restricted DMs, meetings, page edits) are drawn from one
seeded ``random.Random``; each instance is written as soon as it is drawn, so memory
stays flat whatever N is. Events are grouped by instance, instances in start order.

Two formats: ``native`` (``groundeval.yaml`` + ``events.jsonl`` + ``artifacts.jsonl``)
and ``original`` (``config.yaml`` + ``events.jsonl`` + ``artifacts/<subsystem>/<id>.json``,
the layout of the original GroundEval loader).

Two styles share the writer, the formats, the blocks and the workers: ``default`` (this
module: ids in ``facts``, one instance per id) and ``paper`` (``paper.py``: the awkward
shapes of real exports — bookkeeping-only facts, identity only in ``artifact_ids``,
dense same-type events). A style is a :class:`Style`: its specs, its tail and a block
generator driven by :func:`drive`.
"""

from __future__ import annotations

import os
import random
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

import yaml

from ..errors import ContractError
from .engine import (
    START,
    Style,
    _below,
    _Cast,
    _Sink,
    cumulative,
    drive,
    iso_writer,
    pick_cumulative,
)
from .shape import (
    BOTS,
    CHATTER,
    CHATTER_WEIGHT,
    CUSTOMERS,
    ROLES,
    SERVICES,
    SUBSYSTEMS,
    WORKFLOWS,
    Workflow,
    actor_windows,
    perspective_actors,
)

FORMATS = ("native", "original")
STYLES = ("default", "paper")
_CHANGES = (
    "retry with backoff",
    "cache warm-up",
    "pagination",
    "timeouts",
    "feature flag cleanup",
    "schema migration",
    "logging",
    "dependency bump",
)
_BUFFER = 1 << 20


def _expected_events(wf: Workflow) -> float:
    """Mean number of events one instance writes (drops and their requirements)."""
    present: dict[str, float] = {}
    for s in wf.steps:
        p = 1.0 - s.drop
        for r in s.requires:
            p *= present[r]
        present[s.key] = p
    return sum(present.values())


def tail_hours() -> float:
    return max(wf.max_offset_hours(s.key) for wf in WORKFLOWS for s in wf.steps)


# ---------------------------------------------------------------------------- manifest


def evaluation_specs() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The 25 causal link specs and 19 silence pair specs, joined on each workflow's key."""
    causal, silence = [], []
    for wf in WORKFLOWS:
        path = f"facts.{wf.key_field}"
        for name, c, e, aliases in wf.causal:
            cs, es = wf.step_by_key[c], wf.step_by_key[e]
            causal.append(
                {
                    "name": name,
                    "cause_event_type": cs.type,
                    "effect_event_type": es.type,
                    "max_gap_days": wf.max_gap_days(c, e),
                    "join": [{"cause": path, "effect": path}],
                    "mechanism_aliases": list(aliases),
                    "premise_template": f"the {cs.type.replace('_', ' ')} for {{{path}}} had not happened",
                    "outcome_template": f"there would have been no {es.type.replace('_', ' ')}",
                }
            )
        for name, t, r, word in wf.silence:
            ts, rs = wf.step_by_key[t], wf.step_by_key[r]
            art = rs.art or wf.step_by_key[rs.touches].art
            sub = rs.subsystem or wf.step_by_key[rs.touches].subsystem
            silence.append(
                {
                    "name": name,
                    "trigger_event_type": ts.type,
                    "response_event_type": rs.type,
                    "max_gap_days": wf.max_gap_days(t, r),
                    "join": [{"trigger": path, "response": path}],
                    "search_space_subsystems": [sub],
                    # ids are predictable; a ranked query is added only for documents people write
                    # free-form (it costs a BM25 search per silence record when the graph is built)
                    "search_space_selectors": [{"subsystem": sub, "id_template": f"{art}-{{facts.seq}}"}]
                    + ([{"subsystem": sub, "query_template": f"{word} {{{path}}}"}] if word else []),
                }
            )
    return causal, silence


def _access(days: int) -> tuple[dict[str, Any], dict[str, Any]]:
    actors: dict[str, Any] = {}
    bots = {b for b, _ in BOTS}
    for name, windows in actor_windows(days).items():
        out = []
        for w in windows:
            ww: dict[str, Any] = {"role": w["role"]}
            for k in ("since", "until"):
                if k in w:
                    ww[k] = (START + timedelta(days=w[k])).strftime("%Y-%m-%dT%H:%M:%SZ")
            out.append(ww)
        if name in bots:
            actors[name] = {"role": out[0]["role"], "system": True}
        elif len(out) == 1 and len(out[0]) == 1:
            actors[name] = out[0]["role"]
        else:
            actors[name] = out
    return actors, {r: dict(v) for r, v in ROLES.items()}


def manifest_dict(*, events: int, seed: int, days: int, fmt: str, style: str = "default") -> dict[str, Any]:
    st = get_style(style)
    actors, roles = _access(days)
    causal, silence = st.specs(fmt)
    evaluation = {
        "causal_links": causal,
        "silence_pairs": silence,
        "perspective_actors": perspective_actors(actor_windows(days)),
        "seed": seed,
    }
    name = f"synth-{events}-s{seed}" if style == "default" else f"synth-{style}-{events}-s{seed}"
    description = (
        f"Synthetic organisation: {len(actors)} actors, {len(roles)} roles, {len(SUBSYSTEMS)} subsystems, "
        f"{days} days, {events} events (seed {seed})."
    )
    if style != "default":
        description = description[:-1] + f", {style} style: {st.summary}."
    if fmt == "original":
        return {
            "name": name,
            "description": description,
            "timezone": "UTC",
            "actors": actors,
            "roles": roles,
            **evaluation,
        }
    return {
        "name": name,
        "description": description,
        "timezone": "UTC",
        "sources": {"events": "events.jsonl", "artifacts": "artifacts.jsonl"},
        "access": {"actors": actors, "roles": roles},
        "evaluation": evaluation,
    }


# ---------------------------------------------------------------------------- styles


def get_style(name: str) -> Style:
    if name == "paper":
        from .paper import STYLE  # imports this module: loaded on demand

        return STYLE
    if name == "default":
        return DEFAULT_STYLE
    raise ValueError(f"unknown style {name!r}")


# ---------------------------------------------------------------------------- writing


BLOCK = 50_000  # events per independently seeded block; fixed so output never depends on worker count


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def _run_block(args: tuple[str, str, str, int, int, int, int, int]) -> tuple[str, str, int, dict[str, int]]:
    """Generate block ``b`` (its own seeded RNG and time slice); returns its JSONL text and counts."""
    out, style, fmt, seed, b, n_blocks, quota, days = args
    st = get_style(style)
    # the default style's seed string predates styles; other styles name themselves
    rng = random.Random(
        f"groundeval-synth:{seed}:{b}" if style == "default" else f"groundeval-synth:{style}:{seed}:{b}"
    )
    sink = st.make_sink(Path(out), fmt)
    counts = {name: 0 for name in st.flows} | {"chatter": 0}
    st.generate(rng, _Cast(days), sink, quota, days, counts, b, n_blocks)
    sink.finish()
    return _text(sink.events), _text(sink.artifacts), sink.n_artifacts, counts


def write_org(
    out_dir: str | Path,
    *,
    events: int = 22500,
    seed: int = 0,
    fmt: str = "native",
    days: int = 60,
    jobs: int | None = None,
    style: str = "default",
) -> dict[str, Any]:
    """Write a synthetic org of exactly ``events`` events into ``out_dir``; returns counts.

    The org is cut into blocks of :data:`BLOCK` events, each with its own seeded RNG
    and time slice, generated by ``jobs`` worker processes and written in block order:
    byte-identical for the same arguments whatever ``jobs``, the machine or
    ``PYTHONHASHSEED``; memory is bounded by a few blocks. ``style`` picks the shape of
    the org (:data:`STYLES`).
    """
    if style not in STYLES:
        raise ContractError.single(
            str(out_dir), f"unknown style {style!r}; expected one of {', '.join(STYLES)}", field="style"
        )
    st = get_style(style)
    if fmt not in FORMATS:
        raise ContractError.single(
            str(out_dir), f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}", field="format"
        )
    if events < 1:
        raise ContractError.single(str(out_dir), "events must be at least 1", field="events")
    tail_days = st.tail_hours() / 24.0
    if days < tail_days + 1:
        raise ContractError.single(
            str(out_dir), f"days must be at least {int(tail_days) + 2} (the longest workflow must fit)", field="days"
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("events.jsonl", "artifacts.jsonl", "groundeval.yaml", "config.yaml"):
        (out / stale).unlink(missing_ok=True)
    if (out / "artifacts").is_dir():
        shutil.rmtree(out / "artifacts")

    manifest = manifest_dict(events=events, seed=seed, days=days, fmt=fmt, style=style)
    name = "config.yaml" if fmt == "original" else "groundeval.yaml"
    header = (
        "# Synthetic organisation written by `groundeval synth` "
        f"(events={events}, seed={seed}, days={days}, format={fmt}"
        + (f", style={style}" if style != "default" else "")
        + ").\n"
    )
    (out / name).write_text(
        header + yaml.safe_dump(manifest, sort_keys=False, default_flow_style=None, width=110), encoding="utf-8"
    )

    n_blocks = -(-events // BLOCK)
    tasks = [(str(out), style, fmt, seed, b, n_blocks, min(BLOCK, events - b * BLOCK), days) for b in range(n_blocks)]
    jobs = max(1, min(jobs if jobs is not None else (os.cpu_count() or 1), n_blocks))
    counts = {name: 0 for name in st.flows} | {"chatter": 0}
    n_artifacts = 0
    ev_fh = open(out / "events.jsonl", "w", encoding="utf-8", newline="\n", buffering=_BUFFER)
    art_fh = (
        open(out / "artifacts.jsonl", "w", encoding="utf-8", newline="\n", buffering=_BUFFER)
        if fmt == "native"
        else None
    )
    pool = None
    try:
        if jobs > 1:
            import multiprocessing

            pool = multiprocessing.get_context("spawn").Pool(jobs)  # no fork: callers may hold DuckDB threads
            results = pool.imap(_run_block, tasks, chunksize=1)
        else:
            results = map(_run_block, tasks)
        for ev_text, art_text, n_art, c in results:
            ev_fh.write(ev_text)
            if art_fh is not None:
                art_fh.write(art_text)
            n_artifacts += n_art
            for k, v in c.items():
                counts[k] += v
    finally:
        if pool is not None:
            pool.terminate()
        ev_fh.close()
        if art_fh is not None:
            art_fh.close()
    return {
        "out": str(out),
        "style": style,
        "format": fmt,
        "events": events,
        "artifacts": n_artifacts,
        "instances": counts,
        "seed": seed,
        "days": days,
        "blocks": n_blocks,
    }


def _generate(
    rng: random.Random,
    cast: _Cast,
    w: _Sink,
    n_events: int,
    days: int,
    counts: dict[str, int],
    block: int = 0,
    n_blocks: int = 1,
) -> None:
    iso = iso_writer(days)
    wfs = list(WORKFLOWS)
    chat_cum = cumulative([p for _t, _s, _a, p in CHATTER])
    recent: list[str] = []  # a small ring of recent artifact ids that chatter refers to
    seq = {wf.name: block * 100_000 for wf in wfs}
    chat_seq = block * 1_000_000

    def instance(k: int, t0: float) -> None:
        wf = wfs[k]
        seq[wf.name] += 1
        counts[wf.name] += 1
        _instance(rng, cast, w, wf, seq[wf.name], t0, iso, recent)

    def chatter(t0: float, _remaining: int) -> None:
        nonlocal chat_seq
        chat_seq += 1
        counts["chatter"] += 1
        _chatter(rng, cast, w, chat_seq, t0, iso, recent, chat_cum)

    drive(
        rng,
        w,
        n_events,
        weights=[wf.weight for wf in wfs],
        chatter_weight=CHATTER_WEIGHT,
        mean_events=sum(wf.weight * _expected_events(wf) for wf in wfs) + CHATTER_WEIGHT,
        span_seconds=(days - tail_hours() / 24.0) * 86400.0,
        block=block,
        n_blocks=n_blocks,
        max_events=[len(wf.steps) for wf in wfs],
        instance=instance,
        chatter=chatter,
    )


def _instance(
    rng: random.Random,
    cast: _Cast,
    w: _Sink,
    wf: Workflow,
    n: int,
    t0: float,
    iso: Callable[[float], str],
    recent: list[str],
) -> None:
    seq = f"{n:05d}"
    key = f"{wf.prefix}{seq}"
    service = SERVICES[_below(rng, len(SERVICES))]
    customer = CUSTOMERS[_below(rng, len(CUSTOMERS))]
    values: dict[str, Any] = {
        "key": key,
        "seq": seq,
        "service": service,
        "customer": customer,
        "p99": 400 + _below(rng, 4000),
        "change": _CHANGES[_below(rng, len(_CHANGES))],
    }
    for s in wf.steps:
        if s.art:
            values[f"ref_{s.key}"] = f"{s.art}-{seq}"
    times: dict[str, float] = {}
    present: dict[str, bool] = {}
    ext_pool = cast.by_role["external"]
    eid_prefix = key.lower()
    for s in wf.steps:
        lo, hi = s.hours
        t = t0 if s.after is None else times[s.after] + (lo + (hi - lo) * rng.random()) * 3600.0
        t = float(int(t))
        times[s.key] = t
        alive = (s.drop == 0.0 or rng.random() >= s.drop) and all(present[r] for r in s.requires)
        present[s.key] = alive
        if not alive:
            continue
        actors = cast.pick(rng, s.role, t, s.n_actors)
        values["actor"] = actors[0]
        values["actors"] = " and ".join(actors)
        ev_actors = list(actors)
        if s.bot:
            ev_actors.insert(0, s.bot)
        if s.external:
            ev_actors.append(ext_pool[_below(rng, len(ext_pool))][0])
        art_ids: dict[str, Any] = {}
        if s.subsystem:
            aid = values[f"ref_{s.key}"]
            rec: dict[str, Any] = {
                "id": aid,
                "subsystem": s.subsystem,
                "timestamp": iso(t + 60.0),
                "title": s.title.format_map(values),
                "actors": actors,
                "body": s.body.format_map(values),
            }
            if s.restricted == "actors":
                rec["visibility"] = {"actors": sorted(actors)}
            elif s.restricted:
                rec["visibility"] = {"roles": s.restricted.split(":", 1)[1].split(",")}
            else:
                recent.append(aid)
                if len(recent) > 64:
                    del recent[0]
            w.artifact(rec)
            art_ids[s.key] = aid
        elif s.touches:
            art_ids[s.touches] = values[f"ref_{s.touches}"]
        for ref in s.refs:
            if present.get(ref) and ref not in art_ids:
                art_ids[ref] = values[f"ref_{ref}"]
        w.event(
            {
                "id": f"{eid_prefix}-{s.key}",
                "type": s.type,
                "timestamp": iso(t),
                "actors": ev_actors,
                "artifact_ids": art_ids,
                "facts": {wf.key_field: key, "seq": seq, "service": service, "customer": customer},
            }
        )


def _chatter(
    rng: random.Random,
    cast: _Cast,
    w: _Sink,
    n: int,
    t0: float,
    iso: Callable[[float], str],
    recent: list[str],
    chat_cum: list[float],
) -> None:
    etype, sub, prefix, _p = CHATTER[pick_cumulative(rng, chat_cum)]
    t = float(int(t0))
    roles = cast.internal
    about = recent[_below(rng, len(recent))] if recent else None
    aid = f"{prefix}-{n:07d}"
    if etype == "dm_sent":
        a = cast.pick(rng, roles[_below(rng, len(roles))], t)[0]
        b = a
        while b == a:
            b = cast.pick(rng, roles[_below(rng, len(roles))], t)[0]
        actors = [a, b]
        title = f"DM {a} / {b}"
        body = f"{a}: quick question about {about or 'the roadmap'}, keep this between us. {b}: sure."
        vis: dict[str, Any] | None = {"actors": sorted(actors)}
    elif etype == "meeting_held":
        actors = []
        for _ in range(3):
            x = cast.pick(rng, roles[_below(rng, len(roles))], t)[0]
            if x not in actors:
                actors.append(x)
        title = f"Transcript: sync {n:07d}"
        body = f"{', '.join(actors)} met; discussed {about or 'planning'} and staffing."
        vis = None
    else:
        actors = cast.pick(rng, ("engineer", "product", "sre")[_below(rng, 3)], t)
        title = f"Design notes {n:07d}"
        body = f"{actors[0]} updated the notes; see {about or 'the team page'}."
        vis = None
    rec: dict[str, Any] = {
        "id": aid,
        "subsystem": sub,
        "timestamp": iso(t + 30.0),
        "title": title,
        "actors": actors,
        "body": body,
    }
    if vis:
        rec["visibility"] = vis
    w.artifact(rec)
    art_ids: dict[str, Any] = {"doc": aid}
    w.event(
        {
            "id": f"chat-{n:07d}",
            "type": etype,
            "timestamp": iso(t),
            "actors": actors,
            "artifact_ids": art_ids,
            "facts": {"about": about} if about else {},
        }
    )


DEFAULT_STYLE = Style(
    name="default",
    flows=tuple(wf.name for wf in WORKFLOWS),
    tail_hours=tail_hours,
    specs=lambda _fmt: evaluation_specs(),
    generate=_generate,
    make_sink=_Sink,
)
