"""Contract models: shorthands, round-trips, and the checked-in JSON Schemas."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from groundeval.contract import schemas
from groundeval.contract.models import ActorSpec, EvaluationConfig, Manifest, SilenceJoin, SearchSelector

REPO = Path(__file__).resolve().parents[2]

names = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
times = st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(timezone.utc))


@st.composite
def windows(draw):
    start = draw(st.none() | times)
    end = draw(st.none() | times)
    if start and end and end <= start:
        end = start + timedelta(days=1)
    return {"role": draw(names), "since": start, "until": end}


@st.composite
def manifests(draw):
    roles = draw(
        st.dictionaries(
            names,
            st.fixed_dictionaries(
                {
                    "subsystems": st.lists(
                        st.one_of(names, st.fixed_dictionaries({"name": names, "since": st.none() | times}))
                    ),
                    "broadcast_event_types": st.lists(names, max_size=2),
                    "external": st.booleans(),
                }
            ),
            max_size=3,
        )
    )
    actors = draw(st.dictionaries(names, st.one_of(names, st.lists(windows(), min_size=1, max_size=3)), max_size=4))
    links = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "name": names,
                    "cause_event_type": names,
                    "effect_event_type": names,
                    "max_gap_days": st.floats(0.1, 60),
                    "join": st.lists(st.fixed_dictionaries({"cause": names, "effect": names}), max_size=2),
                    "mechanism_aliases": st.lists(names, max_size=2),
                }
            ),
            max_size=3,
        )
    )
    pairs = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "trigger_event_type": names,
                    "response_event_type": names,
                    "join": st.lists(st.fixed_dictionaries({"trigger": names, "response": names}), max_size=2),
                    "search_space_selectors": st.lists(
                        st.fixed_dictionaries({"subsystem": names, "id_template": names}), max_size=2
                    ),
                }
            ),
            max_size=3,
        )
    )
    return {
        "name": draw(names),
        "timezone": draw(st.sampled_from(["UTC", "Europe/Paris"])),
        "access": {
            "actors": actors,
            "roles": roles,
            "restrictions": draw(
                st.dictionaries(names, st.fixed_dictionaries({"actors": st.lists(names, max_size=2)}), max_size=2)
            ),
        },
        "evaluation": {"causal_links": links, "silence_pairs": pairs, "seed": draw(st.integers(0, 2**31))},
    }


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(manifests())
def test_manifest_round_trips_through_json(data):
    model = Manifest.model_validate(data)
    again = Manifest.model_validate_json(model.model_dump_json())
    assert again == model
    assert again.model_dump_json() == model.model_dump_json()
    # the generated schema accepts what the model produced
    jsonschema.validate(model.model_dump(mode="json"), schemas.schema_for("manifest"))


def test_shorthands_normalise():
    assert ActorSpec.model_validate("eng").roles[0].role == "eng"
    spec = ActorSpec.model_validate({"role": "eng", "system": True})
    assert spec.system and spec.roles[0].role == "eng"
    assert SilenceJoin.model_validate({"cause": "a", "effect": "b"}) == SilenceJoin(trigger="a", response="b")
    cfg = EvaluationConfig.model_validate(
        {
            "causal_links": [
                {"name": "n", "cause_event_type": "a", "effect_event_type": "b", "join": {"cause": "x", "effect": "y"}}
            ]
        }
    )
    assert len(cfg.causal_links[0].join) == 1


def test_selectors_need_exactly_one_template():
    with pytest.raises(ValidationError):
        SearchSelector.model_validate({"subsystem": "s"})
    with pytest.raises(ValidationError):
        SearchSelector.model_validate({"subsystem": "s", "id_template": "a", "query_template": "b"})


def test_weights_must_sum_to_one():
    with pytest.raises(ValidationError):
        EvaluationConfig.model_validate({"scoring": {"weights": {"silence": {"answer": 0.5, "trajectory": 0.6}}}})


def test_tiny_manifest_validates_against_checked_in_schema():
    data = yaml.safe_load((REPO / "domain_packs" / "tiny" / "groundeval.yaml").read_text())
    schema = json.loads((REPO / "contracts" / "manifest.schema.json").read_text())
    jsonschema.validate(data, schema)


@pytest.mark.parametrize("name", sorted(schemas.SCHEMAS))
def test_checked_in_schemas_match_models(name):
    path = REPO / "contracts" / f"{name}.schema.json"
    assert path.exists(), f"{path} missing: run `groundeval schema --out contracts`"
    assert path.read_text() == schemas.render(name), f"{path} drifted: run `groundeval schema --out contracts`"
