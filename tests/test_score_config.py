"""The probe's configuration is made of the specs every engine analysis takes (docs/architecture.md, "one home per
idea"): each option declared once, by ModelSpec, InputSpec, PassOptions or ProbeOptions, never again by ScoreConfig."""

from __future__ import annotations

import dataclasses

import pytest

from probing.analyses.probe.config import PARTS, ScoreConfig
from probing.analyses.probe.options import ProbeOptions
from probing.engine.options import PassOptions
from probing.engine.specs import InputSpec, ModelSpec
from probing.errors import ProbingError


def _names(spec) -> set[str]:
    return {field.name for field in dataclasses.fields(spec)}


def test_score_config_declares_no_field_of_the_engine_specs():
    engine = _names(ModelSpec) | _names(InputSpec) | _names(PassOptions) | _names(ProbeOptions)
    specs = {spec.__name__ for spec in (ModelSpec, InputSpec, PassOptions, ProbeOptions)}
    own = {field.name for field in dataclasses.fields(ScoreConfig) if field.type not in specs}  # not a spec itself
    repeated = own & engine
    assert not repeated, f"ScoreConfig declares {sorted(repeated)} again: take them from the spec that owns them"
    assert {field.name: field.type for field in dataclasses.fields(ScoreConfig) if field.name in PARTS} == {
        "model": "ModelSpec", "inputs": "InputSpec", "passes": "PassOptions", "options": "ProbeOptions"}


def test_no_two_specs_of_a_probe_run_declare_one_option():
    """Options are given by name (from_fields, replace) to the one spec that declares them: a name two specs
    declared would go to the first alone."""
    seen: dict[str, str] = {}
    for part, spec in PARTS.items():
        for name in _names(spec):
            assert name not in seen, f"{name} is declared by {seen[name]} and {part}"
            seen[name] = part


def test_options_by_name_go_to_the_spec_that_declares_them():
    config = ScoreConfig.from_fields(model="m", seed=3, treebank="t.conllu", limit=4, batch_size=8,
                                     attention="norms", relations=("det",), bootstrap=0, offsets=(-1, 1))
    assert (config.model.model, config.model.seed, config.inputs.treebank, config.inputs.limit) == ("m", 3, "t.conllu", 4)
    assert (config.passes.batch_size, config.passes.attention) == (8, "norms")
    assert (config.options.relations, config.options.bootstrap, config.offsets) == (("det",), 0, (-1, 1))
    changed = config.replace(limit=9, shard=(0, 2))
    assert (changed.inputs.limit, changed.passes.shard, changed.model) == (9, (0, 2), config.model)
    assert config.inputs.limit == 4  # frozen: replace made a new config
    with pytest.raises(TypeError, match="no option 'batchsize'"):
        config.replace(batchsize=4)


def test_the_result_config_block_keeps_its_fields_and_order():
    config = ScoreConfig.from_fields(relations=("det", "all"), limit=5, batch_size=4, seed=2, bootstrap=10,
                                     shard=(1, 3), random_init=True, pool_from="first")
    assert config.as_result_dict() == {
        "relations": ["det", "all"], "offsets": [-3, -2, -1, 1, 2, 3],
        "pooling": {"to": "sum", "from": "first"}, "max_length": None, "batch_size": 4, "limit": 5,
        "bootstrap": {"replicates": 10, "seed": 2, "method": "poisson"},
        "random_init": True, "shard": {"index": 1, "count": 3}, "attention": "weights"}
    assert list(config.as_result_dict()) == ["relations", "offsets", "pooling", "max_length", "batch_size", "limit",
                                             "bootstrap", "random_init", "shard", "attention"]


@pytest.mark.parametrize("changes, option", [
    ({"relations": ("dboj",)}, "--relations"), ({"bootstrap": -1}, "--bootstrap"), ({"limit": 0}, "--limit"),
    ({"offsets": (0, 1)}, "--offsets"), ({"stack": "middle"}, "--stack"),
])
def test_validated_refuses_what_no_spec_checks_by_its_option(changes, option):
    with pytest.raises(ProbingError, match=f"^{option}"):
        ScoreConfig.from_fields(**changes).validated()


def test_pass_options_check_themselves_in_a_config_too():
    with pytest.raises(ProbingError, match="^--batch-size"):
        ScoreConfig.from_fields(batch_size=0)
