"""What the two bundled worlds' generators share: name and place pools, a seeded picker, and the
writers (JSONL tables sorted by key, the manifest, tasks sorted by id).

Nothing here reads the clock or the global ``random``: every draw comes from the
``random.Random`` a generator passes in, so the same seed writes the same bytes.
"""

from __future__ import annotations

import json
import random
import shutil
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Callable, Iterable

import yaml

FIRST_NAMES = (
    "Aaliyah Abdul Ada Adrián Aiko Alejandro Alina Amara Amir Ana Anders Andrea Anjali Annika Arjun Astrid Ayesha "
    "Beatriz Benedikt Bianca Bilal Bo Bronwyn Caleb Camille Carmen Chidi Chloé Chen Cormac Dalia Damien Dana Darius "
    "Deepa Diego Dmitri Ebony Eduardo Eilidh Elif Elena Emeka Emil Esther Fatima Felix Fernanda Finn Gabriel Gemma "
    "Giulia Grace Gustavo Hana Hannah Hassan Héctor Ifeoma Ilse Imani Ines Isaac Ivan Jada Jamal Javier Jin Joanna "
    "Jonas Jorge Josephine Julian Kai Kamala Karim Katarzyna Keanu Kenji Kiera Lars Layla Leon Liam Lina Lucía Luka "
    "Mae Magnus Malik Mariana Marcus Mateo Maya Mehmet Mei Mika Miriam Nadia Naomi Nikhil Nina Noah Nour Oksana Olu "
    "Omar Oren Paloma Pavel Priya Quentin Rafael Rania Ravi Rebecca Renata Rohan Rosa Ruth Sakura Samir Sana Santiago "
    "Saoirse Sebastián Selin Seo-yeon Shira Siddharth Simone Sofia Soren Tamar Tariq Teodora Thabo Tomás Uma Valentina "
    "Vikram Wanjiru Wei Xavier Yara Yusuf Zainab Zara Zeynep Zoë"
).split()

LAST_NAMES = (
    "Abara Abbott Acheampong Adeyemi Ahmed Alvarez Andersen Arslan Bauer Becker Bergström Bianchi Blackwood Bose "
    "Brennan Carvalho Castillo Chowdhury Clarke Coleman Costa Dalton Delgado Dimitrov Dubois Dunn Eriksen "
    "Esposito Farouk Fernandes Fischer Fitzgerald Flores Fontaine Fujita Gallagher García Ghosh Goldberg Gomez "
    "Gonzaga Greene Gupta Haddad Halvorsen Hartmann Hayes Herrera Hoffman Horvath Ibrahim Ivanova Jensen Jovanović "
    "Kapoor Kaur Keller Kim Kowalski Kruger Kumar Lambert Larsen Laurent Lee Lindqvist Lopez Lund MacLeod Mahlaba "
    "Marino Martins Mbeki McCarthy Mehta Mendes Meyer Moreau Morales Murphy Nakamura Navarro Ndlovu Nguyen Nielsen "
    "Novak Nowak Obi Okafor Oliveira O'Brien Ortega Osei Park Patel Pereira Petrov Quinn Rahman Ramos Reyes Richter "
    "Rossi Sato Schmidt Schneider Sharma Silva Singh Sokolova Suzuki Takahashi Tanaka Tran Torres Vargas Varga Vogel "
    "Wagner Walsh Watanabe Weber Whitfield Wójcik Yamamoto Yilmaz Zhang Zhou Zimmermann"
).split()

# city, region, postal prefix (3 digits), phone area codes
CITIES = (
    ("Portland", "OR", "972", ("503", "971")),
    ("Seattle", "WA", "981", ("206",)),
    ("Tacoma", "WA", "984", ("253",)),
    ("Sacramento", "CA", "958", ("916",)),
    ("Oakland", "CA", "946", ("510",)),
    ("San Diego", "CA", "921", ("619", "858")),
    ("Denver", "CO", "802", ("303", "720")),
    ("Boulder", "CO", "803", ("303",)),
    ("Austin", "TX", "787", ("512", "737")),
    ("Houston", "TX", "770", ("713", "832")),
    ("Chicago", "IL", "606", ("312", "773")),
    ("Madison", "WI", "537", ("608",)),
    ("Minneapolis", "MN", "554", ("612",)),
    ("Columbus", "OH", "432", ("614",)),
    ("Pittsburgh", "PA", "152", ("412",)),
    ("Philadelphia", "PA", "191", ("215", "267")),
    ("Brooklyn", "NY", "112", ("718", "347")),
    ("Albany", "NY", "122", ("518",)),
    ("Boston", "MA", "021", ("617", "857")),
    ("Providence", "RI", "029", ("401",)),
    ("Burlington", "VT", "054", ("802",)),
    ("Richmond", "VA", "232", ("804",)),
    ("Raleigh", "NC", "276", ("919", "984")),
    ("Atlanta", "GA", "303", ("404", "678")),
    ("Nashville", "TN", "372", ("615",)),
    ("Tampa", "FL", "336", ("813",)),
    ("Phoenix", "AZ", "850", ("602", "480")),
    ("Tucson", "AZ", "857", ("520",)),
    ("Salt Lake City", "UT", "841", ("801", "385")),
    ("Albuquerque", "NM", "871", ("505",)),
    ("Kansas City", "MO", "641", ("816",)),
    ("New Orleans", "LA", "701", ("504",)),
)

STREET_NAMES = (
    "Alder Ash Aspen Bayview Birch Bluebell Briar Brookside Cedar Chestnut Clover Cobblestone Copper Creekside "
    "Cypress Dogwood Elm Fairview Fern Foxglove Garnet Glenwood Grant Harbor Hawthorn Hazel Heron Highland Hillcrest "
    "Holly Juniper Lake Laurel Linden Magnolia Maple Meadow Mill Mission Oak Orchard Park Pine Prospect Quarry Ridge "
    "River Rosewood Sequoia Spruce Summit Sycamore Tamarack Union Valley Walnut Willow Woodland"
).split()
STREET_KINDS = ("St", "Ave", "Rd", "Ln", "Dr", "Ct", "Way", "Pl", "Blvd", "Terrace")


def pick(rng: random.Random, seq: Iterable[Any]) -> Any:
    """One element of ``seq`` (sorted first when it is a set, so the draw never depends on hashing)."""
    items = sorted(seq) if isinstance(seq, (set, frozenset)) else list(seq)
    return items[rng.randrange(len(items))]


def street(rng: random.Random) -> str:
    number = rng.choice((rng.randint(2, 98), rng.randint(100, 999), rng.randint(1000, 9899)))
    line = f"{number} {rng.choice(STREET_NAMES)} {rng.choice(STREET_KINDS)}"
    if rng.random() < 0.18:
        line += rng.choice((f" Apt {rng.randint(1, 40)}", f" Unit {rng.randint(1, 12)}{rng.choice('ABCD')}"))
    return line


def place(rng: random.Random) -> dict[str, str]:
    city, region, prefix, _codes = rng.choice(CITIES)
    return {"street": street(rng), "city": city, "region": region, "postal_code": f"{prefix}{rng.randint(1, 99):02d}"}


def phone_for(rng: random.Random, city: str) -> str:
    codes = next(c[3] for c in CITIES if c[0] == city)
    return f"+1-{rng.choice(codes)}-{rng.randint(201, 989)}-{rng.randint(0, 9999):04d}"


def day(d: date) -> str:
    return d.isoformat()


def plus(d: date, days: int) -> date:
    return d + timedelta(days=days)


def unique_ids(rng: random.Random, prefix: str, n: int, lo: int, hi: int) -> list[str]:
    """``n`` distinct ids ``prefix + number`` with numbers drawn from [lo, hi], in draw order."""
    return [f"{prefix}{x}" for x in rng.sample(range(lo, hi + 1), n)]


def money(x: float) -> float:
    return round(x + 1e-9, 2)


def fmt_money(x: float) -> str:
    return f"{x:.2f}"


# --------------------------------------------------------------------------- tasks


def task(
    id: str,
    description: str,
    tags: list[str],
    *,
    persona: str,
    opening: str,
    facts: dict[str, Any],
    gold: list[tuple[Any, ...]],
    aliases: dict[str, list[str]] | None = None,
    confirms: list[str] = (),  # type: ignore[assignment]
    declines: list[str] = (),  # type: ignore[assignment]
    ordered: list[tuple[str, str]] = (),  # type: ignore[assignment]
    outputs: list[str] = (),  # type: ignore[assignment]
    forbidden: list[str] = (),  # type: ignore[assignment]
    goal: str | None = None,
) -> dict[str, Any]:
    """One line of ``tasks.jsonl`` in the world spec's shape."""
    user: dict[str, Any] = {"persona": persona, "opening": opening}
    if goal:
        user["goal"] = goal
    user["facts"] = facts
    user["fact_aliases"] = {k: v for k, v in sorted((aliases or {}).items()) if k in facts}
    user["confirms"] = sorted(set(confirms))
    user["declines"] = sorted(set(declines))
    return {
        "id": id,
        "description": description,
        "tags": sorted(set(tags)),
        "user": user,
        "gold_actions": [_action(*g) for g in gold],
        "ordered": [list(p) for p in ordered],
        "required_outputs": list(outputs),
        "forbidden_tools": sorted(set(forbidden)),
    }


def _action(tool: str, arguments: dict[str, Any], expect_error: bool = False) -> dict[str, Any]:
    """A gold action; ``expect_error``: a read the right agent makes and that must fail (a
    verification with the wrong details)."""
    out: dict[str, Any] = {"tool": tool, "arguments": arguments}
    if expect_error:
        out["expect_error"] = True
    return out


class Picker:
    """Draws task subjects from candidate pools without reusing one (a customer or an employee
    is the subject of at most one task, so tasks never share the rows they change)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def take(self, pool: list[Any], who: Callable[[Any], str | list[str]], what: str) -> Any:
        def people(x: Any) -> list[str]:
            w = who(x)
            return [w] if isinstance(w, str) else list(w)

        free = [x for x in pool if not any(p in self.used for p in people(x))]
        if not free:
            raise SystemExit(f"world generator: no candidate left for {what} (pool of {len(pool)})")
        x = free[self.rng.randrange(len(free))]
        self.used.update(people(x))
        return x

    def phrase(self, options: tuple[str, ...], key: str | None = None) -> str:
        """One of ``options``: each place (``key``, default the options themselves) uses every
        option once, in a seeded order, before any again — so tasks of one kind do not all open
        with the same words. Options built with f-strings need a ``key``."""
        if not hasattr(self, "_cycles"):
            self._cycles: dict[Any, list[int]] = {}
        k = key if key is not None else options
        left = self._cycles.get(k)
        if not left:
            left = list(range(len(options)))
            self.rng.shuffle(left)
            self._cycles[k] = left
        return options[left.pop()]


# --------------------------------------------------------------------------- writing


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def write_world(
    folder: Path,
    manifest: dict[str, Any],
    policy: str,
    tables: dict[str, list[dict[str, Any]]],
    tasks: list[dict[str, Any]],
    extra_files: dict[str, str] | None = None,
) -> None:
    """Write a world folder from scratch: tables sorted by their declared key, tasks by id."""
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "state").mkdir(parents=True)
    for name, rows in tables.items():
        keys = manifest["tables"][name]["key"]
        cols = sorted({c for r in rows for c in r})
        full = [{c: r.get(c) for c in cols} for r in rows]
        full.sort(key=lambda r: tuple(r[k] for k in keys))
        seen = [tuple(r[k] for k in keys) for r in full]
        if len(set(seen)) != len(seen):
            raise SystemExit(f"world generator: duplicate key in table {name}")
        (folder / manifest["tables"][name]["source"]).write_text(_jsonl(full), encoding="utf-8")
    ids = [t["id"] for t in tasks]
    if len(set(ids)) != len(ids):
        raise SystemExit("world generator: duplicate task id")
    (folder / manifest["tasks"]).write_text(_jsonl(sorted(tasks, key=lambda t: t["id"])), encoding="utf-8")
    (folder / manifest["policy"]).write_text(policy, encoding="utf-8")
    text = yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True, width=110)
    (folder / "world.yaml").write_text(text, encoding="utf-8")
    for name, body in sorted((extra_files or {}).items()):
        (folder / name).write_text(body, encoding="utf-8")


def readme(intro: str, manifest: dict[str, Any], tables: dict[str, list[dict[str, Any]]], tasks: list[dict]) -> str:
    """The world's README: the intro, its tables, tools and tasks by tag, and how to run it."""
    name = manifest["name"]
    lines = [f"# {name}: {manifest['description']}", "", intro.strip(), "", "## State", ""]
    lines += ["| table | rows | key |", "|---|---:|---|"]
    for t, rows in tables.items():
        lines.append(f"| {t} | {len(rows)} | {', '.join(manifest['tables'][t]['key'])} |")
    lines += ["", "## Tools", "", "| tool | kind | rule |", "|---|---|---|"]
    forbidden = set(manifest["rules"].get("forbidden_tools", []))
    for tool, spec in manifest["tools"].items():
        rule = "forbidden" if tool in forbidden else "confirm first" if tool in manifest["confirm_before"] else ""
        impl = "python" if "python" in spec else "sql"
        lines.append(f"| `{tool}` | {spec['kind']} ({impl}) | {rule} |")
    tags = sorted({tag for t in tasks for tag in t["tags"]})
    lines += ["", f"## Tasks ({len(tasks)})", "", "| tag | tasks |", "|---|---:|"]
    lines += [f"| {tag} | {sum(tag in t['tags'] for t in tasks)} |" for tag in tags]
    lines += [
        "",
        "Tags: `confirmation` (a write the user must confirm, or a confirmation the user declines), "
        "`precondition` (verify / look up before writing), `multi_step` (two or more writes), `ordered` "
        "(pairs of calls whose order the task checks), `refusal` (the user asks for what the policy "
        "forbids: refuse and change nothing of it), `no_change` (the right end state is the initial one), "
        "`required_output` (values the agent must tell the user).",
        "",
        "## Run",
        "",
        "```",
        f"groundeval run {name} --agent gold --out runs/{name}-gold",
        f"groundeval run {name} --agent skip-confirm --out runs/{name}-skip-confirm",
        "```",
        "",
        "Generated by `python domain_packs/_build/build_worlds.py` (seeded, no clock): edit the generator, "
        "not these files.",
        "",
    ]
    return "\n".join(lines)
