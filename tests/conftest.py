"""Shared fixtures: real treebanks and checkpoints when they are present, and small hand-made treebanks.

Tests that need a real UD treebank or a real checkpoint are marked
``real_data`` (``pytest -m "not real_data"`` leaves them out) and find their
files through one mechanism:

- treebanks: ``$PROBING_TREEBANKS/<name>/<name>-ud-<split>.conllu``, else the
  project's cache (``probing data fetch en_ewt`` puts them there);
- checkpoints: ``$PROBING_MODELS/<folder>`` (all-MiniLM-L6-v2,
  all-mpnet-base-v2, SmolLM2-135M-Instruct);
- pair sets: ``$PROBING_MINIMAL_PAIRS/<set>/`` (blimp, clams, rublimp).

When a file is absent the test is skipped with a one-line reason, and the
summary at the end says how many real-data tests did not run (every skipped
test, also those whose skip a session fixture raised once and pytest replayed). With
``PROBING_REQUIRE_REAL_DATA=1`` (as CI sets) an absent file fails the test
instead, so nothing is skipped quietly there.

Every test runs on ``TEST_THREADS`` torch threads, set for the whole session
before any fixture runs a model, and passed to child processes through
``OMP_NUM_THREADS``: float results depend on the number of threads in their
last bits, so a run a module fixture caches and the run a test compares with
it (in this process, a child or under torchrun, which starts its processes
on one thread) must use the same number, whatever the machine's cores.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"

collect_ignore = ["plugins"]
"""tests/plugins/ holds plug-ins that tests register themselves; collecting them (for doctests) would register
them for the whole session."""

MODEL_FOLDERS = {"minilm": "all-MiniLM-L6-v2", "mpnet": "all-mpnet-base-v2", "smollm2": "SmolLM2-135M-Instruct",
                 "gemma3": "gemma-3-270m"}
"""Short name -> the folder a real checkpoint has under $PROBING_MODELS."""

TEST_THREADS = 1
"""Torch threads in every test, and in the processes tests start. One, as torchrun gives each process: tiny
models gain nothing from threads, and a busy shared CPU makes spinning threads slow."""

REAL_DATA_SKIP = "real data: "
"""How the reason of a skip for absent real data begins (the summary counts the skips by it)."""


def _unavailable(what: str, how: str):
    reason = f"{REAL_DATA_SKIP}{what} is not available ({how})"
    if os.environ.get("PROBING_REQUIRE_REAL_DATA"):
        pytest.fail(reason + "; PROBING_REQUIRE_REAL_DATA is set, so this is a failure")
    pytest.skip(reason)


def real_treebank(name: str, split: str) -> Path:
    """A real UD treebank file, or skip (fail under PROBING_REQUIRE_REAL_DATA)."""
    from probing.data.datasets.cache import cache_dir

    filename = f"{name}-ud-{split}.conllu"
    folder = os.environ.get("PROBING_TREEBANKS")
    for candidate in ([Path(folder) / name / filename] if folder else []) + [cache_dir() / name / filename]:
        if candidate.is_file():
            return candidate
    _unavailable(f"treebank {name}:{split}", f"set PROBING_TREEBANKS or run probing data fetch {name}")


def real_minimal_pairs(subfolder: str) -> Path:
    """A folder of the real pair sets (``$PROBING_MINIMAL_PAIRS``: blimp/, clams/, rublimp/) holding ``subfolder``,
    or skip (fail under PROBING_REQUIRE_REAL_DATA)."""
    folder = os.environ.get("PROBING_MINIMAL_PAIRS")
    if folder and (Path(folder) / subfolder).is_dir():
        return Path(folder)
    _unavailable(f"the pair set folder {subfolder}/", "set PROBING_MINIMAL_PAIRS to a folder holding blimp/, clams/ "
                                                      "and rublimp/")


def real_model(short: str) -> str:
    """A real checkpoint folder, or skip (fail under PROBING_REQUIRE_REAL_DATA)."""
    folder = os.environ.get("PROBING_MODELS")
    if folder and (Path(folder) / MODEL_FOLDERS[short] / "config.json").is_file():
        return str(Path(folder) / MODEL_FOLDERS[short])
    _unavailable(f"checkpoint {MODEL_FOLDERS[short]}", "set PROBING_MODELS to a folder holding it")


@pytest.fixture(scope="session")
def minilm() -> str:
    """The real all-MiniLM-L6-v2 checkpoint folder."""
    return real_model("minilm")


@pytest.fixture(scope="session")
def ewt_dev() -> Path:
    return real_treebank("en_ewt", "dev")


def pytest_configure(config):
    config.addinivalue_line("markers", "real_data: needs a real treebank or checkpoint (see tests/conftest.py)")


DOCTEST_MODEL_WORDS = ("tiny_bert", "tiny_model", "tiny_slow_bert", "load_model", "score(", "BertModel")
"""Words in a doctest's code that build or run a model. A doctest takes no decorator: every doctest without
them is marked ``unit`` here (the unit tier's guard, below, fails one that this lets through)."""


UNIT_MODULES = frozenset({
    "test_architecture", "test_bootstrap_draws", "test_heap", "test_coref_baselines", "test_coref_entities",
    "test_coref_windows", "test_datasets", "test_findings", "test_relations", "test_repository",
    "test_sample_treebank", "test_scorer_reference", "test_startup", "test_tiers", "test_transfer", "test_treebank",
    "test_treebank_cases", "test_trees_counts", "test_trees_decode", "test_trees_ensembles", "test_trees_probes",
    "test_no_argparse_in_analyses", "test_importance_stats", "test_agreement_pairs", "test_pair_sets",
    "test_versus_family", "test_importance_across", "test_pair_scoring_homes", "test_score_config",
})
"""The test modules that need no model: their tests (but the slow and real-data ones) make the unit tier with the
doctests. A module that needs a model for one test stays out (test_cli: a mistake that is found after the model
loads), or the tier's guard fails it."""


def pytest_ignore_collect(collection_path, config):
    """Under ``-m unit`` alone, the test modules outside :data:`UNIT_MODULES` are not even imported: none of their
    tests is in the tier, and importing them (transformers' model code, the tiny models' builders) was a third of
    the tier's time. Their doctests are none either: a test module's examples live in its tests."""
    if ((config.option.markexpr or "").strip() == "unit" and collection_path.suffix == ".py"
            and collection_path.name.startswith("test_") and collection_path.parent == Path(__file__).parent
            and collection_path.stem not in UNIT_MODULES):
        return True
    return None


def pytest_collection_modifyitems(items):
    """Mark the unit tier: the tests of ``UNIT_MODULES`` and the doctests that build no model, none slow or
    needing real data."""
    for item in items:
        if item.get_closest_marker("slow") or item.get_closest_marker("real_data"):
            continue
        doctest = getattr(item, "dtest", None)  # a doctest item (pytest 7 does not export its class)
        if doctest is not None:
            unit = not any(word in example.source for example in doctest.examples for word in DOCTEST_MODEL_WORDS)
        else:
            unit = item.path.stem in UNIT_MODULES
        if unit:
            item.add_marker(pytest.mark.unit)


_MODEL_CALLS = [0]
"""Models built or called so far in this session (counted once transformers' model code is imported)."""


def _model_calls() -> int | None:
    """How many models were built or called so far; None while transformers' model code is not imported."""
    import sys

    module = sys.modules.get("transformers.modeling_utils")
    if module is None:
        return None
    model = module.PreTrainedModel
    if not getattr(model, "_probing_counted", False):
        post_init, call = model.post_init, torch.nn.Module.__call__

        def counted_post_init(self, *args, **kwargs):
            _MODEL_CALLS[0] += 1
            return post_init(self, *args, **kwargs)

        def counted_call(self, *args, **kwargs):
            _MODEL_CALLS[0] += 1
            return call(self, *args, **kwargs)

        model.post_init, model.__call__, model._probing_counted = counted_post_init, counted_call, True
    return _MODEL_CALLS[0]


def _guarded(item) -> bool:
    """Whether the unit tier's guard watches ``item``: a unit test, in a session that selects by ``unit``."""
    return "unit" in (item.config.option.markexpr or "") and item.get_closest_marker("unit") is not None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    if _guarded(item):  # before any fixture: a module's fixture may build the model
        item.stash[_MODELS_BEFORE] = _model_calls()
    yield


_MODELS_BEFORE = pytest.StashKey()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under ``-m unit``, a unit test that imported transformers' model code, built a model or ran one fails: the
    tier promises to need none (take the test's ``unit`` mark off, or keep the model out of it)."""
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or _MODELS_BEFORE not in item.stash or report.failed:
        return
    before = item.stash[_MODELS_BEFORE]
    if _model_calls() != before:
        report.outcome = "failed"
        what = "built or ran a model" if before is not None else "imported transformers' model code"
        report.longrepr = f"{item.nodeid} is in the unit tier but {what}"


@pytest.fixture(scope="session", autouse=True)
def fixed_threads():
    """``TEST_THREADS`` torch threads for the session, here and in child processes (see the module's note).
    Session-scoped and autouse, so it is set before any module fixture runs a model."""
    before = torch.get_num_threads()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OMP_NUM_THREADS", str(TEST_THREADS))
        torch.set_num_threads(TEST_THREADS)
        yield
    torch.set_num_threads(before)


def real_data_skips(reports) -> list[str]:
    """The reason of every skipped test report that skipped for absent real data, one per test.

    A session fixture that skips is set up once and its skip replayed for every test that uses it, so the
    skips are counted from the reports, not from the calls that raised them.

    >>> class Report:
    ...     longrepr = ("tests/t.py", 3, "Skipped: real data: checkpoint M is not available (set X)")
    >>> real_data_skips([Report(), Report()])
    ['checkpoint M', 'checkpoint M']
    """
    reasons = []
    for report in reports:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _, found, rest = reason.partition(REAL_DATA_SKIP)
        if found:
            reasons.append(rest.split(" is not available")[0])
    return reasons


def pytest_terminal_summary(terminalreporter):
    missing = real_data_skips(terminalreporter.stats.get("skipped", []))
    if missing:
        names = ", ".join(sorted(set(missing)))
        terminalreporter.write_line(f"{len(missing)} real-data tests did not run: {names} not available "
                                    "(see tests/conftest.py)", yellow=True)


@pytest.fixture
def write_conllu(tmp_path):
    """Write CoNLL-U text (rows of space-free fields joined by tabs) to a file."""

    def write(text: str, name: str = "t.conllu") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


def conllu_rows(*rows: str) -> str:
    """Rows written with single spaces between the ten fields -> tab-separated CoNLL-U."""
    return "\n".join("\t".join(row.split()) if not row.startswith("#") else row for row in rows) + "\n\n"


def counts_of(result: dict) -> dict:
    """Everything in a result that is a count of the data (not when, how long or on how many processes)."""
    return {key: result[key] for key in ("relations", "bootstrap", "treebank", "config")}
