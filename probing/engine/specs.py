"""The plain specs of a run, whose fields are its options: which model (:class:`ModelSpec`), which input
(:class:`InputSpec`), and the options of the run and its outputs every command shares.

Torch-free: the command line lists and checks these options before anything imports torch. The command line reads
them with argparse (probing.commands.common.add_options), the Python API from keywords
(:meth:`probing.engine.arguments.OptionSet.values`); both build the same specs with
:func:`probing.engine.arguments.spec_from`.

>>> from probing.engine.arguments import spec_from
>>> options = engine_options(command="probing surface")
>>> model = spec_from(ModelSpec, options.values({"model": "m", "seed": 3}))
>>> model.model, model.seed, model.dtype
('m', 3, 'float32')
>>> spec_from(InputSpec, options.values({"limit": 5}))
InputSpec(treebank=None, text=None, pairs=False, limit=5)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from probing.engine.arguments import BadValue, Option, OptionSet, option, options_of, positive_int, seconds, whole_number
from probing.engine.options import PassOptions
from probing.model.choices import DEVICE_MAPS, DTYPE_NAMES, STACKS

DEFAULT_BOOTSTRAP = 1000
MAX_BOOTSTRAP = 100_000
MAX_SEED = 2**32 - 1


def bootstrap_count(text: str) -> int:
    value = whole_number(text)
    if not 0 <= value <= MAX_BOOTSTRAP:
        raise BadValue(f"must be 0 (off) to {MAX_BOOTSTRAP} replicates, got {value}")
    return value


def seed_value(text: str) -> int:
    value = whole_number(text)
    if not 0 <= value <= MAX_SEED:
        raise BadValue(f"must be 0 to {MAX_SEED}, got {value}")
    return value


def bootstrap_option(replicates: str = "Poisson bootstrap replicates over units for intervals"):
    """The ``--bootstrap`` field of an analysis's options, with one default for every analysis that takes it (a
    result made with the defaults of one command has the intervals of another's); ``replicates`` says how the
    analysis resamples."""
    return option(DEFAULT_BOOTSTRAP, type=bootstrap_count, metavar="N",
                  help=f"{replicates}; 0 turns them off (default: {DEFAULT_BOOTSTRAP})")


def dtype_help(scored_in: str) -> str:
    """``--dtype``'s help; ``scored_in`` says what stays in float32 whatever the weights' precision."""
    return f"weights' precision: float32, float16 or bfloat16; {scored_in} in float32 either way (default: float32)"


@dataclass(frozen=True)
class ModelSpec:
    """Which model a run reads and how it is loaded (probing.model.loading.load_model's options).

    ``model`` None is the packaged all-MiniLM-L6-v2; ``head`` a head the analysis needs (``"lm"``, ...), which
    ``head_optional`` lets a checkpoint without one go without (``probing report``: its gradients are then left
    out); ``stack`` the self-attention of an encoder-decoder model (None: its encoder). A second model of a run
    (``probing compare``) is another spec: ``dataclasses.replace(spec, model=...)``.
    """

    model: str | None = option(metavar="ID_OR_FOLDER", help="hub id or local checkpoint folder (default: the packaged "
                                                            "all-MiniLM-L6-v2, offline)")
    revision: str | None = option(metavar="REV", help="hub branch, tag or commit to load")
    dtype: str = option("float32", choices=DTYPE_NAMES, metavar="DTYPE",
                        help=dtype_help("attention is pooled and scored"))
    device: str = option("cpu", metavar="DEVICE", help="cpu, cuda, cuda:N or mps (default: cpu)")
    device_map: str | None = option(choices=DEVICE_MAPS, metavar="MAP",
                                    help="auto: spread one model's layers over every visible GPU in this process, for "
                                         "a model too big for one (needs accelerate; replaces --device)")
    trust_remote_code: bool = option(flag=True, help="allow a hub model's own Python code to run")
    stack: str | None = option(choices=STACKS, metavar="STACK",
                               help="which self-attention of an encoder-decoder model (T5) to read: encoder or decoder "
                                    "(default: encoder)")
    random_init: bool = option(flag=True, help="the same architecture with seeded random weights: the untrained "
                                               "control")
    seed: int = option(0, type=seed_value, metavar="N",
                       help="seed of --random-init, the bootstrap and any masking (default: 0)")
    head: str | None = None
    head_optional: bool = False

    def load(self, validate: Sequence = (), *, announce: bool = False):
        """The model, loaded while the ``validate`` inputs are read through (probing.engine.startup), so that a
        bad input line costs no model time; ``announce`` shows the loading line."""
        from probing.engine.startup import load_while_validating, model_name
        from probing.model.loading import load_model

        return load_while_validating(
            lambda: load_model(self.model, revision=self.revision, device=self.device, dtype=self.dtype,
                               random_init=self.random_init, seed=self.seed, trust_remote_code=self.trust_remote_code,
                               stack=self.stack, head=self.head, head_optional=self.head_optional,
                               device_map=self.device_map),
            validate, name=model_name(self.model), announce=announce,
        )


@dataclass(frozen=True)
class InputSpec:
    """Which units a run reads: ``treebank`` (a file or ``NAME:SPLIT``; None: the sample treebank) or ``text``,
    ``pairs`` of consecutive sentences, the first ``limit`` units."""

    treebank: str | None = option(metavar="FILE_OR_NAME",
                                  help="a CoNLL-U/CoNLL-X file, or a public UD treebank as NAME:SPLIT (en_ewt:dev); "
                                       "default: the project's sample treebank")
    text: str | None = option(metavar="FILE", help="a UTF-8 text file, one sentence per line, a blank line between "
                                                   "documents")
    pairs: bool = option(flag=True, help="pair consecutive sentences of a document as segments A and B ([CLS] A [SEP] "
                                         "B [SEP])")
    limit: int | None = option(type=positive_int, metavar="N", help="only the first N units of the input")

    def open(self, *, words: bool = False):
        """The opened :class:`probing.data.inputs.InputSource` (``words``: the text read as words)."""
        from probing.data.inputs import open_input

        return open_input(self.treebank, self.text, pairs=self.pairs, limit=self.limit, words=words)


def model_options(*, random_init: bool = True) -> OptionSet:
    return options_of(ModelSpec, exclude=() if random_init else ("random_init",), group="model")


def input_options(*, text: bool | str = True, pairs: bool = True) -> OptionSet:
    """``--treebank``, ``--limit`` and, where the command takes them, ``--text`` (``text``: True, or the help of a
    command that reads it its own way) and ``--pairs``."""
    found = options_of(InputSpec, exclude=(() if text else ("text",)) + (() if pairs else ("pairs",)), group="input")
    return found.changed("text", help=text) if isinstance(text, str) else found


def batch_options() -> OptionSet:
    return options_of(PassOptions, only=("batch_size", "max_length", "workers"))


def reading_options(*, pooling: bool = False) -> OptionSet:
    return options_of(PassOptions, only=("attention", "pool_from") if pooling else ("attention",))


def run_options() -> OptionSet:
    """``--shard`` and the checkpoints of a long run."""
    return options_of(PassOptions, only=("shard",)) + OptionSet((
        Option("checkpoint", ("--checkpoint",), metavar="FILE", group="long runs",
               help="save progress here now and then (default with --output: OUTPUT.checkpoint)"),
        Option("checkpoint_every", ("--checkpoint-every",), type=seconds, default=300.0, metavar="SECONDS",
               group="long runs", help="seconds between checkpoints: one is saved after the first batch that ends once "
                                       "they have passed (after a chunk of batch size x 16 units under torchrun); 0 "
                                       "saves after every chunk (default: 300)"),
        Option("resume", ("--resume",), flag=True, default=False, group="long runs",
               help="continue a killed run from its checkpoint (same options and model); the counts end identical "
                    "to an uninterrupted run"),
    ))


FIGURE_FORMATS = ("png", "svg", "pdf")


def output_options(*, what: str = "the result JSON", figures: bool = True, required: bool = False,
                   help: str | None = None, metavar: str = "FILE") -> OptionSet:
    """``--output`` (its help from ``what`` unless ``help`` says it all), ``--figure-format`` when the command
    draws figures beside it, ``--follow-symlinks`` and ``--progress``/``--no-progress`` (``--quiet``)."""
    found = [Option("output", ("--output",), metavar=metavar, required=required, group="output",
                    help=help or f"write {what} here, atomically" + (" (its figures beside it)" if figures else ""))]
    if figures:
        found.append(Option("figure_format", ("--figure-format",), default="png", choices=FIGURE_FORMATS,
                            metavar="FORMAT", group="output",
                            help="format of the figures written beside --output: png, svg or pdf (default: png)"))
    found.append(Option("follow_symlinks", ("--follow-symlinks",), flag=True, default=False, group="output",
                        help="when an output is a symbolic link, replace the file it points to (default: refuse)"))
    return OptionSet(tuple(found)) + progress_options()


def progress_options() -> OptionSet:
    """``--progress``/``--no-progress`` and ``--quiet`` (the older name of ``--no-progress``): one destination,
    so the last one given wins (see probing.engine.progress)."""
    return OptionSet((
        Option("progress", ("--progress",), flag=True, const=True, default=None,
               help="show progress on stderr (the default): a bar on a terminal; off one (nohup, Slurm, CI) a line "
                    "per stage and one every PROBING_PROGRESS_EVERY seconds (default: 30)"),
        Option("progress", ("--no-progress", "--quiet"), flag=True, const=False, default=None,
               help="no progress: no bar and no progress lines (--quiet is the same)"),
    ))


def treebank_options(*own: OptionSet, figures: bool = True) -> OptionSet:
    """The groups of a command that reads a treebank and chooses on it (``probing score``, ``probing trees``):
    the model, the treebank and ``--limit``, the analysis's ``own`` options, batching, the reading with its pooling,
    the long run's and the output's."""
    found = model_options() + input_options(text=False, pairs=False)
    for options in own:
        found = found + options
    return found + batch_options() + reading_options(pooling=True) + run_options() + output_options(figures=figures)


def engine_options(*, pooling: bool = False, text: bool | str = True, pairs: bool = True, command: str = "",
                   **output) -> OptionSet:
    """Every group of a command that runs a model over an input (``output``: see :func:`output_options`)."""
    found = (model_options() + input_options(text=text, pairs=pairs) + batch_options()
             + reading_options(pooling=pooling) + run_options() + output_options(**output))
    return found.named(command) if command else found



@dataclass(frozen=True)
class BootstrapOptions:
    """``--bootstrap`` alone, for a command whose analyses declare it nowhere else (``probing report``)."""

    bootstrap: int = bootstrap_option()


def bootstrap_options() -> OptionSet:
    return options_of(BootstrapOptions)
