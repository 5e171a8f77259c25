"""A toy analysis, registered from outside ``probing/`` as any plug-in would be: how much attention each head
pays a word from the word itself (the word-level diagonal), per head, over a treebank.

Everything the rest of probing needs is in this one module: the registry record (name, accumulator, payload
schema, consistency check, leaderboard table, command), the accumulator, and the command. It is found through
``$PROBING_PLUGINS=toy_analysis`` (with this folder on the path), exactly as an installed plug-in is found
through the ``probing.analyses`` entry point; tests/test_plugins.py runs it sharded, merged, resumed,
validated and on a leaderboard, without editing any file of the package. docs/architecture.md walks through it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import torch

from probing.commands.common import add_options, run_analysis
from probing.engine.accumulator import Accumulator, BatchView
from probing.engine.run import start_run
from probing.engine.specs import engine_options
from probing.plugins import Analysis, Command, register
from probing.report.board import Cell, Row, Table
from probing.results.schema.blocks import STATE
from probing.results.schema.specs import COUNT, SHARE, Field, Grid, Invalid, Obj

register(Analysis(
    name="toy",
    accumulator="toy_analysis:SelfAttentionAccumulator",
    payload="toy_analysis:PAYLOAD",
    checks=("toy_analysis:shares_are_means",),
    tables="toy_analysis:leaderboard_tables",
    commands=(Command("toy", "how much attention each head pays a word from itself (a plug-in example)",
                      "toy_analysis", order=200, options="toy_analysis:OPTIONS", library="toy_analysis:toy"),),
))

PAYLOAD = {
    "toy": Field(Obj({"words": Field(COUNT, "words read"),
                      "self_share": Field(Grid(SHARE), "per head, the mean attention of a word to itself")}),
                 "the toy analysis's numbers (derived from state)"),
    "state": STATE,
}


class SelfAttentionAccumulator(Accumulator):
    """Sums of each head's word-to-itself attention and the number of words. State: ``self_sum`` float64
    [layer, head], ``words`` int64 []."""

    analysis = "toy"
    interrupt_after: int | None = None
    """Tests set this to interrupt a run after that many batches (as Ctrl-C would), to resume it."""

    def __init__(self, num_layers: int, num_heads: int):
        super().__init__()
        self.shape = (num_layers, num_heads)
        self.batches = 0
        self.state_tensors = {"self_sum": torch.zeros(self.shape, dtype=torch.float64),
                              "words": torch.zeros((), dtype=torch.long)}

    def identity(self) -> dict:
        return {"analysis": self.analysis, "shape": list(self.shape)}

    @classmethod
    def for_result(cls, result: dict) -> "SelfAttentionAccumulator":
        return cls(result["model"]["num_layers"], len(result["toy"]["self_share"][0]))

    def update(self, view: BatchView) -> None:
        if self.interrupt_after is not None and self.batches >= self.interrupt_after:
            raise KeyboardInterrupt
        self.batches += 1
        attention = view.word_attention  # [batch, layer, head, word, word]
        words = view.batch.num_words.to(attention.device)  # [batch]
        real = torch.arange(attention.shape[-1], device=attention.device)[None, :] < words[:, None]  # [batch, word]
        itself = attention.diagonal(dim1=-2, dim2=-1) * real[:, None, None, :]  # [batch, layer, head, word]
        self.state_tensors["self_sum"] += itself.sum(dim=(0, 3)).double().cpu()
        self.state_tensors["words"] += int(words.sum())

    def result(self) -> dict:
        words = int(self.state_tensors["words"])
        share = (self.state_tensors["self_sum"] / max(words, 1)).tolist()
        return {"toy": {"words": words, "self_share": share}, "state": self.encoded_state()}


def shares_are_means(result: dict) -> None:
    """The shares are the state's sums over its words (a hand-edited share is caught)."""
    from probing.results.schema.arrays import decode_array

    sums, words = decode_array(result["state"]["self_sum"]), int(decode_array(result["state"]["words"]))
    for layer, row in enumerate(result["toy"]["self_share"]):
        for head, share in enumerate(row):
            if abs(share - sums[layer, head] / max(words, 1)) > 1e-9:
                raise Invalid(f"toy.self_share[{layer}][{head}]", "is not the state's sum over its words")


def leaderboard_tables(results: list[dict]) -> list[Table]:
    """One row per result: each layer's most self-attending head and its share."""
    layers = max(len(data["toy"]["self_share"]) for data in results)
    columns = [f"layer {layer + 1}" for layer in range(layers)]
    rows = []
    for data in results:
        row = Row(data["model"]["name"], "model", "in-sample", data["input"]["path"])
        for layer, shares in enumerate(data["toy"]["self_share"]):
            head = max(range(len(shares)), key=lambda index: (shares[index], -index))
            row.cells[columns[layer]] = Cell(accuracy=shares[head], head=f"{layer + 1}-{head + 1}")
        rows.append(row)
    notes = ["a cell: the head of that layer whose words attend most to themselves, and that mean share"]
    return [Table(columns, rows, notes, title="Self-attention (toy plug-in)", key="toy", mean=False,
                  marks_best=False)]


@dataclass(frozen=True)
class ToyOptions:
    """The toy's own options: none beyond the model, input and pass (a field declared with
    probing.engine.arguments.option would be one, on the command line and in probing.run alike)."""


OPTIONS = engine_options().named("probing toy", spec=ToyOptions)


def toy(model, inputs, passes, options: ToyOptions, *, start=start_run) -> dict | None:
    """The library function: the toy result of ``model`` over ``inputs`` (what ``probing toy`` and
    ``probing.run("toy", ...)`` both run); None in a torchrun process other than rank 0."""
    run = start(model, inputs.open(), passes)
    loaded = run.loaded
    accumulator = SelfAttentionAccumulator(loaded.num_layers, loaded.num_heads)
    stats = run.run([accumulator], "toy: self-attention")
    return run.result("toy", stats, accumulator, {}) if run.is_main else None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser, OPTIONS)


def run(args: argparse.Namespace) -> int:
    def show(result: dict) -> None:
        print(f"{result['toy']['words']} words; most self-attending head of layer 1: "
              f"{max(result['toy']['self_share'][0]):.3f}")

    return run_analysis(args, toy, ToyOptions, analysis="toy", show=show)
