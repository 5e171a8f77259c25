"""Hostile outputs, round 3: no output destroys what the user had (issue 45, item 1).

Every output a user names goes through :func:`probing.atomic.check_output_path`: it may not be an input of
the run, nor lie inside a folder the run reads (a model's, BLiMP's), and an existing file there is replaced
only when it is an earlier output of the same kind (a result of the same analysis, a figure of its format,
the same command's table or page). :data:`DESTROYED` holds the cases the issue found (each replaced a file
and exited 0); the campaign (:func:`test_no_output_changes_an_input`) runs every command that writes
something with ``--output`` set to every kind of file a user has (a treebank, the packaged sample, a
model's config, weights and tokenizer, a BLiMP file, a DEV result, a checkpoint of an unfinished run, a
training run's checkpoint folder) and asserts the promise of :func:`test_hostile.assert_refused`: exit 2,
one line, the file byte-identical. Nothing here touches the repository's own files: the packaged sample is
a copy the package is pointed at, the models are copies of the tiny offline ones, and BLiMP is a folder of
the hand-written pairs of tests/data (helpers.hand_blimp), whose sha256 the test pins in place of BLiMP's.
"""

# ruff: noqa: F811 (the fixtures imported from test_hostile are pytest's, taken by name as parameters)

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from helpers import hand_blimp, tiny_model
from test_hostile import (  # noqa: F401
    Case,
    Env,
    _quiet,
    assert_refused,
    env,
    heldout_result,
    payload_results,
    registrar,
    valid_result,
)

from probing.testing import sample_path

PARADIGM = "anaphor_gender_agreement"
"""A BLiMP paradigm the tiny BLiMP folder holds (made-up pairs, its pin replaced by their sha256)."""


@dataclass
class Files:
    """What a user has, in the test's folder: the inputs the commands read and the files they must not touch."""

    encoder: Path  # a copy of the tiny BERT's folder
    decoder: Path  # a copy of the tiny causal LM's folder
    treebank: Path
    sample: Path  # the package's sample treebank, as the package finds it (a copy)
    blimp: Path  # a folder of BLiMP's UID.jsonl files
    dev: Path  # a DEV probe result, as --select-on takes it
    heldout: Path  # a held-out probe result (what transfer reads)
    checkpoint: Path  # the checkpoint file of an unfinished run
    run: Path  # a training run's folder: checkpoint-100/ is a model folder

    @property
    def paradigm(self) -> Path:
        return self.blimp / f"{PARADIGM}.jsonl"


def _files(env: Env) -> Files:
    """Every kind of file a user has, made in ``env.tmp``; the package is pointed at the sample's copy and BLiMP's
    pin of :data:`PARADIGM` at the tiny folder's file."""
    import probing.data.inputs
    import probing.data.minimal_pairs

    tmp = env.tmp
    encoder, decoder = tmp / "encoder", tmp / "decoder"
    shutil.copytree(env.model, encoder)
    shutil.copytree(tiny_model("llama"), decoder)
    sample = tmp / "package" / "data" / "sample.conllu"
    sample.parent.mkdir(parents=True)
    shutil.copyfile(sample_path(), sample)
    env.monkeypatch.setattr(probing.data.inputs, "sample_treebank_path", lambda: sample)
    blimp = Path(hand_blimp(tmp / "blimp", env.monkeypatch, PARADIGM))  # the hand-written pairs of tests/data
    env.monkeypatch.delenv("PROBING_BLIMP", raising=False)
    env.monkeypatch.delenv("PROBING_MINIMAL_PAIRS", raising=False)  # BLiMP's folder is --blimp's alone here
    dev = tmp / "dev.json"
    shutil.copyfile(env.result, dev)
    heldout = tmp / "heldout.json"
    shutil.copyfile(env.heldout, heldout)
    checkpoint = tmp / "unfinished-run.pt"  # a --checkpoint FILE (not named *.checkpoint: assert_refused looks for those)
    with open(checkpoint, "wb") as stream:  # what probing.engine.checkpointing saves (no pass done yet)
        torch.save({"format": "probing-checkpoint", "version": 2, "passes": {}}, stream)
    run = tmp / "run"
    shutil.copytree(env.model, run / "checkpoint-100")
    return Files(encoder, decoder, env.treebank, sample, blimp, dev, heldout, checkpoint, run)


def _engine(command: str, *extra: str) -> Callable[[Files, Path], list[str]]:
    """A command that runs the tiny encoder over the treebank (reading the model folder and the treebank)."""
    return lambda files, output: _quiet(command, "--model", str(files.encoder), "--treebank", str(files.treebank),
                                        "--limit", "3", *extra, "--output", str(output))


WRITERS: dict[str, Callable[[Files, Path], list[str]]] = {
    "score": _engine("score", "--bootstrap", "0"),
    "score --select-on DEV": _engine("score", "--bootstrap", "0", "--select-on", "DEV"),
    "score RUN_FOLDER": lambda files, output: _quiet("score", "--model", str(files.run), "--treebank",
                                                     str(files.treebank), "--limit", "3", "--bootstrap", "0",
                                                     "--output", str(output)),
    "surface": _engine("surface"),
    "heads": _engine("heads"),
    "gradients": _engine("gradients"),
    "patterns": _engine("patterns"),
    "compare": lambda files, output: _engine("compare", "--second-model", str(files.encoder))(files, output),
    "trees": _engine("trees", "--bootstrap", "0"),
    "coref": _engine("coref", "--bootstrap", "0"),
    "explore": _engine("explore", "--bootstrap", "0"),
    "ablate --metric mlm": _engine("ablate", "--metric", "mlm", "--heads", "1-1", "--bootstrap", "5"),
    "ablate --chosen --select-on DEV": _engine("ablate", "--metric", "probe", "--chosen", "det", "--select-on", "DEV",
                                               "--random", "2", "--bootstrap", "5"),
    "ablate --metric minimal-pairs": lambda files, output: _quiet(
        "ablate", "--model", str(files.decoder), "--metric", "minimal-pairs", "--blimp", str(files.blimp),
        "--paradigms", PARADIGM, "--heads", "1-1", "--bootstrap", "5", "--output", str(output)),
    "pairs": lambda files, output: ["pairs", "--model", str(files.decoder), "--blimp", str(files.blimp),
                                    "--paradigms", PARADIGM, "--bootstrap", "0", "--output", str(output)],
    "merge": lambda files, output: ["merge", str(files.dev), "--output", str(output)],
    "leaderboard": lambda files, output: ["leaderboard", str(files.dev), "--output", str(output)],
    "leaderboard --format json": lambda files, output: ["leaderboard", str(files.dev), "--format", "json",
                                                        "--output", str(output)],
    "plot": lambda files, output: ["plot", str(files.dev), "--output", str(output)],
    "transfer": lambda files, output: ["transfer", str(files.heldout), "--output", str(output)],
}
"""Every command that writes a file, with ``--output`` given; ``DEV`` in an argument list stands for the DEV
result."""

INPUTS: dict[str, Callable[[Files], Path]] = {
    "the treebank": lambda files: files.treebank,
    "the packaged sample": lambda files: files.sample,
    "the encoder's config.json": lambda files: files.encoder / "config.json",
    "the encoder's model.safetensors": lambda files: files.encoder / "model.safetensors",
    "the encoder's tokenizer.json": lambda files: files.encoder / "tokenizer.json",
    "the decoder's config.json": lambda files: files.decoder / "config.json",
    "the decoder's model.safetensors": lambda files: files.decoder / "model.safetensors",
    "the decoder's tokenizer_config.json": lambda files: files.decoder / "tokenizer_config.json",
    "a BLiMP file": lambda files: files.paradigm,
    "the DEV result": lambda files: files.dev,
    "a checkpoint of an unfinished run": lambda files: files.checkpoint,
    "a training run's checkpoint config.json": lambda files: files.run / "checkpoint-100" / "config.json",
}
"""Every kind of file a user has, as a function of the test's files."""


def _argv(writer: str, files: Files, output: Path) -> list[str]:
    return [str(files.dev) if part == "DEV" else part for part in WRITERS[writer](files, output)]


def _everything(files: Files) -> list[Path]:
    """Every file and folder the user had: none may change."""
    return [files.encoder, files.decoder, files.treebank, files.sample, files.blimp, files.dev, files.heldout,
            files.checkpoint, files.run]


EARLIER_OUTPUTS = {("score", "the DEV result"), ("score RUN_FOLDER", "the DEV result")}
"""Pairs left out of the campaign: a probe result that the run does not read is an earlier output of score,
which score replaces by the rule (test_an_earlier_output_of_the_same_command_is_replaced); given to
--select-on it is an input, and refused (``score --select-on DEV``)."""


@pytest.mark.parametrize(("writer", "kind"), [(writer, kind) for writer in WRITERS for kind in INPUTS
                                              if (writer, kind) not in EARLIER_OUTPUTS])
def test_no_output_changes_an_input(writer, kind, env, capsys):
    files = _files(env)
    target = INPUTS[kind](files)
    argv = _argv(writer, files, target)
    assert_refused(Case(argv, ["--output"], inputs=_everything(files)), env, capsys)


# ---------------------------------------------------------------------------- the cases of issue 45, item 1


DESTROYED: dict[str, Callable[[Env], Case]] = {}
destroyed = registrar(DESTROYED)


def _pairs(files: Files, output: Path) -> list[str]:
    return _argv("pairs", files, output)


@destroyed("pairs --blimp B --output B/anaphor_gender_agreement.jsonl")
def _(env):
    files = _files(env)
    return Case(_pairs(files, files.paradigm), ["--output", "is inside", str(files.blimp)], inputs=[files.blimp])


@destroyed("pairs --blimp B --output B/new.json: a new file among BLiMP's")
def _(env):
    files = _files(env)
    output = files.blimp / "new.json"
    return Case(_pairs(files, output), ["--output", "is inside"], inputs=[files.blimp], absent=[output])


@destroyed("pairs --model M --output M/config.json")
def _(env):
    files = _files(env)
    return Case(_pairs(files, files.decoder / "config.json"), ["--output", "is inside", str(files.decoder)],
                inputs=[files.decoder])


@destroyed("pairs --model M --output M/model.safetensors")
def _(env):
    files = _files(env)
    return Case(_pairs(files, files.decoder / "model.safetensors"), ["--output", "is inside"], inputs=[files.decoder])


@destroyed("pairs: $PROBING_BLIMP's folder is an input too")
def _(env):
    files = _files(env)
    env.monkeypatch.setenv("PROBING_BLIMP", str(files.blimp))
    argv = ["pairs", "--model", str(files.decoder), "--paradigms", PARADIGM, "--output", str(files.paradigm)]
    return Case(argv, ["--output", "is inside"], inputs=[files.blimp])


@destroyed("ablate --select-on sel.json --output sel.json")
def _(env):
    files = _files(env)
    return Case(_argv("ablate --chosen --select-on DEV", files, files.dev), ["--output", "is also an input"],
                inputs=[files.dev])


@destroyed("ablate --select-on dev.conllu --output dev.conllu")
def _(env):
    files = _files(env)
    dev = env.tmp / "dev.conllu"
    shutil.copyfile(sample_path(), dev)
    argv = [dev.as_posix() if part == str(files.dev) else part
            for part in _argv("ablate --chosen --select-on DEV", files, dev)]
    return Case(argv, ["--output", "is also an input"], inputs=[dev, files.treebank])


@destroyed("ablate --metric minimal-pairs --blimp B --output B/anaphor_gender_agreement.jsonl")
def _(env):
    files = _files(env)
    return Case(_argv("ablate --metric minimal-pairs", files, files.paradigm), ["--output", "is inside"],
                inputs=[files.blimp])


# A wheel reads its own copy of the sample (probing/_data/), so data/sample.conllu of a checkout is no input of the
# run there: only the rule that a result replaces only a result keeps it. (As the default input it is refused as an
# input too: the campaign's "the packaged sample" rows.)
@destroyed("score --output data/sample.conllu (the package's sample, not this run's input)")
def _(env):
    files = _files(env)
    return Case(_argv("score", files, files.sample), ["--output", "is not a probe result"], inputs=[files.sample])


@destroyed("surface --output a probe result: JSON of another analysis")
def _(env):
    files = _files(env)
    return Case(_argv("surface", files, files.dev), ["--output", "is not a surface result"], inputs=[files.dev])


@destroyed("merge --output a treebank")
def _(env):
    files = _files(env)
    return Case(_argv("merge", files, files.treebank), ["--output", "is not a probe result"],
                inputs=[files.treebank])


@destroyed("leaderboard --output a treebank: a table replaces only a table")
def _(env):
    files = _files(env)
    return Case(_argv("leaderboard", files, files.treebank), ["--output", "is not a leaderboard"],
                inputs=[files.treebank])


@destroyed("leaderboard --format csv --output a labelled CSV that classification reads")
def _(env):
    files = _files(env)
    labels = env.tmp / "labels.csv"
    labels.write_text("text,label\nA fine day.,1\n")
    argv = ["leaderboard", str(files.dev), "--format", "csv", "--output", str(labels)]
    return Case(argv, ["--output", "is not a leaderboard in CSV"], inputs=[labels])


@destroyed("leaderboard --format json --output a model's config.json elsewhere")
def _(env):
    files = _files(env)
    return Case(_argv("leaderboard --format json", files, files.encoder / "config.json"),
                ["--output", "is not a leaderboard in JSON"], inputs=[files.encoder])


@destroyed("plot --output a PNG-named file that is not a figure")
def _(env):
    files = _files(env)
    output = env.tmp / "notes.png"
    output.write_text("not a picture: my notes\n")
    return Case(_argv("plot", files, output), ["--output", "is not a PNG figure"], inputs=[output])


@destroyed("transfer --output a BLiMP file renamed .json")
def _(env):
    files = _files(env)
    output = env.tmp / "pairs.json"
    shutil.copyfile(files.paradigm, output)
    return Case(_argv("transfer", files, output), ["--output", "is not an atlas"], inputs=[output])


@destroyed("explore --output a leaderboard page")
def _(env):
    files = _files(env)
    board = env.tmp / "board.html"
    from probing.report.board import leaderboard_from_files
    from probing.report.renderers import render_html

    board.write_text(render_html(leaderboard_from_files([str(files.dev)], [])), encoding="utf-8")
    return Case(_argv("explore", files, board), ["--output", "is not a page of probing explore"], inputs=[board])


@destroyed("report --output the treebank's folder: its README.md is the user's")
def _(env):
    files = _files(env)
    readme = env.tmp / "README.md"
    readme.write_text("# My notes\n\nWhat I ran.\n")
    argv = _quiet("report", "--model", str(files.encoder), "--treebank", str(files.treebank), "--limit", "3",
                  "--output", str(env.tmp))
    return Case(argv, ["README.md", "is not the README.md of a probing report"], inputs=[readme])


@destroyed("heads --output a figure's name beside it is the user's photo")
def _(env):
    files = _files(env)
    photo = env.tmp / "out-heads.png"
    photo.write_bytes(b"\xff\xd8\xff\xe0 a JPEG named .png")
    return Case(_argv("heads", files, env.tmp / "out.json"), ["figure beside --output", "is not a PNG figure"],
                inputs=[photo], absent=[env.tmp / "out.json"])


@pytest.mark.parametrize("name", DESTROYED)
def test_an_output_that_would_destroy_a_file_is_refused(name, env, capsys):
    assert_refused(DESTROYED[name](env), env, capsys)


# ---------------------------------------------------------------------------- what may be replaced


REPLACED: dict[str, tuple[str, Callable[[Path], bool]]] = {
    # writer: (the output's name, how to recognise the new content)
    "score": ("out.json", lambda path: json.loads(path.read_text())["analysis"] == "probe"),
    "leaderboard": ("board.md", lambda path: "| rank" in path.read_text()),
    "leaderboard --format json": ("board.json", lambda path: "tables" in json.loads(path.read_text())),
    "plot": ("figure.png", lambda path: path.read_bytes().startswith(b"\x89PNG")),
    "transfer": ("atlas.md", lambda path: path.read_text().startswith("# ")),
    "explore": ("page.html", lambda path: path.read_text().startswith("<!DOCTYPE html>")),
}


@pytest.mark.parametrize("writer", REPLACED)
def test_an_earlier_output_of_the_same_command_is_replaced(writer, env, capsys):
    """The rule refuses other files, not a rerun: the second run replaces the first one's output."""
    from test_hostile import run_cli

    files = _files(env)
    name, is_new = REPLACED[writer]
    output = env.tmp / name
    code, _, err = run_cli(_argv(writer, files, output), capsys)
    assert code == 0, err
    first = output.stat().st_ino
    code, _, err = run_cli(_argv(writer, files, output), capsys)
    assert code == 0, err
    assert is_new(output) and output.stat().st_ino != first  # a new file took the earlier one's place


def test_an_empty_file_holds_nothing_to_lose_and_is_replaced(env, capsys):
    """``mktemp`` makes an empty file: a result may go there."""
    from test_hostile import run_cli

    files = _files(env)
    output = env.tmp / "made-by-mktemp"
    output.touch()
    code, _, err = run_cli(_argv("score", files, output), capsys)
    assert code == 0, err
    assert json.loads(output.read_text())["analysis"] == "probe"


def test_a_report_reruns_into_its_own_folder(env, capsys):
    """Every file of an earlier report (results, figures, its README.md) is replaced by the next run's."""
    from test_hostile import run_cli

    files = _files(env)
    folder = env.tmp / "report"
    argv = _quiet("report", "--model", str(files.encoder), "--treebank", str(files.treebank), "--limit", "3",
                  "--bootstrap", "0", "--output", str(folder))
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    first = {path.name: path.stat().st_ino for path in folder.iterdir()}
    assert "README.md" in first and "surface.json" in first
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    assert all(folder.joinpath(name).stat().st_ino != inode for name, inode in first.items())
