"""Hostile input never ends in a traceback or in lost data.

Each refused case is a row of :data:`REFUSED`: run through ``probing.cli.main``
(or a subprocess where stderr must be seen whole: warnings from torch and
transformers bypass pytest's capture), it must exit 2 with one line on stderr
that names what is wrong and where (the option, or file:line, or file and
field), leave no output file and no temporary file behind, and leave every
input byte-identical. The accepted cases (:data:`ACCEPTED`) exit 0 and check
what the rule promises instead.

The order of checks, which these cases pin down: options (argparse types),
then the input files (they exist and are regular files), then every output
(``--output``, ``--checkpoint``, the figures beside ``--output``, a report's
files), then the device and the model, then the pass (``--max-length``
against the model, then every unit). So an output that cannot be written is
refused even when the model named does not exist: the cases about outputs
use a model folder that does not exist, and would report that instead if an
output were checked only after loading the model.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import pytest
import torch
from helpers import registrar  # noqa: F401 (the hostile test files import it from here)

from probing.cli import main
from probing.results.schema.arrays import decode_array, encode_array
from probing.testing import sample_path, sample_split, tiny_bert

REPO = Path(__file__).resolve().parents[1]
NO_MODEL = "./no-such-model"
"""A model folder that does not exist: if it is reported, the model was reached before the check under test."""


@dataclass
class Env:
    tmp: Path
    monkeypatch: pytest.MonkeyPatch
    model: str
    result: Path
    treebank: Path
    heldout: Path
    payloads: dict[str, Path]
    """A valid result of each analysis of PAYLOAD_DAMAGES, by analysis (their payload damages start from these)."""


@dataclass
class Case:
    argv: list[str]
    fragments: list[str]
    inputs: list[Path] = field(default_factory=list)
    absent: list[Path] = field(default_factory=list)
    subprocess: bool = False
    within_seconds: float | None = None
    check: Callable[[], None] | None = None
    memory_gib: int | None = None
    """Run in a subprocess whose address space is capped at this (a file must not be inflated in full)."""


@pytest.fixture(scope="module")
def valid_result(tmp_path_factory) -> Path:
    """A probe result of the tiny BERT on five sample sentences, with 20 bootstrap replicates."""
    path = tmp_path_factory.mktemp("valid") / "r.json"
    assert main(["score", "--quiet", "--model", tiny_bert(), "--limit", "5", "--bootstrap", "20",
                 "--output", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def payload_results(tmp_path_factory) -> dict[str, Path]:
    """A result of each analysis of PAYLOAD_DAMAGES, of the tiny BERT on three sample sentences."""
    folder = tmp_path_factory.mktemp("payloads")
    for analysis in PAYLOAD_DAMAGES:
        command = PAYLOAD_COMMANDS.get(analysis, [analysis])
        assert main([*command, "--quiet", "--model", tiny_bert(), "--limit", "3", "--output",
                     str(folder / f"{analysis}.json")]) == 0
    return {analysis: folder / f"{analysis}.json" for analysis in PAYLOAD_DAMAGES}


@pytest.fixture
def env(tmp_path, monkeypatch, valid_result, heldout_result, payload_results, tmp_path_factory) -> Env:
    monkeypatch.setenv("PROBING_CACHE", str(tmp_path_factory.mktemp("cache")))
    result = tmp_path / "r.json"
    shutil.copyfile(valid_result, result)
    treebank = tmp_path / "t.conllu"
    shutil.copyfile(sample_path(), treebank)
    return Env(tmp_path, monkeypatch, tiny_bert(), result, treebank, heldout_result, payload_results)


def _env() -> dict:
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": str(REPO) + (os.pathsep + path if path else "")}


def _capped(gib: int | None):
    if gib is None:
        return None

    def cap():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))

    return cap


def run_cli(argv: list[str], capsys, *, in_subprocess: bool = False, memory_gib: int | None = None
            ) -> tuple[int, str, str]:
    if in_subprocess or memory_gib:
        completed = subprocess.run([sys.executable, "-m", "probing", *argv], capture_output=True, text=True,
                                   env=_env(), timeout=300, preexec_fn=_capped(memory_gib))
        return completed.returncode, completed.stdout, completed.stderr
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def digest(path: Path) -> str:
    """The bytes of a file (or of every file under a folder), as one hash."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    hashed = hashlib.sha256()
    for item in files:
        hashed.update(str(item.relative_to(path) if path.is_dir() else item.name).encode() + item.read_bytes())
    return hashed.hexdigest()


# ---------------------------------------------------------------------------- refused cases

REFUSED: dict[str, Callable[[Env], Case]] = {}
IN_A_CHILD: set[str] = set()
"""The refused cases that run the command in a child process (``Case.subprocess`` or ``memory_gib``): their
tests are marked slow, as every test that starts a Python process is (pyproject.toml's markers)."""
refused = registrar(REFUSED, IN_A_CHILD, mark="in_a_child")


def _quiet(command: str, *argv: str) -> list[str]:
    return [command, "--quiet", *argv]


# --- outputs that would destroy something, or cannot be written (score and surface) ---------------

for _command in ("score", "surface"):

    @refused(f"{_command}: --output is the --treebank file")
    def _(env, command=_command):
        # a real model: without the check the run would go on and overwrite the treebank
        return Case(_quiet(command, "--model", env.model, "--treebank", str(env.treebank),
                           "--output", str(env.treebank)),
                    ["--output", str(env.treebank), "is also an input"], inputs=[env.treebank])

    @refused(f"{_command}: --output /dev/null")
    def _(env, command=_command):
        def still_a_device():
            assert stat.S_ISCHR(os.stat(os.devnull).st_mode)

        return Case(_quiet(command, "--model", NO_MODEL, "--treebank", str(env.treebank), "--output", os.devnull),
                    ["--output /dev/null", "not a regular file"], inputs=[env.treebank], check=still_a_device)

    @refused(f"{_command}: --output is a FIFO")
    def _(env, command=_command):
        fifo = env.tmp / "fifo"
        os.mkfifo(fifo)

        def still_a_fifo():
            assert stat.S_ISFIFO(os.stat(fifo).st_mode)

        return Case(_quiet(command, "--model", NO_MODEL, "--output", str(fifo)),
                    [f"--output {fifo}", "not a regular file"], check=still_a_fifo)

    @refused(f"{_command}: --output is a folder")
    def _(env, command=_command):
        folder = env.tmp / "folder"
        folder.mkdir()
        (folder / "kept.txt").write_text("kept\n")
        return Case(_quiet(command, "--model", NO_MODEL, "--output", str(folder)),
                    [f"--output {folder}", "is a folder"], inputs=[folder])

    @refused(f"{_command}: --output ends with /")
    def _(env, command=_command):
        return Case(_quiet(command, "--model", NO_MODEL, "--output", str(env.tmp / "new") + "/"),
                    ["--output", "ends with '/'"], absent=[env.tmp / "new"])

    @refused(f"{_command}: --output under a file")
    def _(env, command=_command):
        blocker = env.tmp / "file.txt"
        blocker.write_text("a file, not a folder\n")
        return Case(_quiet(command, "--model", NO_MODEL, "--output", str(blocker / "r.json")),
                    ["--output", f"{blocker} is a file"], inputs=[blocker])

    @refused(f"{_command}: --output is a symbolic link")
    def _(env, command=_command):
        target, link = env.tmp / "target.json", env.tmp / "link.json"
        target.write_text("the file the link points to\n")
        link.symlink_to(target)

        def link_kept():
            assert link.is_symlink() and link.resolve() == target

        return Case(_quiet(command, "--model", NO_MODEL, "--output", str(link)),
                    [f"--output {link}", "symbolic link", "--follow-symlinks"], inputs=[target], check=link_kept)

    @refused(f"{_command}: a disk without room")
    def _(env, command=_command):
        import probing.atomic

        usage = shutil.disk_usage(env.tmp)
        env.monkeypatch.setattr(probing.atomic.shutil, "disk_usage",
                                lambda path: usage._replace(free=1 << 20))  # 1 MiB
        return Case(_quiet(command, "--model", NO_MODEL, "--output", str(env.tmp / "r2.json")),
                    ["--output", "1 MiB free"], absent=[env.tmp / "r2.json"])

    @refused(f"{_command}: a folder that cannot be written")
    def _(env, command=_command):
        import probing.atomic

        locked = env.tmp / "locked"
        locked.mkdir()
        real_access = os.access
        # tests run as root, where a chmod stops no write: deny the check itself, for this folder only
        env.monkeypatch.setattr(probing.atomic.os, "access",
                                lambda path, mode, **kw: Path(path) != locked and real_access(path, mode, **kw))
        return Case(_quiet(command, "--model", NO_MODEL, "--output", str(locked / "r.json")),
                    ["--output", "permission denied"], absent=[locked / "r.json"])


@refused("score: --checkpoint is the --output file")
def _(env):
    output = env.tmp / "out.json"
    # the checkpoint is deleted once the result is written: the result would be lost
    return Case(_quiet("score", "--model", NO_MODEL, "--output", str(output), "--checkpoint", str(output)),
                [f"--checkpoint {output}", "--output"], absent=[output])


@refused("heads: --output is the --probe result it reads")
def _(env):
    return Case(_quiet("heads", "--model", NO_MODEL, "--probe", str(env.result), "--output", str(env.result)),
                ["--output", "is also an input"], inputs=[env.result])


@refused("surface: a figure beside --output is the treebank")
def _(env):
    treebank = env.tmp / "s-surface.png"
    shutil.copyfile(sample_path(), treebank)
    output = env.tmp / "s.json"
    return Case(_quiet("surface", "--model", NO_MODEL, "--treebank", str(treebank), "--output", str(output)),
                [f"figure beside --output {treebank}", "is also an input"], inputs=[treebank], absent=[output])


@refused("report: --output is an existing file")
def _(env):
    existing = env.tmp / "report.txt"
    existing.write_text("not a folder\n")
    return Case(_quiet("report", "--model", NO_MODEL, "--output", str(existing)),
                [f"--output {existing}", "the report is a folder"], inputs=[existing])


@refused("report: a folder that cannot be written")
def _(env):
    import probing.atomic

    locked = env.tmp / "locked"
    locked.mkdir()
    real_access = os.access
    env.monkeypatch.setattr(probing.atomic.os, "access",
                            lambda path, mode, **kw: Path(path) != locked and real_access(path, mode, **kw))
    return Case(_quiet("report", "--model", NO_MODEL, "--output", str(locked / "report")),
                ["--output", "permission denied"], absent=[locked / "report"])


# --- option values ------------------------------------------------------------------------------


@refused("--max-length above the model's position limit")
def _(env):
    import probing.engine.feeding

    def no_batch(*args, **kwargs):
        raise AssertionError("a batch was made before --max-length was checked")

    env.monkeypatch.setattr(probing.engine.feeding, "batches_of_chunk", no_batch)  # where every batch is made
    output = env.tmp / "out.json"
    return Case(_quiet("score", "--model", env.model, "--max-length", "500", "--output", str(output)),
                ["--max-length", "500", "128"], absent=[output])


@refused("--seed -1")
def _(env):
    return Case(_quiet("score", "--model", env.model, "--seed", "-1"), ["--seed", "-1"])


@refused("--bootstrap 1000000000")
def _(env):
    return Case(_quiet("score", "--model", env.model, "--bootstrap", "1000000000"), ["--bootstrap", "1000000000"])


@refused("--device mps on a machine without one")
def _(env):
    if torch.backends.mps.is_available():
        pytest.skip("this machine has an Apple GPU")
    return Case(_quiet("surface", "--model", env.model, "--device", "mps"), ["--device", "mps"])


@refused("--device meta")
def _(env):
    return Case(_quiet("surface", "--model", env.model, "--device", "meta"), ["--device", "meta"])


for _dpi in ("0", "-5", "100000"):

    @refused(f"plot --dpi {_dpi}")
    def _(env, dpi=_dpi):
        output = env.tmp / "plot.png"
        return Case(["plot", str(env.result), "--output", str(output), "--dpi", dpi], ["--dpi", dpi],
                    inputs=[env.result], absent=[output])


@refused("surface --text: not UTF-8")
def _(env):
    text = env.tmp / "latin1.txt"
    text.write_bytes("A first line.\nCaf\u00e9 in Latin-1.\n".encode("latin-1"))
    output = env.tmp / "out.json"
    return Case(_quiet("surface", "--model", env.model, "--text", str(text), "--output", str(output)),
                [f"{text}:2", "not UTF-8"], inputs=[text], absent=[output])


# --- models -------------------------------------------------------------------------------------


def _model_copy(env: Env) -> Path:
    folder = env.tmp / "model"
    shutil.copytree(env.model, folder)
    return folder


@refused("a truncated model.safetensors")
def _(env):
    folder = _model_copy(env)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    output = env.tmp / "out.json"
    return Case(_quiet("score", "--model", str(folder), "--output", str(output)),
                ["--model", "cannot load model", str(folder)], inputs=[folder], absent=[output])


@refused("a pytorch_model.bin that is not a pickle", in_a_child=True)
def _(env):
    folder = _model_copy(env)
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x04" + b"damaged" * 100)
    output = env.tmp / "out.json"
    # a subprocess: torch warns (about the pickle's protocol) on stderr before it fails
    return Case(_quiet("score", "--model", str(folder), "--output", str(output)),
                ["--model", "cannot load model"], inputs=[folder], absent=[output], subprocess=True)


@refused("a pytorch_model.bin pickle that may not be loaded")
def _(env):
    folder = _model_copy(env)
    (folder / "model.safetensors").unlink()
    torch.save({"bert.embeddings.word_embeddings.weight": Fraction(1, 3)}, folder / "pytorch_model.bin")
    output = env.tmp / "out.json"
    return Case(_quiet("score", "--model", str(folder), "--output", str(output)),
                ["--model", "cannot load model"], inputs=[folder], absent=[output])


@refused("a hub id without a network")
def _(env):
    # this machine has no route to the hub; the check must give up fast, not retry for half a minute
    hub_id = "probing-tests/no-such-checkpoint"
    return Case(_quiet("score", "--model", hub_id), ["--model", hub_id], within_seconds=10)


@refused("a local model folder that does not exist")
def _(env):
    missing = env.tmp / "no-such-model"
    return Case(_quiet("score", "--model", str(missing)), ["--model", "model folder not found", str(missing)],
                within_seconds=10)


# --- damaged result files -----------------------------------------------------------------------

DAMAGES = {
    "a negative count": (lambda r: r["relations"]["all"]["heads"]["dep_to_head"][0].__setitem__(0, -1),
                         "relations.all.heads.dep_to_head[0][0]"),
    "a count above its total": (
        lambda r: r["relations"]["all"]["heads"]["head_to_dep"][1].__setitem__(2, r["relations"]["all"]["total"] + 1),
        "relations.all.heads.head_to_dep[1][2]"),
    "a float where a count belongs": (lambda r: r["relations"]["all"].__setitem__("total", 8.0), "relations.all.total"),
    "a missing field": (lambda r: r["relations"]["all"].pop("baselines"), "relations.all.baselines"),
    "a bootstrap array that is not base64": (
        lambda r: r["state"]["boot_heads"].__setitem__("data", "not base64!"), "state.boot_heads"),
    "a bootstrap array of the wrong size": (
        lambda r: r["state"]["boot_total"].__setitem__("data", r["state"]["boot_heads"]["data"]), "state.boot_total"),
    "an array whose byte layout is unknown": (
        lambda r: r["state"]["boot_total"].__setitem__("layout", "bit-planes"), "state.boot_total: cannot be decoded"),
    "state counts that differ from the relations": (
        lambda r: r["state"].__setitem__("total", encode_array(decode_array(r["state"]["total"]) + 1)),
        "state.total: differs from the counts the result shows"),
    "a newer schema_version": (lambda r: r.__setitem__("schema_version", "4"), "schema_version"),
    "a tokenizer block that says 'yes' for fast": (lambda r: r["model"]["tokenizer"].__setitem__("fast", "yes"),
                                                   "model.tokenizer.fast: expected true or false"),
    "a half that is neither even nor odd": (
        lambda r: r["input"].__setitem__("half", {"half": "third", "limit": None, "rule": "?"}),
        "input.half.half: expected even or odd"),
    "offsets in the config that are not numbers": (lambda r: r["config"].__setitem__("offsets", [-1, "x"]),
                                                   "config.offsets[1]: expected an integer, found 'x'"),
    "a baseline whose offset is not a number": (
        lambda r: r["relations"]["all"]["baselines"].__setitem__("left", 0),
        "relations.all.baselines.left: is not an offset"),
}

for _damage in DAMAGES:
    for _command in ("merge", "leaderboard", "plot"):

        @refused(f"{_command}: {_damage}")
        def _(env, damage=_damage, command=_command):
            spoil, where = DAMAGES[damage]
            result = json.loads(env.result.read_text())
            spoil(result)
            env.result.write_text(json.dumps(result, indent=1))
            output = env.tmp / ("merged.json" if command == "merge" else "board.md" if command == "leaderboard"
                                else "plot.png")
            return Case([command, str(env.result), "--output", str(output)], [f"{env.result}: {where}"],
                        inputs=[env.result], absent=[output])


# --- runs that would score nothing --------------------------------------------------------------


@refused("every sentence longer than --max-length")
def _(env):
    output = env.tmp / "out.json"
    return Case(_quiet("score", "--model", env.model, "--limit", "10", "--max-length", "8", "--output", str(output)),
                ["all 10 units are longer than 8 tokens"], inputs=[env.treebank], absent=[output])


LONG_SENTENCE = "".join(
    f"{i}\tword\tword\tX\t_\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}\t_\t_\n" for i in range(1, 201)
)


@refused("every sentence longer than the model allows, without transformers' warning", in_a_child=True)
def _(env):
    treebank = env.tmp / "long.conllu"
    treebank.write_text(LONG_SENTENCE + "\n" + LONG_SENTENCE + "\n", encoding="utf-8")
    output = env.tmp / "out.json"

    # a subprocess: transformers' logger writes to the stderr it found at import, out of capsys's reach
    return Case(_quiet("surface", "--model", env.model, "--treebank", str(treebank), "--output", str(output)),
                [f"{treebank}:", "all 2 units are longer than 128 tokens"], inputs=[treebank], absent=[output],
                subprocess=True)


@refused("an empty --shard")
def _(env):
    output = env.tmp / "out.json"
    return Case(_quiet("score", "--model", env.model, "--limit", "2", "--shard", "3/4", "--output", str(output)),
                ["shard 3/4 holds no unit"], absent=[output])


# --- issue 27: a model folder's files are inputs ---------------------------------------------------

for _command, _name in (("score", "config.json"), ("score", "model.safetensors"), ("surface", "tokenizer.json"),
                        ("surface", "new.json"), ("trees", "config.json")):

    @refused(f"{_command}: --output {_name} inside the --model folder")
    def _(env, command=_command, name=_name):
        folder = _model_copy(env)
        return Case(_quiet(command, "--model", str(folder), "--limit", "2", "--output", str(folder / name)),
                    ["--output", f"is inside {folder}", "a folder this run reads"], inputs=[folder])


@refused("compare: --output inside the --second-model folder")
def _(env):
    folder = _model_copy(env)
    return Case(_quiet("compare", "--model", env.model, "--second-model", str(folder), "--limit", "2",
                       "--output", str(folder / "config.json")),
                ["--output", f"is inside {folder}"], inputs=[folder])


# --- issue 27: path names over the system's limit (ENAMETOOLONG) -----------------------------------

LONG_NAME = "n" * 300

for _label, _argv, _option in (
    ("score --treebank", lambda env: _quiet("score", "--model", NO_MODEL, "--treebank", str(env.tmp / LONG_NAME)),
     "--treebank"),
    ("trees --treebank", lambda env: _quiet("trees", "--model", NO_MODEL, "--treebank", str(env.tmp / LONG_NAME)),
     "--treebank"),
    ("score --output", lambda env: _quiet("score", "--model", NO_MODEL, "--output", str(env.tmp / LONG_NAME / "r.json")),
     "--output"),
    ("score --model", lambda env: _quiet("score", "--model", str(env.tmp / LONG_NAME)), "--model"),
    ("a leaderboard RESULT", lambda env: ["leaderboard", str(env.tmp / f"{LONG_NAME}.json")], "RESULT"),
    ("a merge PART", lambda env: ["merge", str(env.result), str(env.tmp / f"{LONG_NAME}.json"), "--output",
                                  str(env.tmp / "merged.json")], "PART"),
):

    @refused(f"ENAMETOOLONG: {_label}")
    def _(env, argv=_argv, option=_option):
        return Case(argv(env), [f"{option}: a name in the path is 30", "bytes long"], inputs=[env.result])


# --- issue 27: held-out blocks, hostile JSON, reference files -----------------------------------------


@pytest.fixture(scope="module")
def heldout_result(tmp_path_factory) -> Path:
    """A held-out probe result of the tiny BERT: chosen on the sample's first 20 sentences, reported on the next 20."""
    folder = tmp_path_factory.mktemp("heldout")
    sample_split(20, 20, folder)
    path = folder / "h.json"
    assert main(["score", "--quiet", "--model", tiny_bert(), "--treebank", str(folder / "test.conllu"),
                 "--select-on", str(folder / "dev.conllu"), "--bootstrap", "20", "--output", str(path)]) == 0
    return path


def _dobj(result: dict) -> dict:
    return result["heldout"]["relations"]["dobj"]


HELDOUT_DAMAGES = {
    "a NaN held-out accuracy": (lambda r: _dobj(r)["heldout"]["head"].__setitem__("accuracy", float("nan")),
                                "NaN, which is not a number"),
    "a held-out layer 99 of a 2-layer model": (lambda r: _dobj(r)["heldout"]["head"].__setitem__("layer", 99),
                                               "heldout.relations.dobj.heldout.head.layer: layer 99 does not exist"),
    "a short held-out interval": (lambda r: _dobj(r)["heldout"]["head"].__setitem__("interval", [0.1]),
                                  "heldout.relations.dobj.heldout.head.interval: expected 2 entries"),
    "a reversed held-out interval": (lambda r: _dobj(r)["heldout"]["baseline"].__setitem__("interval", [0.9, 0.1]),
                                     "heldout.relations.dobj.heldout.baseline.interval: [0.9, 0.1] is not an interval"),
    "an accuracy above 1 in dev": (lambda r: _dobj(r)["dev"]["head"].__setitem__("accuracy", 23.8),
                                   "heldout.relations.dobj.dev.head.accuracy: expected a number between 0 and 1"),
    "a relation missing from heldout": (lambda r: r["heldout"]["relations"].pop("det"), "heldout.relations: has"),
    "a held-out dev block that is a list": (lambda r: _dobj(r).__setitem__("dev", []),
                                            "heldout.relations.dobj.dev: expected an object"),
    "a held-out block without relations": (lambda r: r["heldout"].pop("relations"), "heldout.relations: missing"),
}

for _damage in HELDOUT_DAMAGES:
    for _command in ("leaderboard", "plot", "merge"):

        @refused(f"{_command}: {_damage}")
        def _(env, damage=_damage, command=_command):
            spoil, where = HELDOUT_DAMAGES[damage]
            result = json.loads(env.heldout.read_text())
            spoil(result)
            env.result.write_text(json.dumps(result))
            output = env.tmp / ("merged.json" if command == "merge" else "board.md" if command == "leaderboard"
                                else "plot.png")
            return Case([command, str(env.result), "--output", str(output)], [str(env.result), where],
                        inputs=[env.result], absent=[output])


def _set(path: str, value) -> Callable[[dict], None]:
    """A damage that sets one field, named as a result's error names it: ``heads.mds[0]``, ``a.b[1][2]`` (no key
    of the path may hold a dot)."""
    keys = [int(key) if key.isdigit() else key for key in path.replace("[", ".").replace("]", "").split(".")]

    def spoil(result: dict) -> None:
        functools.reduce(lambda node, key: node[key], keys[:-1], result)[keys[-1]] = value

    return spoil


def _drop(path: str) -> Callable[[dict], None]:
    *parents, last = path.split(".")
    return lambda result: functools.reduce(lambda node, key: node[key], parents, result).pop(last)


PAYLOAD_COMMANDS = {"ablation": ["ablate", "--each-layer", "--metric", "mlm", "--bootstrap", "10"]}
"""The command line that makes an analysis's result, where it is not ``probing ANALYSIS``."""

PAYLOAD_DAMAGES = {
    "surface": {
        "a share above 1": (_set("surface.heads.self[0][0]", 1.5), "surface.heads.self[0][0]: 1.5 is a share"),
        "an entropy above uniform attention's": (_set("surface.heads.entropy[1][2]", 99.0),
                                                 "surface.heads.entropy[1][2]: 99.0 nats"),
        "a grid with a layer too few": (lambda r: r["surface"]["heads"]["previous"].pop(),
                                        "surface.heads.previous: expected 2 layers"),
        "a layer mean that is not its heads' mean": (_set("surface.layer_means.next[1]", 0.9),
                                                     "surface.layer_means.next[1]: 0.9 is not the mean"),
        "query counts that do not add up": (lambda r: r["surface"]["queries"].__setitem__(
            "other", r["surface"]["queries"]["other"] + 1), "surface.queries: separator"),
        "num_heads that is not the grids'": (_set("surface.num_heads", 3), "surface.num_heads: is 3"),
        "a state array of the wrong shape": (lambda r: r["state"]["sum.self"].__setitem__("shape", [2, 3]),
                                             "state.sum.self.shape: is [2, 3], expected [2, 4]"),
    },
    "heads": {
        "an asymmetric divergence": (_set("heads.divergence.mean[0][1]", 0.5), "heads.divergence.mean[0][1]: 0.5"),
        "a divergence above ln 2": (_set("heads.divergence.mean[2][5]", 0.8), "heads.divergence.mean[2][5]: 0.8 nats"),
        "a head's divergence from itself": (_set("heads.divergence.mean[3][3]", 0.1), "heads.divergence.mean[3][3]"),
        "an unknown behaviour": (_set("heads.behaviour[1][3]", "sideways"), "heads.behaviour[1][3]: expected previous"),
        "an MDS map a head short": (lambda r: r["heads"]["mds"].pop(), "heads.mds: places 7 heads"),
        "divergence rows that are not the real queries": (_set("heads.divergence.rows", 1),
                                                          "heads.divergence.rows: is 1"),
        "a probe mark in layer 99": (_set("heads.probe_marks", [{"relation": "det", "layer": 99, "head": 0,
                                                                 "accuracy": 0.5}]),
                                     "heads.probe_marks[0].layer: layer 99 does not exist"),
        "its surface block damaged": (_set("surface.heads.next[0][1]", -0.2), "surface.heads.next[0][1]: -0.2"),
        "its surface state missing": (lambda r: r["state"].pop("surface.sum.self"), "state.surface.sum.self: missing"),
    },
    "gradients": {
        "a negative gradient": (_set("gradients.gradient.other[0][0]", -1.0),
                                "gradients.gradient.other[0][0]: expected a finite number >= 0"),
        "an attention share above 1": (_set("gradients.layer_attention.separator[0]", 1.5),
                                       "gradients.layer_attention.separator[0]: expected a number between 0 and 1"),
        "layer shares that do not add up to 1": (_set("gradients.layer_attention.other[1]", 0.1),
                                                 "gradients.layer_attention: layer 1's shares add up to"),
        "a kind of key missing": (_drop("gradients.gradient.punctuation"), "gradients.gradient.punctuation: missing"),
        "an unknown loss": (_set("gradients.loss", "hinge"), "gradients.loss: expected masked_lm or causal_lm"),
        "a gradient without weights": (_set("gradients.weights.separator", 0),
                                       "gradients.gradient.separator: is measured, but weights.separator is 0"),
        "a layer list a layer short": (lambda r: r["gradients"]["layer_gradient"]["first_special"].pop(),
                                       "gradients.layer_gradient.first_special: has 1 layers"),
        "a state array of the wrong shape": (_set("state.gradient.shape", [4, 2]),
                                             "state.gradient.shape: is [4, 2], expected [4, 2, 4]"),
    },
    "patterns": {
        "a type that is none of the five": (_set("types[1][2]", "sideways"),
                                            "types[1][2]: expected vertical or diagonal or vertical+diagonal"),
        "a layer of types missing": (lambda r: r["types"].pop(), "types: expected 2 layers, found 1"),
        "a head's type too many": (lambda r: r["types"][0].append("block"), "types[0]: expected 4 entries, found 5"),
    },
    "ablation": {
        "a disabled head in layer 99": (_set("conditions[1].heads", [[99, 0]]),
                                        "conditions[1].heads[0][0]: layer 99 does not exist: the model has 2 layers"),
        "a disabled head beyond its layer's heads": (_set("conditions[2].heads[0]", [1, 4]),
                                                     "conditions[2].heads[0][1]: head 4 does not exist: the model "
                                                     "has 4 heads"),
        "a disabled head that is not a pair": (_set("conditions[1].heads[0]", [0]),
                                               "conditions[1].heads[0]: expected 2 entries, found 1"),
        "a condition without its heads": (lambda r: r["conditions"][1].pop("heads"), "conditions[1].heads: missing"),
    },
}
"""Analysis -> damage -> (how to damage a valid result, what the one line must say): each refused by the
analysis's own payload schema and checks (probing/analyses/NAME/payload.py)."""

for _analysis, _damages in PAYLOAD_DAMAGES.items():
    for _damage in _damages:
        for _command in ("merge", "leaderboard"):

            @refused(f"{_command}: a {_analysis} result with {_damage}")
            def _(env, analysis=_analysis, damage=_damage, command=_command):
                spoil, where = PAYLOAD_DAMAGES[analysis][damage]
                result = json.loads(env.payloads[analysis].read_text())
                spoil(result)
                path = env.tmp / f"{analysis}.json"
                path.write_text(json.dumps(result))
                output = env.tmp / ("merged.json" if command == "merge" else "board.md")
                return Case([command, str(path), "--output", str(output)], [f"{path}: {where}"], inputs=[path],
                            absent=[output])


def _spoiled_text(env: Env, spoil: Callable[[dict], str]) -> Path:
    env.result.write_text(spoil(json.loads(env.result.read_text())))
    return env.result


@functools.lru_cache(maxsize=1)
def _bomb_data() -> str:
    """3 GiB of zeros, deflated to about 3 MB, in base64."""
    import base64
    import zlib

    deflater = zlib.compressobj(9)
    chunk = bytes(1 << 24)
    data = b"".join(deflater.compress(chunk) for _ in range((3 << 30) >> 24)) + deflater.flush()
    return base64.b64encode(data).decode()


def _bomb(result: dict) -> str:
    """boot_total as an array that inflates to 3 GiB: its declared shape must be refused before inflating."""
    result["state"]["boot_total"] = {"shape": [1 << 20, 384], "dtype": "int64", "data": _bomb_data()}
    return json.dumps(result)


HOSTILE_TEXT = {
    "nesting 200,000 deep": (lambda r: '{"a":' * 200_000 + "1" + "}" * 200_000, "nested deeper than a result"),
    "a 5,000-digit integer": (lambda r: json.dumps(r).replace('"seed": 0', '"seed": 1' + "0" * 5000, 1),
                              "a number is too long to read"),
    "a shape of 2**70": (lambda r: json.dumps({**r, "state": {
        **r["state"], "boot_total": {**r["state"]["boot_total"], "shape": [2**70]}}}), "state.boot_total.shape[0]"),
    "a 3 MB array that inflates to 3 GiB": (_bomb, "state.boot_total.shape: is [1048576, 384]"),
    "Infinity as a total": (lambda r: json.dumps(r).replace('"total": ', '"total": Infinity, "_": ', 1),
                            "Infinity, which is not a number"),
}

READERS = {
    "leaderboard": lambda env, path: ["leaderboard", str(path)],
    "plot": lambda env, path: ["plot", str(path), "--output", str(env.tmp / "plot.png")],
    "merge": lambda env, path: ["merge", str(path), "--output", str(env.tmp / "merged.json")],
    "heads --probe": lambda env, path: _quiet("heads", "--model", env.model, "--probe", str(path)),
    "score --select-on": lambda env, path: _quiet("score", "--model", env.model, "--select-on", str(path)),
}
"""Every way a result file is read: each goes through the one parser and validator."""

for _text in HOSTILE_TEXT:
    for _reader in READERS:

        @refused(f"{_reader}: {_text}", in_a_child="inflates" in _text)
        def _(env, text=_text, reader=_reader):
            spoil, where = HOSTILE_TEXT[text]
            path = _spoiled_text(env, spoil)
            return Case(READERS[reader](env, path), [str(path), where], inputs=[path],
                        absent=[env.tmp / "plot.png", env.tmp / "merged.json"],
                        memory_gib=2 if "inflates" in text else None)


for _label, _content in (("{}", {"reference": {}}), ("a list", {"reference": []}), ("a NaN figure", None)):

    @refused(f"leaderboard --reference: {_label}")
    def _(env, content=_content):
        reference = env.tmp / "ref.json"
        if content is None:
            quoted = json.loads((REPO / "leaderboards" / "reference" / "clark2019-bert-base-wsj.json").read_text())
            quoted["reference"]["relations"]["det"]["accuracy"] = 94.3  # a percentage where a share belongs
            content = quoted
        reference.write_text(json.dumps(content))
        output = env.tmp / "board.md"
        return Case(["leaderboard", str(env.result), "--reference", str(reference), "--output", str(output)],
                    [str(reference), "reference"], inputs=[reference], absent=[output])


# --- issue 27: options named as given ---------------------------------------------------------------


@refused("coref --window 1")
def _(env):
    from coref_data import coref_treebank_path

    return Case(_quiet("coref", "--model", env.model, "--treebank", str(coref_treebank_path("all")), "--limit", "4",
                       "--window", "1"), ["--window", "at least 2"])


@refused("explore --save-results is a file")
def _(env):
    blocker = env.tmp / "saved.txt"
    blocker.write_text("a file, not a folder\n")
    return Case(_quiet("explore", "--model", NO_MODEL, "--save-results", str(blocker), "--output",
                       str(env.tmp / "page.html")), ["--save-results", f"{blocker} is a file"], inputs=[blocker],
                absent=[env.tmp / "page.html"])


@refused("patterns --hand-labels: a layer that is not a number")
def _(env):
    labels = env.tmp / "labels.csv"
    labels.write_text(f"model,layer,head,label,note\n{Path(env.model).name},1,1,block,\n{Path(env.model).name},x,1,"
                      "block,\n", encoding="utf-8")
    return Case(_quiet("patterns", "--model", env.model, "--limit", "2", "--hand-labels", str(labels)),
                [f"{labels}:3", "layer must be a number from 1, got 'x'"], inputs=[labels])


@refused("patterns --hand-labels: a head the model lacks")
def _(env):
    labels = env.tmp / "labels.csv"
    labels.write_text(f"model,layer,head,label,note\n{Path(env.model).name},9,1,block,\n", encoding="utf-8")
    return Case(_quiet("patterns", "--model", env.model, "--limit", "2", "--hand-labels", str(labels)),
                [f"{labels}:2", "head 9-1 does not exist"], inputs=[labels])


@refused("--device cpu:9")
def _(env):
    return Case(_quiet("surface", "--model", env.model, "--device", "cpu:9"), ["--device", "cpu:9"])


# --- found by the hostile campaign (issue 27) -----------------------------------------------------


@refused("explore --views inside the --model folder")
def _(env):
    folder = _model_copy(env)
    return Case(_quiet("explore", "--model", str(folder), "--limit", "2", "--bootstrap", "0", "--views",
                       str(folder / "views"), "--output", str(env.tmp / "page.html")),
                ["--views", f"is inside {folder}"], inputs=[folder], absent=[folder / "views", env.tmp / "page.html"])


@refused("compare --second-model that does not exist")
def _(env):
    missing = env.tmp / "no-such-second-model"
    return Case(_quiet("compare", "--model", env.model, "--second-model", str(missing), "--limit", "2"),
                ["--second-model", "model folder not found", str(missing)])


@refused("explore --sentences 1000000000")
def _(env):
    # each sentence view holds every head's maps: a billion were allocated at once (exit 1, out of memory)
    return Case(_quiet("explore", "--model", env.model, "--sentences", "1000000000"), ["--sentences", "at most"])


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in IN_A_CHILD else name
                                  for name in REFUSED])
def test_refused(name, env, capsys):
    case = REFUSED[name](env)
    assert (case.subprocess or case.memory_gib is not None) == (name in IN_A_CHILD), "register it in_a_child"
    assert_refused(case, env, capsys)


def assert_refused(case: Case, env: Env, capsys) -> None:
    """The promise of a refused case: exit 2, one line naming what is wrong, every input unchanged, nothing
    written. Other files of hostile cases import it (with the ``env`` fixture and its parts) to keep their
    own registries."""
    before = {path: digest(path) for path in case.inputs}
    started = time.monotonic()
    code, out, err = run_cli(case.argv, capsys, in_subprocess=case.subprocess, memory_gib=case.memory_gib)
    elapsed = time.monotonic() - started
    assert code == 2, err
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line: {err!r}"
    assert err.startswith(f"probing {case.argv[0]}: error: ")
    assert "Traceback" not in err and "Token indices sequence length" not in err
    for fragment in case.fragments:
        assert fragment in err, f"{fragment!r} not in {err!r}"
    if case.within_seconds is not None:
        assert elapsed < case.within_seconds, f"took {elapsed:.1f} s"
    for path, hashed in before.items():
        assert digest(path) == hashed, f"{path} changed"
    for path in case.absent:
        assert not path.exists() and not path.is_symlink(), f"{path} was written"
    assert not list(env.tmp.rglob(".*.tmp")), "a temporary file was left behind"
    assert not list(env.tmp.rglob("*.checkpoint")), "a checkpoint was left behind"
    if case.check:
        case.check()


# ---------------------------------------------------------------------------- accepted cases


def _score(env: Env, output: Path, *extra: str) -> list[str]:
    return _quiet("score", "--model", env.model, "--limit", "3", "--bootstrap", "0", "--output", str(output), *extra)


FOLLOWED = {
    # command: (arguments without --output, suffix, how to recognise the new content)
    "score": (lambda env: _quiet("score", "--model", env.model, "--limit", "3", "--bootstrap", "0"), ".json",
              lambda path: json.loads(path.read_text())["analysis"] == "probe"),
    "surface": (lambda env: _quiet("surface", "--model", env.model, "--limit", "3"), ".json",
                lambda path: json.loads(path.read_text())["analysis"] == "surface"),
    "leaderboard": (lambda env: ["leaderboard", str(env.result)], ".md",
                    lambda path: path.read_text().lstrip().startswith(("#", "|"))),
    "plot": (lambda env: ["plot", str(env.result)], ".png",
             lambda path: path.read_bytes().startswith(b"\x89PNG")),
}


@pytest.mark.parametrize("command", FOLLOWED)
def test_follow_symlinks_replaces_the_target_and_keeps_the_link(command, env, capsys):
    arguments, suffix, is_new = FOLLOWED[command]
    target = env.tmp / f"target{suffix}"
    code, _, err = run_cli([*arguments(env), "--output", str(target)], capsys)  # an earlier output, to replace
    assert code == 0, err
    earlier = target.stat().st_ino
    link = env.tmp / "links" / f"link{suffix}"
    link.parent.mkdir()
    link.symlink_to(target)
    code, _, err = run_cli([*arguments(env), "--output", str(link), "--follow-symlinks"], capsys)
    assert code == 0, err
    assert link.is_symlink() and link.resolve() == target
    assert is_new(target) and target.stat().st_ino != earlier  # a new file took the earlier one's place
    assert not list(env.tmp.rglob(".*.tmp"))


def test_a_replaced_output_keeps_its_mode(env, capsys):
    output = env.tmp / "out.json"
    shutil.copyfile(env.result, output)  # an earlier probe result: what score may replace
    output.chmod(0o640)
    code, _, err = run_cli(_score(env, output), capsys)
    assert code == 0, err
    assert stat.S_IMODE(output.stat().st_mode) == 0o640
    assert json.loads(output.read_text())["analysis"] == "probe"


def _dead_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.slow
def test_stale_temporaries_of_a_dead_process_are_removed_by_the_next_write(env, capsys):
    output = env.tmp / "out.json"
    stale = env.tmp / f".out.json.{_dead_pid()}.abc123.tmp"
    stale.write_text("half a result")
    live = env.tmp / f".out.json.{os.getppid()}.def456.tmp"  # a write still in progress elsewhere
    live.write_text("a write in progress")
    other = env.tmp / f".other.json.{_dead_pid()}.ghi789.tmp"  # another output's: not this write's business
    other.write_text("another output's leftover")
    code, _, err = run_cli(_score(env, output), capsys)
    assert code == 0, err
    assert not stale.exists()
    assert live.read_text() == "a write in progress" and other.exists()
    assert json.loads(output.read_text())["analysis"] == "probe"


WRITER = """
import sys, time
from probing.atomic import atomic_path
with atomic_path(sys.argv[1]) as temporary:
    temporary.write_text("half of a new result")
    print(temporary, flush=True)
    time.sleep(120)
"""


@pytest.mark.slow
def test_a_killed_write_leaves_the_old_file_and_the_next_write_cleans_up(env, capsys):
    output = env.tmp / "out.json"
    shutil.copyfile(env.result, output)  # the previous result
    previous = output.read_bytes()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(output)], stdout=subprocess.PIPE, text=True,
                              env=_env())
    try:
        temporary = Path(writer.stdout.readline().strip())
        assert temporary.name.startswith(f".out.json.{writer.pid}.") and temporary.is_file()
    finally:
        writer.send_signal(signal.SIGKILL)  # kill -9 mid-write: no cleanup runs
        writer.wait(timeout=30)
        writer.stdout.close()
    assert output.read_bytes() == previous
    assert temporary.is_file()
    code, _, err = run_cli(_score(env, output), capsys)
    assert code == 0, err
    assert not temporary.exists()
    assert json.loads(output.read_text())["analysis"] == "probe"


# ---------------------------------------------------------------------------- names from files (issue 27, 4-6)
#
# Relation, model and treebank names and words come from files the user did not write; each output format
# escapes them its own way (probing.report.escaping). Each row runs a command on such names and reads back
# what it wrote: the names are text there, never markup, a formula, a new row or a path.

HOSTILE_RELATION = "=HYPERLINK(\"http://x\")|<b>r</b>\n\nr"
HOSTILE_MODEL = "@SUM(1)|<i>m</i>\n\nm"
HOSTILE_TREEBANK = "/data/+cmd|t.conllu"


@dataclass
class Written:
    """A command that must run (exit 0, nothing on stdout if ``output`` is a file) and ``check`` what it wrote;
    ``may_refuse``: exit 2 with one line is as good (a result validator may refuse the name itself)."""

    argv: list[str]
    check: Callable[[int], None]
    may_refuse: bool = False


WRITTEN: dict[str, Callable[[Env], Written]] = {}
written = registrar(WRITTEN)


def _hostile_result(env: Env, relation: str = HOSTILE_RELATION) -> Path:
    """The valid result with its model, treebank and its relation ``det`` renamed."""
    result = json.loads(env.result.read_text())
    result["relations"] = {(relation if name == "det" else name): entry for name, entry in result["relations"].items()}
    result["model"]["name"] = HOSTILE_MODEL
    result["treebank"]["path"] = HOSTILE_TREEBANK
    path = env.tmp / "hostile.json"
    path.write_text(json.dumps(result))
    return path


@written("leaderboard --format csv: names that a spreadsheet would run as formulas")
def _(env):
    output = env.tmp / "board.csv"

    def check(code):
        import csv

        rows = list(csv.reader(output.read_text(encoding="utf-8").splitlines(keepends=True)))
        header, model = rows[0], next(row for row in rows if row[2] == "model")
        assert f"'{HOSTILE_RELATION}_acc_pct" in header  # a column header
        assert model[1] == f"'{HOSTILE_MODEL}" and model[4] == "'+cmd|t"  # the model, the treebank file's stem
        offsets = [cell for row in rows[1:] for cell in row if cell in ("+1", "-1", "+2", "-2", "+3", "-3")]
        assert offsets, "the offsets (numbers) were prefixed too"
        formulas = [cell for row in rows for cell in row if len(cell) > 1 and cell[0] in "=+-@\t\r"
                    and cell not in offsets]
        assert not formulas, formulas

    return Written(["leaderboard", str(_hostile_result(env)), "--format", "csv", "--output", str(output)], check)


def _unescaped_pipes(line: str) -> int:
    import re

    return len(re.findall(r"(?<!\\)(?:\\\\)*\|", line))


@written("leaderboard --format md: a | and a blank line in a model and a relation name")
def _(env):
    output = env.tmp / "board.md"

    def check(code):
        lines = output.read_text(encoding="utf-8").splitlines()
        table = [line for line in lines if line.startswith("|")]
        assert len(table) == 2 + 2  # header, rule, the model's row and the baseline's
        assert len({_unescaped_pipes(line) for line in table}) == 1, table
        assert any("@SUM(1)\\|&lt;i>m&lt;/i> m" in line for line in table)  # no tag: the name is text

    return Written(["leaderboard", str(_hostile_result(env)), "--output", str(output)], check)


@written("leaderboard --format latex: a blank line in a name")
def _(env):
    output = env.tmp / "board.tex"

    def check(code):
        import re

        text = output.read_text(encoding="utf-8")
        assert "\n\n" not in text.strip("\n")  # a blank line would end the tabular's paragraph
        lines = text.splitlines()
        body = lines[lines.index("\\midrule") + 1: lines.index("\\bottomrule")]
        assert len(body) == 2 and all(line.endswith("\\\\") for line in body)
        columns = {len(re.split(r"(?<!\\)&", line)) for line in body + [lines[lines.index("\\toprule") + 1]]}
        assert columns == {4 + 5 + 1}, columns  # rank, model, selection, treebank, five relations, mean

    return Written(["leaderboard", str(_hostile_result(env)), "--format", "latex", "--output", str(output)], check)


@written("explore: a treebank word that would put the data script into a script-escape state")
def _(env):
    treebank = env.tmp / "words.conllu"
    words = ["<!--<script>", "</script><b>x</b>", "&amp;"]
    treebank.write_text("".join(f"{i}\t{word}\t_\tX\t_\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}\t_\t_\n"
                                for i, word in enumerate(words, start=1)) + "\n", encoding="utf-8")
    output = env.tmp / "page.html"

    def check(code):
        import re

        text = output.read_text(encoding="utf-8")
        data = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', text, re.DOTALL).group(1)
        assert "<" not in data and ">" not in data and "&" not in data
        assert json.loads(data)["sentences"][0]["words"] == words
        assert text.count("<script") == 3 and text.count("</script>") == 3

    return Written(_quiet("explore", "--model", env.model, "--treebank", str(treebank), "--bootstrap", "0",
                          "--relations", "dep", "--output", str(output)), check)


@written("explore --views: a relation read from --result that is a path")
def _(env):
    relation = "../../escaped/PWNED"
    result = _hostile_result(env, relation)
    views = env.tmp / "deep" / "views"

    def check(code):
        assert not (env.tmp / "escaped").exists(), "a view was written outside --views"
        if code == 0:
            names = sorted(path.name for path in views.iterdir())
            assert len(names) == 2 * 5 and all(name.endswith((".svg", ".png")) for name in names)
            assert sum(name.startswith("%2E.%2F..%2Fescaped%2FPWNED-") for name in names) == 2, names

    return Written(_quiet("explore", "--model", env.model, "--treebank", str(sample_path()), "--limit", "5",
                          "--bootstrap", "0", "--result", str(result), "--views", str(views),
                          "--output", str(env.tmp / "page.html")), check, may_refuse=True)


@pytest.mark.parametrize("name", WRITTEN)
def test_names_from_files_stay_text(name, env, capsys):
    case = WRITTEN[name](env)
    code, out, err = run_cli(case.argv, capsys)
    if case.may_refuse and code == 2:
        assert err.count("\n") == 1 and "Traceback" not in err, err
    else:
        assert code == 0, err
    case.check(code)


# ---------------------------------------------------------------------------- accepted cases of issue 27


def _rollout_argv(env: Env, command: str) -> tuple[list[str], list[Path]]:
    """A rollout run of ``command`` and the files it must write (all of them, or none)."""
    from coref_data import coref_treebank_path

    if command == "heads":
        return (_quiet("heads", "--model", env.model, "--limit", "4", "--attention", "rollout", "--output",
                       str(env.tmp / "h.json")), [env.tmp / "h.json", env.tmp / "h-heads.png"])
    if command == "coref":
        return (_quiet("coref", "--model", env.model, "--treebank", str(coref_treebank_path("all")), "--limit", "12",
                       "--bootstrap", "10", "--attention", "rollout", "--output", str(env.tmp / "c.json")),
                [env.tmp / "c.json"])
    folder = env.tmp / "report"
    return (_quiet("report", "--model", env.model, "--limit", "4", "--bootstrap", "10", "--attention", "rollout",
                   "--output", str(folder)), [folder / "README.md", folder / "heads-heads.png", folder / "probe.json"])


@pytest.mark.parametrize("command", ["heads", "coref", "report"])
def test_rollout_runs_and_writes_every_output(command, env, capsys):
    """Rollout has one map per layer: heads drew its map with the model's head count (and crashed after writing
    its JSON), coref refused its own result's state, report blamed a --probe nobody gave."""
    argv, written = _rollout_argv(env, command)
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    for path in written:
        assert path.is_file(), f"{path} was not written"
    result = json.loads(written[0].read_text()) if written[0].suffix == ".json" else None
    if result is not None:
        assert result["config"]["attention"] == "rollout"


def test_a_relation_label_no_word_has_is_counted_0_and_named_on_stderr(env, capsys):
    """A UD label the sample never uses (reparandum) is a valid question with no pair; a name that is no UD label
    at all is refused before the model (tests/test_hostile_ablate.py)."""
    output = env.tmp / "out.json"
    code, _, err = run_cli(_score(env, output, "--relations", "det", "reparandum"), capsys)
    assert code == 0, err
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "--relations reparandum" in warnings[0], err
    result = json.loads(output.read_text())
    assert result["relations"]["reparandum"]["total"] == 0 and result["relations"]["det"]["total"] > 0
