"""Hostile input to ``probing ablate`` and to every command that takes relations (issues 43 and 45).

Each refused case is a row of :data:`REFUSED`, held to the promise of ``test_hostile.assert_refused``: exit 2,
one line naming the option or file, nothing written, every input unchanged. A case that names ``NO_MODEL`` (a
folder that does not exist) proves its check comes before the model: were it later, the missing model would be
reported instead. A case that needs the real tiny model to be refused (a DEV result of other weights is told
apart only by the loaded model's fingerprint) carries ``within_seconds`` instead.

- ``ablate --chosen --select-on``: DEV is checked as ``probing score --select-on`` checks it, with the same
  function (probing.stats.heldout.check_dev_test): not the sentences measured (a held-out result's counts are its
  TEST's), not one shard, of these weights read this way, holding the relations and heads asked for.
- An option that does nothing in its combination (``--k``, ``--random``, ``--select-on`` without ``--chosen``)
  is refused by name; counts have a stated cap (``--random``, ``--k``).
- An unknown relation is refused by every command that takes one, before the model, with "did you mean".
- A metric the model's config.json rules out is refused before loading, suggesting only a metric that runs.
"""

# ruff: noqa: F811 (the fixtures imported from test_hostile are pytest's, taken by name as parameters)

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from test_hostile import (  # noqa: F401
    NO_MODEL,
    Case,
    Env,
    _quiet,
    assert_refused,
    env,
    heldout_result,
    payload_results,
    registrar,
    run_cli,
    valid_result,
)

from probing.cli import main
from probing.testing import sample_split, tiny_bert

DEV_VARIANTS = {
    # name: extra options of the probing score run that makes it (on the dev split, of the tiny BERT)
    "plain": [],
    "shard": ["--shard", "0/2"],
    "norms": ["--attention", "norms"],
    "random-init": ["--random-init"],
    "first-piece": ["--pool-from", "first"],
}


@pytest.fixture(scope="module")
def devs(tmp_path_factory) -> dict[str, Path]:
    """DEV results of the sample's dev split (first 6 sentences), one per variant, and one of other weights."""
    folder = tmp_path_factory.mktemp("devs")
    dev, _ = sample_split()
    made = {}
    for name, extra in {**DEV_VARIANTS, "other-model": None}.items():
        model = tiny_bert(seed=1) if extra is None else tiny_bert()
        made[name] = folder / f"{name}.json"
        assert main(["score", "--quiet", "--model", model, "--treebank", dev, "--limit", "6", "--relations", "det",
                     "nsubj", "--bootstrap", "0", *(extra or []), "--output", str(made[name])]) == 0
    return made


@pytest.fixture(scope="module")
def base_bert(tmp_path_factory) -> str:
    """The tiny BERT without its masked-LM head (config.json: BertModel), as sentence-embedding checkpoints such as
    all-MiniLM-L6-v2 ship: neither language-model metric can run on it."""
    from transformers import BertModel

    source, folder = Path(tiny_bert()), tmp_path_factory.mktemp("base") / "bert-base-only"
    BertModel.from_pretrained(source).save_pretrained(folder)
    for item in source.iterdir():
        if item.name.startswith("tokenizer") or item.name in ("vocab.txt", "special_tokens_map.json"):
            shutil.copy(item, folder / item.name)
    return str(folder)


REFUSED: dict[str, Callable[..., Case]] = {}
SLOW: set[str] = set()
"""The cases run in a subprocess (so that a warning printed on the way would be seen): marked slow."""
refused = registrar(REFUSED, SLOW)


def _ablate(*argv: str, model: str = NO_MODEL, metric: str = "mlm") -> list[str]:
    return _quiet("ablate", "--model", model, "--metric", metric, "--bootstrap", "10", *argv)


def _test_split() -> str:
    return sample_split()[1]


# --- issue 43: DEV of --select-on is checked as probing score checks it, before the model ------------------------


@refused("ablate: a held-out result (its counts are its TEST's) chooses on the TEST it would measure")
def _(env, devs, base_bert):
    report_on = env.heldout.parent / "test.conllu"  # the held-out result's TEST
    output = env.tmp / "out.json"
    return Case(_ablate("--treebank", str(report_on), "--chosen", "det", "--select-on", str(env.heldout),
                        "--output", str(output)),
                [f"--select-on {env.heldout}", "same sentences", "in-sample selection"],
                inputs=[env.heldout, report_on], absent=[output])


@refused("ablate: an in-sample result of the very sentences measured (the sample, --limit 5)")
def _(env, devs, base_bert):
    return Case(_ablate("--limit", "5", "--chosen", "det", "--select-on", str(env.result)),
                ["--select-on", "same sentences"], inputs=[env.result])


@refused("ablate: a result of the units' bytes under another file name")
def _(env, devs, base_bert):
    copy = env.tmp / "renamed.conllu"
    shutil.copyfile(sample_split()[0], copy)
    return Case(_ablate("--treebank", str(copy), "--chosen", "det", "--select-on", str(devs["plain"])),
                ["--select-on", "same sentences"], inputs=[devs["plain"], copy])


@refused("ablate: DEV is one shard of a run")
def _(env, devs, base_bert):
    return Case(_ablate("--treebank", _test_split(), "--chosen", "det", "--select-on", str(devs["shard"])),
                ["--select-on", "one shard of DEV", "probing merge"], inputs=[devs["shard"]])


@refused("ablate: DEV was read as norms, this run as weights")
def _(env, devs, base_bert):
    return Case(_ablate("--treebank", _test_split(), "--chosen", "det", "--select-on", str(devs["norms"])),
                ["--select-on", "config.attention", "'norms' in DEV but 'weights' in this run"], inputs=[devs["norms"]])


@refused("ablate: DEV of the random-init control, this run of the trained weights")
def _(env, devs, base_bert):
    return Case(_ablate("--treebank", _test_split(), "--chosen", "det", "--select-on", str(devs["random-init"])),
                ["--select-on", "random_init"], inputs=[devs["random-init"]])


@refused("ablate: DEV pooled a split word's first piece, this run its mean")
def _(env, devs, base_bert):
    return Case(_ablate("--treebank", _test_split(), "--chosen", "det", "--select-on", str(devs["first-piece"])),
                ["--select-on", "config.pooling"], inputs=[devs["first-piece"]])


@refused("ablate: DEV of other weights of the same shape (refused once loaded, before any pass)")
def _(env, devs, base_bert):
    output = env.tmp / "out.json"
    return Case(_ablate("--treebank", _test_split(), "--chosen", "det", "--select-on", str(devs["other-model"]),
                        "--output", str(output), model=env.model),
                ["--select-on", "model.fingerprint"], inputs=[devs["other-model"]], absent=[output], within_seconds=30)


@refused("ablate: DEV lacks a relation of --chosen")
def _(env, devs, base_bert):
    return Case(_ablate("--treebank", _test_split(), "--chosen", "amod", "--select-on", str(devs["plain"])),
                ["--select-on", "lacks relations ['amod']"], inputs=[devs["plain"]])


@refused("ablate: --k beyond the heads of DEV's model")
def _(env, devs, base_bert):
    return Case(_ablate("--treebank", _test_split(), "--chosen", "det", "--k", "9", "--select-on", str(devs["plain"])),
                ["--k", "8 heads", "got 9"], inputs=[devs["plain"]])


@refused("score: --select-on the very treebank of --treebank is refused at once")
def _(env, devs, base_bert):
    return Case(_quiet("score", "--model", NO_MODEL, "--treebank", str(env.treebank), "--select-on", str(env.treebank)),
                ["--select-on", "same sentences"], inputs=[env.treebank])


@refused("score: a DEV result of the treebank reported on is refused before the model")
def _(env, devs, base_bert):
    return Case(_quiet("score", "--model", NO_MODEL, "--limit", "5", "--select-on", str(env.result)),
                ["--select-on", "same sentences"], inputs=[env.result])


@refused("score: a DEV result that is one shard is refused before the model")
def _(env, devs, base_bert):
    return Case(_quiet("score", "--model", NO_MODEL, "--treebank", _test_split(), "--relations", "det",
                       "--select-on", str(devs["shard"])),
                ["--select-on", "one shard of DEV"], inputs=[devs["shard"]])


# --- issue 45 item 5: options that would do nothing, and unknown relations -------------------------------------


@refused("ablate --each-layer --k 3: --k does nothing without --chosen")
def _(env, devs, base_bert):
    return Case(_ablate("--each-layer", "--k", "3"), ["--k", "without --chosen"])


@refused("ablate --heads 1-1 --random 5: --random does nothing without --chosen")
def _(env, devs, base_bert):
    return Case(_ablate("--heads", "1-1", "--random", "5"), ["--random", "without --chosen"])


@refused("ablate --each-layer --select-on X: --select-on does nothing without --chosen")
def _(env, devs, base_bert):
    return Case(_ablate("--each-layer", "--select-on", str(devs["plain"])), ["--select-on", "without --chosen"],
                inputs=[devs["plain"]])


for _command, _argv in {
    "score": lambda env: ["score", "--relations", "det", "dboj"],
    "ablate --relations": lambda env: ["ablate", "--metric", "probe", "--each-layer", "--relations", "dboj"],
    "trees": lambda env: ["trees", "--relations", "nsubj", "dboj"],
    "explore": lambda env: ["explore", "--relations", "dboj", "--output", str(env.tmp / "page.html")],
}.items():

    @refused(f"{_command}: an unknown relation (dboj) is refused before the model, with did you mean")
    def _(env, devs, base_bert, argv=_argv):
        command, *rest = argv(env)
        return Case(_quiet(command, "--model", NO_MODEL, *rest),
                    ["--relations", "unknown relation 'dboj'", "did you mean dobj?"], absent=[env.tmp / "page.html"])


@refused("ablate --chosen: an unknown relation is refused before the model, with did you mean")
def _(env, devs, base_bert):
    return Case(_ablate("--treebank", _test_split(), "--chosen", "nsbuj", "--select-on", str(devs["plain"])),
                ["--chosen", "unknown relation 'nsbuj'", "did you mean nsubj?"], inputs=[devs["plain"]])


@refused("ablate --chosen: a typo in a subtyped label keeps the subtype in its suggestion")
def _(env, devs, base_bert):
    return Case(_ablate("--treebank", _test_split(), "--chosen", "nsbuj:pass", "--select-on", str(devs["plain"])),
                ["--chosen", "did you mean nsubj:pass?"], inputs=[devs["plain"]])


@refused("plot --relation: a relation the result lacks comes with did you mean")
def _(env, devs, base_bert):
    output = env.tmp / "figure.png"
    return Case(["plot", str(env.result), "--relation", "dte", "--output", str(output)],
                ["--relation", "'dte' is not in this result", "did you mean det?"], inputs=[env.result], absent=[output])


# --- issue 45 item 2: counts with a stated cap -------------------------------------------------------------------


@refused("ablate --random 1000000: past the stated cap of 10000 random sets")
def _(env, devs, base_bert):
    return Case(_ablate("--treebank", _test_split(), "--chosen", "det", "--random", "1000000",
                        "--select-on", str(devs["plain"])), ["--random", "1 to 10000", "got 1000000"])


@refused("ablate --k 5000: past the stated cap of 1000 heads")
def _(env, devs, base_bert):
    return Case(_ablate("--treebank", _test_split(), "--chosen", "det", "--k", "5000",
                        "--select-on", str(devs["plain"])), ["--k", "1 to 1000", "got 5000"])


# --- issue 45 item 6: a metric the model's config rules out, refused before it loads ------------------------------


@refused("ablate --metric minimal-pairs on a masked LM: refused from config.json, no raw warning", slow=True)
def _(env, devs, base_bert):
    # a subprocess, so that a warning printed while loading would be seen (it breaks the one-line promise)
    return Case(_ablate("--each-layer", "--paradigms", "wh_island", model=base_bert, metric="minimal-pairs"),
                ["--metric minimal-pairs", "not a causal LM", "config.json", "--metric probe"], subprocess=True,
                within_seconds=60)


@refused("ablate --metric lm on a masked LM without its MLM head suggests only what runs (not --metric mlm)", slow=True)
def _(env, devs, base_bert):
    return Case(_ablate("--each-layer", model=base_bert, metric="lm"),
                ["--metric lm", "not a causal LM", "no trained masked-LM head either", "--metric probe"],
                subprocess=True, within_seconds=60)


@refused("ablate --metric mlm on a checkpoint without an MLM head: refused before it loads", slow=True)
def _(env, devs, base_bert):
    return Case(_ablate("--each-layer", model=base_bert, metric="mlm"),
                ["--metric mlm", "no trained masked-LM head", "--metric probe"], subprocess=True, within_seconds=60)


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name
                                  for name in REFUSED])
def test_refused(name, env, devs, base_bert, capsys):
    assert_refused(REFUSED[name](env, devs, base_bert), env, capsys)


# ---------------------------------------------------------------------------- what keeps working


def test_mlm_suggested_where_it_runs(env, capsys):
    """--metric lm on a masked LM that has its MLM head suggests --metric mlm, and that metric then runs."""
    code, _, err = run_cli(_ablate("--each-layer", model=env.model, metric="lm"), capsys)
    assert code == 2 and "use --metric mlm" in err, err
    code, _, err = run_cli(_ablate("--each-layer", "--limit", "3", model=env.model, metric="mlm"), capsys)
    assert code == 0, err


@pytest.mark.slow
def test_chosen_heads_and_dev_size_are_printed(env, devs, capsys):
    """ablate --chosen says which heads it chose and on how many DEV sentences: --select-limit cuts DEV, --limit the
    units measured only."""
    dev, test = sample_split()
    argv = _ablate("--treebank", test, "--limit", "6", "--chosen", "det", "--k", "1", "2", "--random", "2",
                   model=env.model)
    code, out, err = run_cli([*argv, "--select-on", dev, "--select-limit", "5"], capsys)
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.startswith("heads chosen on DEV"))
    assert f"({dev}, 5 sentences: its first 5, --select-limit 5)" in line and "det@1 " in line and "; det@2 " in line
    code, out, err = run_cli([*argv, "--select-on", str(devs["plain"])], capsys)
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.startswith("heads chosen on DEV"))
    assert f"({devs['plain']}, 6 sentences of dev.conllu, scored with --limit 6)" in line


@pytest.mark.slow
def test_a_shard_of_the_run_chooses_on_a_whole_dev_result(env, devs, capsys):
    """ablate's own --shard keeps working with a DEV result: each part chooses the same sets."""
    _, test = sample_split()
    parts = []
    for index in (0, 1):
        output = env.tmp / f"part{index}.json"
        code, _, err = run_cli([*_ablate("--treebank", test, "--limit", "6", "--chosen", "det", "--random", "2",
                                         "--select-on", str(devs["plain"]), "--shard", f"{index}/2",
                                         "--output", str(output), model=env.model)], capsys)
        assert code == 0, err
        parts.append(json.loads(output.read_text(encoding="utf-8")))
    sets = [[(condition["label"], condition["heads"]) for condition in part["conditions"]] for part in parts]
    assert sets[0] == sets[1] and len(sets[0]) == 1 + 1 + 2  # intact, det@1's chosen set, 2 random draws


def test_score_refuses_a_dev_result_of_other_weights_before_any_pass(env, devs, capsys, monkeypatch):
    """probing score compares a DEV result's weights with the model as soon as it has loaded: no pass runs (it
    compared them after scoring TEST)."""
    import probing.analyses.probe.heldout as heldout

    def no_pass(*args, **kwargs):
        raise AssertionError("a pass ran before the DEV result's model was checked")

    monkeypatch.setattr(heldout, "probe_pass", no_pass)
    output = env.tmp / "out.json"
    code, out, err = run_cli(_quiet("score", "--model", env.model, "--treebank", _test_split(), "--relations", "det",
                                    "--select-on", str(devs["other-model"]), "--output", str(output)), capsys)
    assert code == 2 and "--select-on" in err and "model.fingerprint" in err, err
    assert not output.exists()
