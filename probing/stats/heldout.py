"""Held out once: choose on DEV, report on TEST, the same sequence for every analysis that chooses.

``probing score --select-on DEV --treebank TEST`` (and ``trees``, ``coref``, ``ablate --chosen``) chooses on DEV
and reports on TEST. The sequence is :class:`HeldOut`'s alone: which DEV and TEST (:func:`plan`: a bare name with
two splits is held out on them), DEV refused when it shares TEST's sentences (:func:`check_disjoint`) or, as a
result file, was made with other options or another model, all before the model loads; then the model loaded
once, the choice made on DEV (or read from DEV's result file), and the report on TEST. An analysis hands it a
:class:`Choosing`: what it chooses on DEV and what it reports on TEST, nothing of the sequence.

``DEV`` is a treebank (``en_ewt:dev``, a path) or a finished DEV result JSON, so that shards of TEST need not
choose again. Nothing here runs a model or imports torch, and nothing here knows an analysis: the probe's
``heldout`` block is :mod:`probing.analyses.probe.heldout_block`.

>>> default_splits("en_ewt"), default_splits("en_ewt:test"), default_splits("en_pud")
(('en_ewt:dev', 'en_ewt:test'), None, ('en_pud:even', 'en_pud:odd'))
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from probing.errors import ProbingError


def default_splits(spec: str | None) -> tuple[str, str] | None:
    """``(choose on, report on)`` names for a bare treebank name, else None: dev and test for a treebank
    with both, the even and odd halves for a one-split treebank such as ``ko_pud`` (docs/languages.md)."""
    from probing.data.datasets.resolution import heldout_names

    if not spec or Path(spec).expanduser().exists():
        return None
    return heldout_names(spec)


def plan(treebank: str | None, select_on: str | None) -> tuple[str | None, str | None]:
    """``(report on, choose on)`` for what a user gave, the same for every analysis that chooses on DEV: a bare
    name with two splits (or halves) is held out on them, ``--select-on`` chooses on what it names, and anything
    else is in-sample (None to choose on).

    >>> plan("en_ewt", None), plan("en_ewt:test", "en_ewt:dev"), plan("ko_pud", None), plan("x.conllu", None)
    (('en_ewt:test', 'en_ewt:dev'), ('en_ewt:test', 'en_ewt:dev'), ('ko_pud:odd', 'ko_pud:even'), ('x.conllu', None))
    """
    splits = default_splits(treebank)
    if splits is not None:
        return splits[1], select_on or splits[0]
    return treebank, select_on


def dev_fingerprint(treebank: str | None, select_on: str | None) -> dict | None:
    """What a result and its checkpoint record of DEV: the spec chosen on (as :func:`plan` reads the options) and
    the sha256 of its bytes (a treebank's, or a result file's), so that parts or a resumed run whose DEV changed
    at the same path are told apart; None in-sample. A DEV that cannot be read records no sha256 here (the
    held-out flow refuses it, naming --select-on).

    >>> from probing.data.inputs import InputSource, sample_treebank_path
    >>> dev = dev_fingerprint(None, str(sample_treebank_path()))
    >>> dev_fingerprint("x.conllu", None) is None, dev["sha256"] == InputSource.treebank(dev["spec"]).sha256
    (True, True)
    """
    from probing.data.datasets.cache import sha256_of
    from probing.data.inputs import InputSource

    spec = plan(treebank, select_on)[1]
    if spec is None:
        return None
    try:
        path = Path(spec).expanduser() if is_result_file(spec) else InputSource.treebank(spec, option=None).path
        digest = sha256_of(path)
    except (ProbingError, OSError):
        digest = None
    return {"spec": spec, "sha256": digest}


def is_result_file(select_on: str) -> bool:
    """Whether ``--select-on`` names a result JSON rather than a treebank."""
    return select_on.lower().endswith(".json")


class Choosing:
    """What an analysis that chooses on DEV hands to :class:`HeldOut`: its choice on DEV (:meth:`choose`) and its
    report on TEST (:meth:`report`); the rest has defaults that an analysis overrides where it differs. The
    sequence is HeldOut's (:meth:`HeldOut.run`): DEV read and checked, the model loaded once, the choice, the
    report, then :meth:`attach` when held out. ``loaded`` is what ``load`` gave :meth:`HeldOut.run` (the model,
    loaded once); ``held`` the HeldOut that runs the sequence.

    >>> class Longest(Choosing):
    ...     def choose(self, held, loaded):
    ...         return max(held.dev_source, key=len)
    ...     def report(self, chosen, held, loaded):
    ...         return {"chosen": chosen, "on": held.source}
    >>> HeldOut(["a", "bb"], "dev", dev_source=["ccc", "d"]).run(Longest(), load=lambda: None)
    {'chosen': 'ccc', 'on': ['a', 'bb']}
    """

    dev_analysis = "probe"
    """The analysis whose result file a DEV given as JSON must be (:meth:`read_dev`)."""

    def read_dev(self, path: str):
        """DEV's result file as the analysis reads it (default: a result of :attr:`dev_analysis`)."""
        return read_dev_result(path, analysis=self.dev_analysis)

    def dev_sentences(self, dev) -> dict:
        """The block of DEV's result naming the treebank it was made of, read again to compare sentences."""
        return dev["input"]

    def check_dev(self, dev, held: "HeldOut") -> None:
        """Refuse DEV's result file when it was made with options other than this run's, before the model loads."""

    def check_model(self, loaded, held: "HeldOut") -> None:
        """Refuse what the model just loaded cannot run, before any pass: a DEV result file of other weights."""

    def choose(self, held: "HeldOut", loaded):
        """The choice on DEV's units, ``held.dev_source`` (no bootstrap, never sharded: every part of a sharded TEST
        chooses alike)."""
        raise NotImplementedError

    def chosen_in(self, held: "HeldOut"):
        """The choice DEV's result file holds, ``held.dev_result`` (default: the file as read)."""
        return held.dev_result

    def report(self, chosen, held: "HeldOut", loaded):
        """The result on ``held.source`` with ``chosen`` (None: in-sample, chosen on those units themselves); None in
        a torchrun process other than rank 0."""
        raise NotImplementedError

    def attach(self, result: dict, chosen, held: "HeldOut") -> dict:
        """The result with its held-out block, from ``chosen`` (default: as reported)."""
        return result


@dataclass(frozen=True)
class HeldOut:
    """The one held-out sequence of every analysis that chooses on DEV and reports on TEST (probe, coref, trees,
    ablation): :meth:`plan` reads what the user gave (:func:`plan`), opens TEST and DEV (a treebank, or a result
    file read and checked by the analysis's :class:`Choosing`) and refuses a DEV that shares sentences with those
    reported on (:func:`check_disjoint`), all before the model loads; :meth:`run` then loads the model once,
    chooses on DEV and reports on TEST.

    ``source`` is TEST (or the in-sample units; None: units that are no treebank's, BLiMP's pairs);
    ``select_on`` DEV as given (None: in-sample); ``dev_source`` DEV's units, or ``dev_result`` DEV's file as
    the analysis reads it (trees: the selection it holds).

    >>> from probing.data.inputs import sample_treebank_path
    >>> sample = str(sample_treebank_path())
    >>> HeldOut.plan(sample, None, limit=10).select_on is None
    True
    >>> HeldOut.plan(sample, sample, limit=10)
    Traceback (most recent call last):
    probing.errors.ProbingError: --select-on ...: holds the very sentences this run reports on ...
    """

    source: object
    select_on: str | None = None
    dev_source: object = None
    dev_result: dict | None = None

    @classmethod
    def plan(cls, treebank: str | None, select_on: str | None, *, limit: int | None, units=None,
             analysis: Choosing | None = None) -> "HeldOut":
        """``--treebank`` and ``--select-on`` as :func:`plan` reads them (a bare name: its two splits or halves),
        TEST opened by ``units(spec, limit=..., option=...)`` (default: a treebank; the project's sample treebank
        when none is named), then DEV by :meth:`open_dev`."""
        from probing.data.inputs import InputSource, sample_treebank_path

        units = units or InputSource.treebank
        treebank, select_on = plan(treebank, select_on)
        source = units(treebank or str(sample_treebank_path()), limit=limit, option="--treebank")
        return cls.open_dev(source, select_on, limit=limit, units=units, analysis=analysis)

    @classmethod
    def open_dev(cls, source, select_on: str | None, *, limit: int | None, units=None,
                 analysis: Choosing | None = None) -> "HeldOut":
        """DEV of ``select_on`` beside ``source``, checked to hold none of its sentences (:func:`check_disjoint`): a
        result file read by ``analysis`` (default: a probe result), whose sentences its
        :meth:`Choosing.dev_sentences` names and whose options its :meth:`Choosing.check_dev` checks; else a
        treebank opened by ``units``."""
        from probing.data.inputs import InputSource

        if not select_on:
            return cls(source)
        analysis = analysis or Choosing()
        where = f"--select-on {select_on}"
        if is_result_file(select_on):
            dev_result = analysis.read_dev(select_on)
            if source is not None:
                check_disjoint(analysis.dev_sentences(dev_result), source, source=where)
            held = cls(source, select_on, dev_result=dev_result)
            analysis.check_dev(dev_result, held)
            return held
        dev_source = (units or InputSource.treebank)(select_on, limit=limit, option="--select-on")
        if source is not None:
            check_disjoint(dev_source, source, source=where)
        return cls(source, select_on, dev_source=dev_source)

    @property
    def where(self) -> str:
        """DEV as messages name it."""
        return f"--select-on {self.select_on}"

    @property
    def dev_path(self) -> str | None:
        """The DEV file read (checked as an input before any output is written), or None."""
        if self.dev_result is not None:
            return self.select_on
        return str(self.dev_source.path) if self.dev_source is not None else None

    @property
    def result_path(self) -> str | None:
        """DEV's result file when DEV was given as one (its choice read, not made), else None."""
        return self.select_on if self.dev_result is not None else None

    @property
    def read(self) -> list:
        """The units this run reads, DEV's then those reported on (what a model loading reads through)."""
        return [source for source in (self.dev_source, self.source) if source is not None]

    def run(self, analysis: Choosing, load):
        """The sequence once planned: ``load()`` the model once (every pass of DEV and TEST shares it), refuse
        what it cannot run (:meth:`Choosing.check_model`), choose on DEV (:meth:`chosen_on`), report on TEST
        (:meth:`Choosing.report`) and, held out, attach the held-out block (:meth:`Choosing.attach`)."""
        loaded = load()
        analysis.check_model(loaded, self)
        chosen = self.chosen_on(analysis, loaded)
        result = analysis.report(chosen, self, loaded)
        if result is None or chosen is None:
            return result
        return analysis.attach(result, chosen, self)

    def chosen_on(self, analysis: Choosing, loaded):
        """The analysis's choice: the one DEV's result file holds, else made on DEV's units; None in-sample."""
        if self.dev_result is not None:
            return analysis.chosen_in(self)
        if self.dev_source is None:
            return None
        return analysis.choose(self, loaded)


IN_SAMPLE_SELECTION = ("holds the very sentences this run reports on (choosing and measuring on the same sentences "
                       "is in-sample selection); give another split, such as en_ewt:dev for en_ewt:test")


def check_dev_test(dev: dict, test: dict, *, source: str = "--select-on", may_differ: tuple[str, ...] = (),
                   relations=(), planned: bool = False, run: str = "TEST") -> None:
    """The one DEV/TEST check of every analysis that chooses on DEV (``probing score``, ``ablate --chosen``,
    coref): DEV is not the sentences reported on (another split, or the other half), not one shard, of the same
    weights and options (``may_differ``: config fields that may differ, such as the probe's relations), and holds
    every one of ``relations``.

    ``test`` is the result reported on, or, with ``planned``, as much of it as is known before the model runs or
    once it has loaded: its ``input`` block (sha256, half), and any ``model`` and ``config`` fields; only the
    fields given are compared, so a command checks DEV before any model time and again once the model is loaded.
    ``run`` names the run in messages (``TEST``; ``this run`` for ablation, which measures no TEST accuracy).

    >>> dev = {"analysis": "probe", "input": {"sha256": "aa"}, "model": {"fingerprint": "sha256:ff"},
    ...        "config": {"shard": None, "attention": "weights"}, "relations": {"det": {}}}
    >>> check_dev_test(dev, {"input": {"sha256": "bb"}, "config": {"attention": "weights"}}, planned=True)
    >>> check_dev_test(dev, {"input": {"sha256": "aa"}}, planned=True)
    Traceback (most recent call last):
    probing.errors.ProbingError: --select-on: holds the very sentences this run reports on ...
    >>> check_dev_test(dev, {"input": {"sha256": "bb"}, "config": {"attention": "norms"}}, planned=True)
    Traceback (most recent call last):
    probing.errors.ProbingError: --select-on: DEV and TEST are not of the same model and options: config.attention \
is 'weights' in DEV but 'norms' in TEST
    """
    from probing.results.identity import difference, selection_identity

    if "input" in test:
        check_other_sentences(dev["input"], test["input"], source=source)
    if (dev["config"].get("shard") or None) is not None:
        raise ProbingError("is one shard of DEV; merge its shards first (probing merge)", source=source)
    missing = [name for name in relations if name not in dev.get("relations", {})]
    if missing:
        raise ProbingError(f"DEV result lacks relations {missing}; score DEV with them too", source=source)
    dev_identity = selection_identity(dev)
    if planned:  # the fields known so far, in the form a result holds them
        given = {"analysis": dev["analysis"], "model": test.get("model", {}), "config": test.get("config", {})}
        test_identity = selection_identity(given)
        test_identity["model"] = {key: value for key, value in test_identity["model"].items() if key in given["model"]}
        dev_identity = {"analysis": dev["analysis"], **{
            part: {key: dev_identity[part].get(key) for key in test_identity[part]} for part in ("model", "config")}}
    else:
        test_identity = selection_identity(test)
    for name in may_differ:
        dev_identity["config"].pop(name, None)
        test_identity["config"].pop(name, None)
    found = difference(dev_identity, test_identity, labels=("DEV", run))
    if found:
        raise ProbingError(f"DEV and {run} are not of the same model and options: {found}", source=source)


def check_dev_model(dev: dict, loaded, *, source: str = "--select-on", run: str = "TEST") -> None:
    """:func:`check_dev_test` of a DEV result against the model just loaded, before any pass: head 3-5 of other
    weights (or of the same weights read from another stack or after another prepended token) is another head."""
    from probing.results.io import model_block

    model = model_block(loaded)
    check_dev_test(dev, {"model": model, "config": {"stack": model["stack"], "prepended_token": model["prepended_token"]}},
                   source=source, planned=True, run=run)


def check_other_sentences(dev, report_on, *, source: str = "--select-on") -> None:
    """Refuse a DEV that reads the sentences reported on: one check for treebanks (an
    :class:`~probing.data.inputs.InputSource`) and result files (their ``input`` block) alike.

    >>> check_other_sentences({"sha256": "aa", "half": {"half": "even", "limit": 40}},
    ...                       {"sha256": "aa", "half": {"half": "odd", "limit": 40}})
    >>> check_other_sentences({"sha256": "aa"}, {"sha256": "aa", "half": {"half": "odd", "limit": 40}})
    Traceback (most recent call last):
    probing.errors.ProbingError: --select-on: holds the very sentences this run reports on ...
    """
    dev, report_on = (block if isinstance(block, dict) else block.describe() for block in (dev, report_on))
    if same_reading(dev["sha256"], _half(dev), report_on["sha256"], _half(report_on)):
        raise ProbingError(IN_SAMPLE_SELECTION, source=source)


SHARED_WORDS_ALLOWED = 0.03
"""The share of either side's words that sentences found in both DEV and the units reported on may hold. The
official splits of one treebank share a few sentences by nature ("Thanks .", a signature, a quoted line: en_ewt's
dev and test share 27, at most 1.4% of either side's words at any --limit), which choose nothing; a copy of the
units, or a DEV holding a few of them, is far above it (5 of 20 sentences: about a quarter of the words)."""


def sentence_key(words) -> str:
    """A sentence as the overlap check compares it: its words (the FORM column) in Unicode NFC, the white space
    inside a word collapsed, joined by one space, case folded (an uncased model reads a lowercased copy as the
    same sentence); comments, ids, lemmas and trees play no part.

    >>> sentence_key(["The", "Cafe\u0301", "  is\topen", "."])
    'the café is open .'
    """
    import unicodedata

    return " ".join(" ".join(unicodedata.normalize("NFC", word).split()) for word in words).casefold()


def read_sentences(units, *, source: str = "--select-on") -> list[str]:
    """The :func:`sentence_key` of every sentence a run reads of ``units``: an
    :class:`~probing.data.inputs.InputSource` (a treebank after its ``--limit`` and half, a text file's lines split
    at white space; a treebank read as documents whole, as its windows are cut only once the tokenizer is
    loaded), or a result's block naming the treebank it was made of (``path``, ``sha256``, ``limit``, ``kind``),
    read again and checked to be those bytes.

    >>> from probing.data.inputs import InputSource, sample_treebank_path
    >>> read_sentences(InputSource.treebank(str(sample_treebank_path()), limit=2))[1]
    'my grandmother keeps her recipes in a wooden box .'
    """
    if isinstance(units, dict):
        units = _reopened(units, source)
    if units.kind == "documents":
        from probing.data.treebank import read_treebank

        return [sentence_key(sentence.words) for sentence in read_treebank(units.path)]
    keys = []
    for unit in units.units():
        if unit.sentences:
            keys.extend(sentence_key(sentence.words) for sentence in unit.sentences)
        else:  # a line of plain text: its words as white space splits them
            keys.extend(sentence_key(segment.split()) for segment in (unit.first, unit.second) if segment)
    return keys


def _reopened(block: dict, source: str):
    """The treebank a result was made of, as its block records it, refused when it cannot be read here or its
    bytes are no longer those the result was made of: its sentences cannot be compared then."""
    from probing.data.inputs import InputSource

    path = block.get("given_as") or block["path"]
    opener = InputSource.documents if block.get("kind") == "documents" else InputSource.treebank
    unreadable = (f"cannot compare DEV's sentences with those reported on: the treebank its result was made of, "
                  f"{path}")
    try:
        units = opener(path, limit=block.get("limit"), option=None)
    except ProbingError as error:
        raise ProbingError(f"{unreadable}, cannot be read here ({error}); give --select-on that treebank, or run "
                           "where it is", source=source) from None
    if units.sha256 != block["sha256"]:
        raise ProbingError(f"{unreadable}, is no longer the file the result was made of (its sha256 differs); "
                           "score DEV again", source=source)
    return units


def check_disjoint(dev, report_on, *, source: str = "--select-on") -> None:
    """Refuse a DEV that shares sentences with the units reported on, compared by content (:func:`sentence_key`),
    not by file: a copy of TEST with a comment added, or a DEV holding a few of TEST's sentences, chooses on
    sentences it then measures. ``dev`` and ``report_on`` are :class:`~probing.data.inputs.InputSource` objects or
    result blocks (:func:`read_sentences`). A treebank's own splits share a few short sentences by nature: shared
    sentences holding at most :data:`SHARED_WORDS_ALLOWED` of either side's words are let through.

    >>> from probing.testing import sample_path, sample_split
    >>> from probing.data.inputs import InputSource
    >>> dev, test = (InputSource.treebank(path) for path in sample_split(10, 10))
    >>> check_disjoint(dev, test)
    >>> check_disjoint(dev, InputSource.treebank(str(sample_path()), limit=40))
    Traceback (most recent call last):
    probing.errors.ProbingError: --select-on: holds the very sentences this run reports on (10 of its 10 sentences, \
100% of its words, are among the 40 reported on: 10 of those, 24% of their words, such as ...
    """
    blocks = [block if isinstance(block, dict) else block.describe() for block in (dev, report_on)]
    if (isinstance(dev, dict) or isinstance(report_on, dict)) and same_reading(
            blocks[0]["sha256"], _half(blocks[0]), blocks[1]["sha256"], _half(blocks[1])):
        raise ProbingError(IN_SAMPLE_SELECTION, source=source)  # a result of these very bytes: nothing to read again
    dev_keys, report_keys = read_sentences(dev, source=source), read_sentences(report_on, source=source)
    shared = set(dev_keys) & set(report_keys)
    if not shared:
        return
    dev_share, report_share = _word_share(dev_keys, shared), _word_share(report_keys, shared)
    if max(dev_share, report_share) <= SHARED_WORDS_ALLOWED:
        return
    in_dev = sum(key in shared for key in dev_keys)
    in_report = sum(key in shared for key in report_keys)
    example = max(shared, key=lambda key: (len(key.split()), key))
    quoted = example if len(example) <= 80 else example[:77] + "..."
    raise ProbingError(
        f"holds the very sentences this run reports on ({in_dev} of its {len(dev_keys)} sentences, "
        f"{dev_share:.0%} of its words, are among the {len(report_keys)} reported on: {in_report} of those, "
        f"{report_share:.0%} of their words, such as \"{quoted}\"; compared by their words, case folded, at most "
        f"{SHARED_WORDS_ALLOWED:.0%} of either side's words may be shared): choosing and measuring on the same "
        "sentences is in-sample selection; give DEV without them, or another split", source=source)


def text_key(text: str) -> str:
    """A sentence as the pairs' overlap check compares it: its text in Unicode NFC without any white space, case
    folded, so that a treebank's words and a pair's running text (``don't`` and ``do n't``) compare alike.

    >>> text_key("Dogs bark .") == text_key("dogs  bark.")
    True
    """
    import unicodedata

    return "".join(unicodedata.normalize("NFC", text).split()).casefold()


def check_pairs_held_out(dev: HeldOut, pairs, *, source: str = "--select-on") -> None:
    """Refuse minimal pairs made from the sentences DEV chose heads on (agreement pairs made from DEV's treebank, or
    a pair file written from it): a pair is counted as DEV's when its grammatical sentence is one of DEV's sentences
    (their running text, compared by :func:`text_key`); more than :data:`SHARED_WORDS_ALLOWED` of the pairs is
    in-sample selection, as :func:`check_disjoint` refuses it for treebanks. DEV is its treebank, or the treebank
    its result file was made of, read again.

    >>> from probing.data.inputs import InputSource, sample_treebank_path
    >>> from probing.data.minimal_pairs import MinimalPair
    >>> dev = HeldOut(None, "sample", dev_source=InputSource.treebank(str(sample_treebank_path()), limit=5))
    >>> check_pairs_held_out(dev, [MinimalPair("a", "f", "Cats sleep.", "Cats sleeps.")])
    >>> check_pairs_held_out(dev, [MinimalPair("a", "f", "My grandmother keeps her recipes in a wooden box.", "x")])
    Traceback (most recent call last):
    probing.errors.ProbingError: --select-on: holds the sentences that 1 of the 1 pairs scored were made from ...
    """
    units = dev.dev_source if dev.dev_result is None else _reopened(dev.dev_result["input"], source)
    if units is None or not pairs:
        return
    texts = set()
    for unit in units.units():
        texts.update(text_key(sentence.text) for sentence in unit.sentences)
        texts.update(text_key(segment) for segment in (unit.first, unit.second) if isinstance(segment, str))
    shared = [pair for pair in pairs if text_key(pair.good) in texts]
    if len(shared) <= SHARED_WORDS_ALLOWED * len(pairs):
        return
    example = shared[0].good if len(shared[0].good) <= 80 else shared[0].good[:77] + "..."
    raise ProbingError(
        f"holds the sentences that {len(shared):,} of the {len(pairs):,} pairs scored were made from "
        f"({len(shared) / len(pairs):.0%}, such as \"{example}\"; at most {SHARED_WORDS_ALLOWED:.0%} may be): heads "
        "chosen on a sentence are never measured on pairs made from it; choose on another split or half (pairs of "
        "de_pud:odd:agreement, heads chosen on de_pud:even)", source=source)


def _word_share(keys: list[str], shared: set[str]) -> float:
    """The share of the words of ``keys`` (one per sentence read) in sentences of ``shared``."""
    words = sum(len(key.split()) for key in keys)
    return sum(len(key.split()) for key in keys if key in shared) / words if words else 0.0


def same_reading(dev_sha256: str, dev_half: tuple | None, test_sha256: str, test_half: tuple | None) -> bool:
    """Whether DEV and TEST read the same sentences: one file, and not its two halves at the same ``--limit``
    (a half is ``(half, limit)``)."""
    if dev_sha256 != test_sha256:
        return False
    return dev_half is None or test_half is None or dev_half[0] == test_half[0] or dev_half[1] != test_half[1]


def _half(block: dict) -> tuple | None:
    half = block.get("half")
    return None if not half else (half.get("half"), half.get("limit"))


def read_dev_result(path: str, analysis: str = "probe") -> dict:
    """A DEV result file of ``analysis``, checked to be one (``--select-on FILE.json``)."""
    from probing.results.io import read_result

    try:
        return read_result(path, analysis=analysis)
    except ProbingError as error:
        raise ProbingError(f"{error} (given as --select-on)") from None
