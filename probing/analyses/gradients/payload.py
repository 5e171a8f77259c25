"""What a ``gradients`` result holds beyond the common blocks, and the checks its types cannot express.

No torch: validation runs without a model framework.

>>> layer_attention = {"first_special": [0.5], "separator": [0.25], "punctuation": [0.0], "other": [0.5]}
>>> check_attention_shares(layer_attention, units=1)
Traceback (most recent call last):
probing.results.schema.specs.Invalid: gradients.layer_attention: layer 0's shares add up to 1.25, not 1 (the ...
"""

from __future__ import annotations

from probing.results.schema import specs
from probing.results.schema.blocks import STATE, TOKEN_NAMES

KEY_KINDS = ("first_special", "separator", "punctuation", "other")
"""The kinds of key the gradient is split by; they partition a unit's real keys."""

LOSSES = ("masked_lm", "causal_lm")

SHARE_SLACK = 0.01
"""How far a layer's attention shares may add up from 1: half-precision rows sum to 1 only nearly."""


def _per_kind(spec, doc: str) -> specs.Obj:
    return specs.Obj({kind: specs.Field(spec, f"{doc} ({kind})") for kind in KEY_KINDS})


GRADIENTS = specs.Obj(
    {
        "gradient": specs.Field(_per_kind(specs.Nullable(specs.Grid(specs.NON_NEGATIVE)),
                                          "[layer][head] mean |dL/dA|, null without such keys"),
                                "per kind of key, each head's mean |dL/dA| over weights from real queries"),
        "layer_gradient": specs.Field(_per_kind(specs.Nullable(specs.ListOf(specs.NON_NEGATIVE)), "per layer, null without such keys"),
                                      "per kind of key, each layer's mean over its heads"),
        "layer_attention": specs.Field(_per_kind(specs.ListOf(specs.SHARE), "per layer"),
                                       "per kind of key, each layer's mean attention share (the kinds add up to 1)"),
        "weights": specs.Field(_per_kind(specs.COUNT, "attention weights"), "per kind of key, the weights each mean covers"),
        "scored_tokens": specs.Field(specs.COUNT, "tokens the loss scored"),
        "mean_unit_loss": specs.Field(specs.Nullable(specs.NON_NEGATIVE), "mean over units of a unit's mean cross-entropy (null: no "
                                                        "unit)"),
        "units": specs.Field(specs.COUNT, "units read"),
        "loss": specs.Field(specs.OneOf(LOSSES), "masked_lm or causal_lm"),
        "definition": specs.Field(specs.STR, "what the gradient measures, in words"),
    },
    "the gradients",
)

PAYLOAD = {
    "token_names": TOKEN_NAMES,
    "gradients": specs.Field(GRADIENTS, "mean |dL/dA| by kind of key, per head and per layer (derived from state)"),
    "state": STATE,
}

SECTIONS = (specs.Section("token_names", TOKEN_NAMES.spec), specs.Section("gradients", GRADIENTS))
"""The blocks docs/results.md shows in tables of their own."""


def check_gradients(result: dict) -> None:
    """Each kind measured where it has weights, one entry per layer, shares that add up, the state behind it."""
    block, layers = result["gradients"], result["model"]["num_layers"]
    loss = result["config"].get("loss", block["loss"])
    if loss != block["loss"]:
        raise specs.Invalid("gradients.loss", f"is {block['loss']}, config.loss is {loss}")
    for kind in KEY_KINDS:
        measured = block["weights"][kind] > 0
        for name in ("gradient", "layer_gradient"):
            if (block[name][kind] is not None) != measured:
                raise specs.Invalid(f"gradients.{name}.{kind}", f"is {'null' if block[name][kind] is None else 'measured'}"
                                                          f", but weights.{kind} is {block['weights'][kind]}")
        for name in ("layer_gradient", "layer_attention"):
            values = block[name][kind]
            if values is not None and len(values) != layers:
                raise specs.Invalid(f"gradients.{name}.{kind}", f"has {len(values)} layers, the model {layers}")
    if (block["mean_unit_loss"] is None) != (block["units"] == 0):
        raise specs.Invalid("gradients.mean_unit_loss", f"is {block['mean_unit_loss']} for {block['units']} units")
    check_attention_shares(block["layer_attention"], units=block["units"])
    _check_state(result)


def check_attention_shares(layer_attention: dict, *, units: int) -> None:
    """Every layer's shares add up to 1 over the kinds of key (when any unit was read)."""
    if not units:
        return
    for layer, shares in enumerate(zip(*(layer_attention[kind] for kind in KEY_KINDS))):
        if abs(sum(shares) - 1) > SHARE_SLACK:
            raise specs.Invalid("gradients.layer_attention", f"layer {layer}'s shares add up to {sum(shares):g}, not 1 "
                                                       "(the kinds of key partition the real keys)")


def _check_state(result: dict) -> None:
    model, state, block = result["model"], result["state"], result["gradients"]
    grids = [len(KEY_KINDS), model["num_layers"], model["num_heads"]]
    expected = {"gradient": grids, "attention": grids, "weights": [len(KEY_KINDS)],
                **dict.fromkeys(("queries", "scored_tokens", "loss", "units"), [])}
    for key, shape in expected.items():
        if key not in state:
            raise specs.Invalid(f"state.{key}", "missing")
        if state[key]["shape"] != shape:
            raise specs.Invalid(f"state.{key}.shape", f"is {state[key]['shape']}, expected {shape}")
    weights = specs.decoded(state["weights"], "state.weights")
    for index, kind in enumerate(KEY_KINDS):
        if int(weights[index]) != block["weights"][kind]:
            raise specs.Invalid("state.weights", f"disagrees with gradients.weights.{kind} ({block['weights'][kind]})")
    if int(specs.decoded(state["units"], "state.units")) != block["units"]:
        raise specs.Invalid("state.units", f"disagrees with gradients.units ({block['units']})")
