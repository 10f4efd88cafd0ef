"""Issue 13, item 6: the contract digest is canonical per record — key order (at every
level) and the spelling of a number never change it; content does."""

from __future__ import annotations

import json
import random
import shutil

from groundeval.store.store import Store, canonical_record


def _shuffle(value, rng):
    if isinstance(value, dict):
        items = [(k, _shuffle(v, rng)) for k, v in value.items()]
        rng.shuffle(items)
        return dict(items)
    if isinstance(value, list):
        return [_shuffle(v, rng) for v in value]
    return value


def _rewrite(pack, rng, indent=None):
    events = pack / "events.jsonl"
    lines = [json.loads(x) for x in events.read_text(encoding="utf-8").splitlines() if x.strip()]
    events.write_text(
        "".join(json.dumps(_shuffle(r, rng), indent=indent).replace("\n", " ") + "\n" for r in lines), encoding="utf-8"
    )
    for path in sorted((pack / "artifacts").rglob("*.json")):
        path.write_text(
            json.dumps(_shuffle(json.loads(path.read_text(encoding="utf-8")), rng), indent=indent), encoding="utf-8"
        )


def test_digest_ignores_key_order_inside_records(tiny_pack, tmp_path):
    base = Store.open(tiny_pack).digest
    for seed in range(3):
        pack = tmp_path / f"p{seed}"
        shutil.copytree(tiny_pack, pack)
        _rewrite(pack, random.Random(seed), indent=2 if seed else None)
        assert Store.open(pack).digest == base


def test_digest_normalises_numbers_but_sees_content(tiny_pack, tmp_path):
    pack = tmp_path / "p"
    shutil.copytree(tiny_pack, pack)
    events = pack / "events.jsonl"
    lines = events.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["facts"]["attempts"] = 3
    lines[0] = json.dumps(first)
    events.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with_int = Store.open(pack).digest
    events.write_text(
        "\n".join([lines[0].replace('"attempts": 3', '"attempts": 3.0')] + lines[1:]) + "\n", encoding="utf-8"
    )
    assert Store.open(pack).digest == with_int
    events.write_text(
        "\n".join([lines[0].replace('"attempts": 3', '"attempts": 3e0')] + lines[1:]) + "\n", encoding="utf-8"
    )
    assert Store.open(pack).digest == with_int
    events.write_text(
        "\n".join([lines[0].replace('"attempts": 3', '"attempts": 4')] + lines[1:]) + "\n", encoding="utf-8"
    )
    assert Store.open(pack).digest != with_int


def test_canonical_record():
    assert (
        canonical_record('{"b": [1.0, {"d": 2, "c": 1e2}], "a": "ü"}') == '{"a":"ü","b":[1,{"c":100,"d":2}]}'.encode()
    )
    assert canonical_record('{"id": "x", "subsystem": "s", "k": 0.5}', drop=("id", "subsystem")) == b'{"k":0.5}'
