"""What every command shares: argument groups, their validation, and the run of an engine command.

Every command that reads attention takes the same groups, with the same
names, defaults and checks: the model (``--model``, ``--revision``,
``--dtype``, ``--device``, ``--trust-remote-code``, ``--stack``,
``--random-init``, ``--seed``), the input (``--treebank`` or ``--text``,
``--pairs``, ``--limit``), batching (``--batch-size``, ``--max-length``),
the reading (``--attention``, ``--pool-from``), the run (``--shard``,
``--checkpoint``, ``--checkpoint-every``, ``--resume``), the output
(``--output``, ``--follow-symlinks``, ``--figure-format``) and ``--progress``/``--no-progress``.
Values are checked by argparse types, so a bad one is one line naming the
option, before anything is read or loaded.

>>> parser = argparse.ArgumentParser()
>>> add_batch_options(parser)
>>> parser.parse_args(["--batch-size", "8"]).batch_size
8
>>> positive_int("0")
Traceback (most recent call last):
argparse.ArgumentTypeError: must be a positive integer, got 0
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

DEFAULT_BATCH_SIZE = 32
MAX_BATCH_SIZE = 4096
"""The most units a batch may be asked to hold: the engine never makes a larger batch of units of 4 tokens or
more (probing.engine.batching.MAX_ATTENTION_CELLS, 4096 x 4 x 4), and a causal LM's batch of 4096 sentences
already holds gigabytes of next-token scores (pairs)."""
DEFAULT_BOOTSTRAP = 1000
MAX_BOOTSTRAP = 100_000
MAX_SEED = 2**32 - 1


# ---------------------------------------------------------------------------- value types


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_at_most(cap: int, unit: str) -> Callable[[str], int]:
    """The argparse type of a count with a stated cap: a positive integer of ``unit``, at most ``cap``.

    >>> heads = positive_at_most(256, "heads")
    >>> heads("25")
    25
    >>> heads("300")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be at most 256 heads, got 300
    """

    def count(text: str) -> int:
        value = positive_int(text)
        if value > cap:
            raise argparse.ArgumentTypeError(f"must be at most {cap} {unit}, got {value}")
        return value

    return count


batch_size = positive_at_most(MAX_BATCH_SIZE, "units")
"""``--batch-size``: a positive number of units, at most :data:`MAX_BATCH_SIZE`."""


def worker_count(text: str) -> int:
    """``--workers``: 0 (read in this process) up to the cores this process may use (probing.engine.options).

    >>> worker_count("100000")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be 0 (read in this process) to ... got 100000
    """
    from probing.engine.options import check_workers
    from probing.errors import ProbingError

    value = _int(text)
    try:
        check_workers(value)
    except ProbingError as error:  # argparse names the option itself
        raise argparse.ArgumentTypeError(error.message) from None
    return value


def bootstrap_count(text: str) -> int:
    value = _int(text)
    if not 0 <= value <= MAX_BOOTSTRAP:
        raise argparse.ArgumentTypeError(f"must be 0 (off) to {MAX_BOOTSTRAP} replicates, got {value}")
    return value


def seed_value(text: str) -> int:
    value = _int(text)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be 0 to {MAX_SEED}, got {value}")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {text}")
    return value


def share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {text}")
    return value


def shard(text: str) -> tuple[int, int]:
    """``"2/8"`` -> ``(2, 8)``: this part's index (from 0) and the number of parts."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected I/N such as 0/4, got {text!r}") from None
    from probing.engine.options import check_shard
    from probing.errors import ProbingError

    try:
        check_shard((index, count))
    except ProbingError as error:  # argparse names the option itself
        raise argparse.ArgumentTypeError(error.message) from None
    return index, count


def _int(text: str) -> int:
    """An integer a result can hold (int64: probing.results.schema.bounds.MAX_INTEGER), so that a count such as
    ``--limit 99999999999999999999`` is refused here, not after the pass when its result is written."""
    from probing.results.schema.bounds import MAX_INTEGER

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if abs(value) > MAX_INTEGER:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_INTEGER} (the largest number a result holds), "
                                         f"got {value}")
    return value


def device_map_of(args: argparse.Namespace, ranks) -> str | None:
    """``--device-map`` spreads one model over the GPUs of one process, which torchrun's one copy per process
    (``ranks``, probing.engine.distributed) is not: the two together are refused."""
    from probing.errors import ProbingError

    device_map = getattr(args, "device_map", None)
    if device_map and ranks.world_size > 1:
        raise ProbingError("spreads one model over the GPUs of one process; under torchrun each process holds "
                           "a whole copy on its own GPU (--device cuda)", source="--device-map")
    return device_map


# ---------------------------------------------------------------------------- argument groups


def add_model_options(parser: argparse.ArgumentParser, *, random_init: bool = True) -> None:
    from probing.model.choices import STACKS

    group = parser.add_argument_group("model")
    group.add_argument("--model", metavar="ID_OR_FOLDER",
                       help="hub id or local checkpoint folder (default: the packaged all-MiniLM-L6-v2, offline)")
    add_weights_options(group, scored_in="attention is pooled and scored")
    group.add_argument("--trust-remote-code", action="store_true", help="allow a hub model's own Python code to run")
    group.add_argument("--stack", choices=list(STACKS), metavar="STACK",
                       help="which self-attention of an encoder-decoder model (T5) to read: encoder or decoder "
                            "(default: encoder)")
    if random_init:
        group.add_argument("--random-init", action="store_true",
                           help="the same architecture with seeded random weights: the untrained control")
    group.add_argument("--seed", type=seed_value, default=0, metavar="N",
                       help="seed of --random-init, the bootstrap and any masking (default: 0)")


def add_weights_options(group, *, scored_in: str) -> None:
    """Which weights, in what precision, where: --revision, --dtype, --device, --device-map (every command that
    loads a model; ``scored_in`` says what stays in float32 whatever --dtype is)."""
    from probing.model.choices import DEVICE_MAPS, DTYPE_NAMES

    group.add_argument("--revision", metavar="REV", help="hub branch, tag or commit to load")
    group.add_argument("--dtype", default="float32", choices=list(DTYPE_NAMES), metavar="DTYPE",
                       help=f"weights' precision: float32, float16 or bfloat16; {scored_in} in float32 either way "
                            "(default: float32)")
    group.add_argument("--device", default="cpu", metavar="DEVICE", help="cpu, cuda, cuda:N or mps (default: cpu)")
    group.add_argument("--device-map", choices=list(DEVICE_MAPS), metavar="MAP",
                       help="auto: spread one model's layers over every visible GPU in this process, for a model "
                            "too big for one (needs accelerate; replaces --device)")


def add_input_options(parser: argparse.ArgumentParser, *, text: bool | str = True, pairs: bool = True) -> None:
    """``--treebank``, ``--limit`` and, where the command takes them, ``--text`` (``text``: True, or the help of a
    command that reads it its own way) and ``--pairs``."""
    group = parser.add_argument_group("input")
    group.add_argument("--treebank", metavar="FILE_OR_NAME",
                       help="a CoNLL-U/CoNLL-X file, or a public UD treebank as NAME:SPLIT (en_ewt:dev); "
                            "default: the project's sample treebank")
    if text:
        group.add_argument("--text", metavar="FILE", help=text if isinstance(text, str) else
                           "a UTF-8 text file, one sentence per line, a blank line between documents")
    if pairs:
        group.add_argument("--pairs", action="store_true",
                           help="pair consecutive sentences of a document as segments A and B ([CLS] A [SEP] B [SEP])")
    group.add_argument("--limit", type=positive_int, metavar="N", help="only the first N units of the input")


def add_batch_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("batching")
    group.add_argument("--batch-size", type=batch_size, default=DEFAULT_BATCH_SIZE, metavar="N",
                       help=f"units per batch, at most {MAX_BATCH_SIZE}; long units come in smaller batches "
                            f"(default: {DEFAULT_BATCH_SIZE})")
    group.add_argument("--max-length", type=positive_int, metavar="N",
                       help="longest unit in tokens, special tokens included; longer units are skipped and counted, "
                            "never truncated (default: the model's limit)")
    group.add_argument("--workers", type=worker_count, default=0, metavar="N",
                       help="processes that read, tokenise and batch the input ahead of the model, for a GPU that "
                            "one thread cannot keep busy, at most one per core this process may use; the counts are "
                            "the same (default: 0, a thread of this process)")


class RegistryChoices:
    """argparse ``choices`` read from a registry the first time a value is checked or listed: the registries of
    readings and poolings live beside their torch code, so that an option given none of their names (or a bad
    option elsewhere) is checked without importing torch. Help lists them through ``%(choices)s``.

    >>> formats = RegistryChoices("probing.report.renderers", "FORMATS")
    >>> "md" in formats, "rst" in formats
    (True, False)
    """

    def __init__(self, module: str, name: str):
        self._module, self._name = module, name

    def _names(self) -> list[str]:
        import importlib

        registry = getattr(importlib.import_module(self._module), self._name)
        return registry.names()

    def __contains__(self, value: object) -> bool:
        return value in self._names()

    def __iter__(self):
        return iter(self._names())


def add_reading_options(parser: argparse.ArgumentParser, *, pooling: bool = False) -> None:
    group = parser.add_argument_group("attention")
    readings = RegistryChoices("probing.engine.readings", "READINGS")
    group.add_argument("--attention", default="weights", choices=readings, metavar="READING",
                       help="how attention is read: %(choices)s (default: weights)")
    if pooling:
        poolings = RegistryChoices("probing.engine.pooling", "FROM_POOLINGS")
        group.add_argument("--pool-from", default="mean", choices=poolings, metavar="MODE",
                           help="attention from a split word: mean of its pieces' rows (the paper), first piece "
                                "(the reference code), or max (default: mean)")


def add_bootstrap_options(parser: argparse.ArgumentParser, *,
                          replicates: str = "Poisson bootstrap replicates over units for intervals") -> None:
    """``--bootstrap``, with one default for every command that takes it (a result made with the defaults
    of one command has the intervals of another's); ``replicates`` says how the command resamples."""
    parser.add_argument("--bootstrap", type=bootstrap_count, default=DEFAULT_BOOTSTRAP, metavar="N",
                        help=f"{replicates}; 0 turns them off (default: {DEFAULT_BOOTSTRAP})")


def add_run_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("long runs")
    group.add_argument("--shard", type=shard, metavar="I/N",
                       help="only units whose index modulo N is I; add the parts up with probing merge")
    group.add_argument("--checkpoint", metavar="FILE",
                       help="save progress here now and then (default with --output: OUTPUT.checkpoint)")
    group.add_argument("--checkpoint-every", type=seconds, default=300.0, metavar="SECONDS",
                       help="seconds between checkpoints: one is saved after the first batch that ends once they "
                            "have passed (after a chunk of batch size x 16 units under torchrun); 0 saves after every "
                            "chunk (default: 300)")
    group.add_argument("--resume", action="store_true",
                       help="continue a killed run from its checkpoint (same options and model); the counts end "
                            "identical to an uninterrupted run")


def add_output_options(parser: argparse.ArgumentParser, *, what: str = "the result JSON", figures: bool = True,
                       required: bool = False, help: str | None = None, metavar: str = "FILE") -> None:
    """``--output`` (its help from ``what`` unless ``help`` says it all), ``--figure-format`` when the
    command draws figures beside it, ``--follow-symlinks`` and ``--progress``/``--no-progress`` (``--quiet``)."""
    group = parser.add_argument_group("output")
    group.add_argument("--output", metavar=metavar, required=required,
                       help=help or f"write {what} here, atomically" + (" (its figures beside it)" if figures else ""))
    if figures:
        group.add_argument("--figure-format", default="png", choices=["png", "svg", "pdf"], metavar="FORMAT",
                           help="format of the figures written beside --output: png, svg or pdf (default: png)")
    group.add_argument("--follow-symlinks", action="store_true",
                       help="when an output is a symbolic link, replace the file it points to (default: refuse)")
    add_progress_options(parser)


def add_progress_options(parser: argparse.ArgumentParser) -> None:
    """``--progress``/``--no-progress`` and ``--quiet`` (the older name of ``--no-progress``): one destination,
    so the last one given wins (see probing.engine.progress)."""
    parser.add_argument("--progress", dest="progress", action="store_const", const=True, default=None,
                        help="show progress on stderr (the default): a bar on a terminal; off one (nohup, Slurm, "
                             "CI) a line per stage and one every PROBING_PROGRESS_EVERY seconds (default: 30)")
    parser.add_argument("--no-progress", "--quiet", dest="progress", action="store_const", const=False,
                        help="no progress: no bar and no progress lines (--quiet is the same)")


def add_engine_options(parser: argparse.ArgumentParser, *, pooling: bool = False, text: bool | str = True,
                       pairs: bool = True, **output) -> None:
    """Every group of a command that runs a model over an input (``output``: see add_output_options)."""
    add_model_options(parser)
    add_input_options(parser, text=text, pairs=pairs)
    add_batch_options(parser)
    add_reading_options(parser, pooling=pooling)
    add_run_options(parser)
    add_output_options(parser, **output)


# ---------------------------------------------------------------------------- running


def figure_path(args: argparse.Namespace, name: str) -> Path:
    """Where a figure of a command goes: beside ``--output``, named after it (``surface.json`` ->
    ``surface-NAME.png``)."""
    output = Path(args.output)
    return output.with_name(f"{output.stem}-{name}.{args.figure_format}")


MODEL_OPTIONS = ("model", "second_model")
"""Every option that names a model: its folder's files (config, weights, tokenizer) are inputs of the run."""


def check_before_import(args: argparse.Namespace) -> None:
    """The checks of a command's options that need no model framework, run by probing.cli before the command
    imports torch: a typo in ``--relations`` or a missing ``--treebank`` / ``--text`` file is refused in a
    fraction of a second rather than after seconds of imports. The command checks them again where it uses them
    (the same functions, so the same one-line errors); a treebank *name* is left to the command, which may
    fetch it.

    >>> check_before_import(argparse.Namespace(relations=["det"], treebank=None, text=None))
    >>> check_before_import(argparse.Namespace(relations=["dboj"]))
    Traceback (most recent call last):
    probing.errors.ProbingError: --relations: unknown relation 'dboj' (did you mean dobj?): ...
    """
    from probing.data.datasets.names import parse_name
    from probing.data.inputs import InputSource
    from probing.data.relations import check_relation_names

    if getattr(args, "relations", None) is not None:
        check_relation_names(args.relations)
    if getattr(args, "treebank", None) and parse_name(args.treebank) is None:  # a path, never fetched
        InputSource.treebank(args.treebank)
    if getattr(args, "text", None):
        InputSource.text(args.text)


def model_inputs(args: argparse.Namespace) -> list[str]:
    """The folders that the model options of ``args`` read: a local folder as given, a hub id's folder in the
    local cache, the packaged default when ``--model`` is not given. An output inside one is refused by
    :func:`probing.atomic.check_output_path`, like an output that is the treebank.

    >>> model_inputs(argparse.Namespace(model="./no-such-folder", second_model=None, revision=None))
    []
    """
    from probing.errors import ProbingError
    from probing.model.hub import default_model_path, local_folder

    folders = []
    for option in MODEL_OPTIONS:
        if not hasattr(args, option):
            continue
        given = getattr(args, option)
        if not given and option != "model":
            continue
        try:
            folder = local_folder(given, getattr(args, "revision", None)) if given else default_model_path()
        except (ProbingError, OSError):  # not there (yet): the model's own check reports it, after the outputs
            continue
        if folder:
            folders.append(folder)
    return folders


def progress_wanted(args: argparse.Namespace) -> bool:
    """Whether this run shows its progress: unless ``--no-progress`` (``--quiet``) was given; how it shows it, a
    bar or lines, depends on whether stderr is a terminal (probing.engine.progress). A bad
    ``$PROBING_PROGRESS_EVERY`` is refused here, before any model time.

    >>> progress_wanted(argparse.Namespace(progress=False)), progress_wanted(argparse.Namespace(progress=None))
    (False, True)
    """
    from probing.engine.progress import progress_every

    wanted = getattr(args, "progress", None) is not False
    if wanted:
        progress_every()
    return wanted


NO_NUMBER_OPTIONS = frozenset({
    "output", "checkpoint", "checkpoint_every", "resume", "progress", "quiet", "follow_symlinks", "workers",
    "figure_format", "top", "scores_only", "drop_probe_weights", "save_results",
})
"""Options that change no number of a result: where it goes, what of it is kept, how it is shown, how fast it is
made (``--workers`` reads ahead; ``--scores-only`` and ``--drop-probe-weights`` leave out what the numbers come
from). A run may be resumed with any of them changed."""

RECORDED_ELSEWHERE = frozenset({"model", "revision", "treebank", "text", "labels", "blimp", "minimal_pairs",
                                "batch_size", "shard", "device", "device_map"})
"""Options that a result records by what they read or in a block of their own, and a checkpoint by the same: the
weights by their fingerprint (``model``), the input by its sha256 (``input``), a pair set's pinned files
(``blimp``, ``minimal_pairs``), ``batch_size`` and ``shard`` in ``config``; the device and its map move floats only at
near-ties (parts of one run may differ in them, as in ``batch_size``)."""


def recorded_options(args: argparse.Namespace) -> dict:
    """Every option of a command that can change a number of its result, by its name in ``args``, with DEV's
    fingerprint (its spec and the sha256 of its bytes, :func:`probing.stats.heldout.dev_fingerprint`) where the
    command chooses on DEV: what a result's ``config.options`` holds and a checkpoint's identity refuses to see
    changed. Every option is one unless it is in :data:`NO_NUMBER_OPTIONS` or :data:`RECORDED_ELSEWHERE`, so a
    new option is recorded until someone says it changes nothing.

    >>> recorded_options(argparse.Namespace(k=[1, 4], random=10, output="x.json", model="m", quiet=True))
    {'k': [1, 4], 'random': 10}
    """
    recorded = {name: list(value) if isinstance(value, tuple) else value for name, value in sorted(vars(args).items())
                if name not in NO_NUMBER_OPTIONS and name not in RECORDED_ELSEWHERE and not callable(value)}
    if "select_on" in recorded:
        from probing.stats.heldout import dev_fingerprint

        recorded["select_on"] = dev_fingerprint(getattr(args, "treebank", None), recorded["select_on"])
    return recorded


def model_spec(args: argparse.Namespace, *, device: str | None = None, device_map: str | None = None,
               head: str | None = None):
    """The :class:`probing.engine.run.ModelSpec` of the model options (``device``: this process's, under torchrun;
    ``device_map``: checked by :func:`device_map_of`).

    >>> model_spec(argparse.Namespace(model="m", revision=None, dtype="float32", device="cpu", seed=3,
    ...                               trust_remote_code=False, stack=None)).seed
    3
    """
    from probing.engine.run import ModelSpec

    return ModelSpec(model=args.model, revision=args.revision, device=device or args.device, device_map=device_map,
                     dtype=args.dtype, random_init=getattr(args, "random_init", False), seed=args.seed,
                     trust_remote_code=args.trust_remote_code, stack=args.stack, head=head)


def pass_options(args: argparse.Namespace):
    """The :class:`probing.engine.options.PassOptions` of the batching, reading, run and progress options."""
    from probing.engine.options import PassOptions

    return PassOptions(batch_size=args.batch_size, max_length=args.max_length, shard=args.shard,
                       attention=args.attention, pool_from=getattr(args, "pool_from", "mean"), workers=args.workers,
                       progress=progress_wanted(args))


def _named_output(output, result):
    """(path, option, what it may replace) of an output given to EngineCommand: a path alone is another result
    (``--save-results``), a figure when its suffix says so."""
    from probing.atomic import FIGURE_FORMATS, figure_of

    path, option, *replaces = output if isinstance(output, tuple) else (output, "--output")
    if replaces:
        return path, option, replaces[0]
    figure = Path(path).suffix.lower().lstrip(".") in FIGURE_FORMATS
    return path, option, figure_of(path) if figure else result


class EngineCommand:
    """The command layer of one run over one input: inputs and outputs checked first, then processes and
    checkpoints; the run itself (the model, its passes, the result's common blocks) is :attr:`engine_run`, a
    :class:`probing.engine.run.EngineRun` built from the options, which is what an analysis is handed; rank 0
    writes. Use as a context manager.

    ``analysis`` names what ``--output`` holds (``"surface"``: an existing file there must be an earlier surface
    result; an :class:`probing.atomic.Earlier` for a page); ``outputs`` adds other files, each a path, a
    ``(path, option)`` or a ``(path, option, Earlier)``; ``figures`` the figures beside ``--output``.
    """

    def __init__(self, args: argparse.Namespace, *, head: str | None = None, outputs: tuple = (),
                 source=None, inputs: tuple[str, ...] = (), figures: tuple[str, ...] = (),
                 analysis=None):
        from probing.atomic import Earlier, check_output_path, result_of
        from probing.data.inputs import open_input
        from probing.engine import checkpointing
        from probing.engine.distributed import from_environment
        from probing.engine.run import EngineRun

        self.args = args
        self.source = source or open_input(getattr(args, "treebank", None), getattr(args, "text", None),
                                           pairs=getattr(args, "pairs", False), limit=args.limit)
        # Every file the command reads (the input, a --probe result, hand labels, the model folders) is protected
        # from its outputs.
        self.inputs = [self.source.path, *(path for path in inputs if path), *model_inputs(args)]
        self.outputs = []
        # --output holds the result of ``analysis`` (None: a plug-in's, of any analysis; an Earlier: what a page
        # or table is): an existing file there must be an earlier such output, never a treebank or a model's file
        result = analysis if isinstance(analysis, Earlier) else result_of(analysis) if analysis else result_of()
        # an output is a path (of --output), (path, the option that named it) or (path, option, what it replaces)
        named = [_named_output(output, result) for output in outputs]
        for path, option, replaces in ([(args.output, "--output", result)] if args.output else []) + named:
            self.outputs.append(check_output_path(path, option=option, inputs=self.inputs,
                                                  follow_symlinks=args.follow_symlinks, replaces=replaces))
        # Figures beside --output are outputs too: checked now, before any model time, not after the pass.
        self.figures = {name: self.figure_path(name) for name in figures} if args.output else {}
        if args.checkpoint:
            check_output_path(args.checkpoint, option="--checkpoint", inputs=self.inputs)
        ranks = from_environment(args.device)
        self.checkpointer = checkpointing.from_options(
            ranks, output=args.output, checkpoint=args.checkpoint, every=args.checkpoint_every, resume=args.resume
        )
        self.recorded = recorded_options(args)  # in the result's config and in every pass's checkpoint identity
        if self.checkpointer:
            self.checkpointer.command = self.recorded
        self.engine_run = EngineRun(model_spec(args, device=ranks.device, device_map=device_map_of(args, ranks),
                                               head=head),
                                    self.source, pass_options(args), ranks=ranks, hooks=self.checkpointer or ranks)

    def figure_path(self, name: str) -> Path:
        """Where figure ``name`` goes (see :func:`figure_path`), checked like ``--output`` (a followed
        symbolic link gives its target)."""
        from probing.atomic import check_output_path, figure_of

        if name in getattr(self, "figures", {}):
            return self.figures[name]
        path = figure_path(self.args, name)
        return check_output_path(path, option="figure beside --output", inputs=self.inputs,
                                 follow_symlinks=self.args.follow_symlinks, replaces=figure_of(path))

    def __enter__(self) -> "EngineCommand":
        return self

    def __exit__(self, *exc) -> None:
        self.ranks.close()

    # What a command reads of its run (probing.engine.run.EngineRun), by the names the commands use.

    @property
    def loaded(self):
        """The model, loaded on first use (after every check of inputs and outputs)."""
        return self.engine_run.loaded

    @property
    def ranks(self):
        return self.engine_run.ranks

    @property
    def hooks(self):
        return self.engine_run.hooks

    @property
    def is_main(self) -> bool:
        return self.engine_run.is_main

    def options(self, description: str = "reading"):
        return self.engine_run.options(description)

    def run(self, accumulators, description: str = "reading"):
        """One pass over the input into ``accumulators``; returns its statistics."""
        return self.engine_run.run(accumulators, description)

    def result(self, analysis: str, stats, accumulator, config: dict) -> dict:
        return self.engine_run.result(analysis, stats, accumulator, config)

    def write(self, result: dict) -> Path | None:
        """Give the result (rank 0), its ``config.options`` the command's (:func:`recorded_options`): to
        ``--output`` when given (:func:`give_result`), then drop the checkpoint it no longer needs."""
        if not self.is_main:
            return None
        result["config"]["options"] = self.recorded
        path = give_result(result, self.args.output, follow_symlinks=self.args.follow_symlinks)
        if path and self.checkpointer:
            self.checkpointer.discard()
        return path

    def hint(self) -> None:
        if self.is_main and not self.args.output:
            print("(pass --output FILE.json to keep the result and its figures)", file=sys.stderr)


# ---------------------------------------------------------------------------- results given


_KEPT: contextvars.ContextVar[list | None] = contextvars.ContextVar("probing_kept_results", default=None)


@contextlib.contextmanager
def keeping_results() -> Iterator[list[dict]]:
    """The results that the commands run inside the block give (:func:`give_result`), in order, in memory: how
    ``probing.run`` gets a command's result without a file to read back.

    >>> with keeping_results() as kept:
    ...     give_result({"analysis": "noop"}, None)
    >>> kept
    [{'analysis': 'noop'}]
    """
    kept: list[dict] = []
    token = _KEPT.set(kept)
    try:
        yield kept
    finally:
        _KEPT.reset(token)


def give_result(result: dict, output, *, follow_symlinks: bool = False) -> Path | None:
    """A command's finished result: kept in memory inside :func:`keeping_results`, and written to ``output``
    (validated, atomically, and said on stderr) when one is given; the path written, or None."""
    kept = _KEPT.get()
    if kept is not None:
        kept.append(result)
    if not output:
        return None
    from probing.results.io import write_result

    path = write_result(result, output, follow_symlinks=follow_symlinks)
    print(f"wrote {path}", file=sys.stderr)
    return path
