"""What every command shares: its options as argparse arguments, and the run of an engine command.

The options themselves are declared once, below the command line: the specs' fields
(probing.engine.specs: ``ModelSpec``, ``InputSpec``, the run's and the outputs' groups;
probing.engine.options: ``PassOptions``) and each analysis's options dataclass. :func:`add_options` turns
them into argparse arguments with the same names, defaults, types and checks, so a bad value is one line
naming the option, before anything is read or loaded; the Python API reads the same declarations from
keywords (probing.engine.arguments.OptionSet.values).

>>> parser = argparse.ArgumentParser()
>>> add_batch_options(parser)
>>> parser.parse_args(["--batch-size", "8"]).batch_size
8
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from probing.engine import specs
from probing.engine.arguments import BadValue, OptionSet


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


def argparse_type(convert: Callable[[str], object]) -> Callable[[str], object]:
    """An option's type as argparse calls it: a refusal is argparse's one line naming the option."""

    def typed(text: str):
        try:
            return convert(text)
        except BadValue as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    typed.__name__ = getattr(convert, "__name__", "value")
    return typed


def add_options(parser: argparse.ArgumentParser, options: OptionSet) -> None:
    """``options`` as argparse arguments of ``parser``, each in its ``--help`` section, options that exclude each
    other in one mutually exclusive group (required when the set says one of them must be given)."""
    groups: dict = {}
    exclusive: dict = {}
    for entry in options.options:
        container = parser
        if entry.group is not None:
            if entry.group not in groups:
                groups[entry.group] = parser.add_argument_group(entry.group)
            container = groups[entry.group]
        if entry.exclusive:
            if (entry.group, entry.exclusive) not in exclusive:
                exclusive[(entry.group, entry.exclusive)] = container.add_mutually_exclusive_group(
                    required=entry.exclusive in options.needs_one)
            container = exclusive[(entry.group, entry.exclusive)]
        positional = not entry.flags[0].startswith("-")  # named by its flag, and given, not required
        details: dict = {"help": entry.help} if positional else {"dest": entry.dest, "help": entry.help}
        if entry.flag:
            details.update(action="store_const", const=entry.const, default=entry.default)
        else:
            details.update(metavar=entry.metavar, default=entry.initial(), choices=entry.choices,
                           type=argparse_type(entry.type) if entry.type else None)
            if entry.append:
                details["action"] = "append"
            elif entry.several:
                details["nargs"] = "+"
        if entry.required and not positional:
            details["required"] = True
        container.add_argument(*entry.flags, **details)
    if options.fixed:
        parser.set_defaults(**options.fixed)


def add_model_options(parser: argparse.ArgumentParser, *, random_init: bool = True) -> None:
    add_options(parser, specs.model_options(random_init=random_init))


def add_input_options(parser: argparse.ArgumentParser, *, text: bool | str = True, pairs: bool = True) -> None:
    add_options(parser, specs.input_options(text=text, pairs=pairs))


def add_batch_options(parser: argparse.ArgumentParser) -> None:
    add_options(parser, specs.batch_options())


def add_reading_options(parser: argparse.ArgumentParser, *, pooling: bool = False) -> None:
    add_options(parser, specs.reading_options(pooling=pooling))


def add_bootstrap_options(parser: argparse.ArgumentParser) -> None:
    """``--bootstrap`` (probing.engine.specs.bootstrap_option), for a command whose analysis declares none."""
    add_options(parser, specs.bootstrap_options())


def add_run_options(parser: argparse.ArgumentParser) -> None:
    add_options(parser, specs.run_options())


def add_output_options(parser: argparse.ArgumentParser, **output) -> None:
    add_options(parser, specs.output_options(**output))


def add_engine_options(parser: argparse.ArgumentParser, **options) -> None:
    """Every group of a command that runs a model over an input (probing.engine.specs.engine_options)."""
    add_options(parser, specs.engine_options(**options))


# ---------------------------------------------------------------------------- running


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


def model_spec(args: argparse.Namespace, *, device: str | None = None, device_map: str | None = None,
               head: str | None = None, head_optional: bool = False):
    """The :class:`probing.engine.specs.ModelSpec` of the model options (``device``: this process's, under
    torchrun; ``device_map``: checked by :func:`device_map_of`), by the one translation from options to specs.

    >>> model_spec(argparse.Namespace(model="m", revision=None, dtype="float32", device="cpu", seed=3,
    ...                               trust_remote_code=False, stack=None)).seed
    3
    """
    from probing.engine.arguments import spec_from

    return spec_from(specs.ModelSpec, vars(args), device=device or args.device,
                     device_map=device_map or getattr(args, "device_map", None), head=head, head_optional=head_optional)


def pass_options(args: argparse.Namespace):
    """The :class:`probing.engine.options.PassOptions` of the batching, reading, run and progress options."""
    from probing.engine.arguments import spec_from
    from probing.engine.options import PassOptions

    return spec_from(PassOptions, vars(args), progress=progress_wanted(args))


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

    def __init__(self, args: argparse.Namespace, *, head: str | None = None, head_optional: bool = False,
                 outputs: tuple = (), source=None, inputs: tuple[str, ...] = (), figures: tuple[str, ...] = (),
                 analysis=None, start: bool = True):
        self.args, self._outputs, self.figure_names, self._analysis = args, outputs, figures, analysis
        self.engine_run = None
        if start:  # else an analysis's library function calls :meth:`start` once it knows what it reads
            self.start(model_spec(args, head=head, head_optional=head_optional), source or self.specs()[1].open(), pass_options(args),
                       reads=inputs)

    def specs(self, options=None) -> tuple:
        """The specs of the command's options, by the one translation the Python API uses too: (ModelSpec,
        InputSpec, PassOptions, the analysis's ``options`` dataclass or None)."""
        from probing.engine.arguments import settled, spec_from

        values = vars(self.args)
        own = None if options is None else spec_from(options, values)
        if own is not None:  # the result and the checkpoint record what ran (a default one option fills in)
            vars(self.args).update(settled(values, own))
        return model_spec(self.args), spec_from(specs.InputSpec, values), pass_options(self.args), own

    def start(self, model, source, passes, *, reads=()):
        """The run of ``model`` over ``source`` (an opened input) with ``passes``: what an analysis's library function
        calls to start (in probing.engine.run.start_run's place). Every output is checked first against the
        files the run reads (``source``, ``reads``, the model's folders), then processes and checkpoints are set
        up; returns the :class:`probing.engine.run.EngineRun`."""
        import dataclasses

        from probing.atomic import Earlier, check_output_path, result_of
        from probing.engine import checkpointing
        from probing.engine.arguments import recorded_options
        from probing.engine.distributed import from_environment
        from probing.engine.run import EngineRun

        args, analysis = self.args, self._analysis
        self.source = source
        # Every file the command reads (the input, a --probe result, hand labels, the model folders) is protected
        # from its outputs.
        self.inputs = [source.path, *(str(path) for path in reads if path), *model_inputs(args)]
        self.outputs = []
        # --output holds the result of ``analysis`` (None: a plug-in's, of any analysis; an Earlier: what a page
        # or table is): an existing file there must be an earlier such output, never a treebank or a model's file
        result = analysis if isinstance(analysis, Earlier) else result_of(analysis) if analysis else result_of()
        # an output is a path (of --output), (path, the option that named it) or (path, option, what it replaces)
        named = [_named_output(output, result) for output in self._outputs]
        for path, option, replaces in ([(args.output, "--output", result)] if args.output else []) + named:
            self.outputs.append(check_output_path(path, option=option, inputs=self.inputs,
                                                  follow_symlinks=args.follow_symlinks, replaces=replaces))
        # Figures beside --output are outputs too: checked now, before any model time, not after the pass.
        self.figures = {name: self.figure_path(name) for name in self.figure_names} if args.output else {}
        if args.checkpoint:
            check_output_path(args.checkpoint, option="--checkpoint", inputs=self.inputs)
        ranks = from_environment(args.device)
        self.checkpointer = checkpointing.from_options(
            ranks, output=args.output, checkpoint=args.checkpoint, every=args.checkpoint_every, resume=args.resume
        )
        self.recorded = recorded_options(vars(args))  # in the result's config and every pass's checkpoint identity
        if self.checkpointer:
            self.checkpointer.command = self.recorded
        model = dataclasses.replace(model, device=ranks.device, device_map=device_map_of(args, ranks))
        self.engine_run = EngineRun(model, source, passes, ranks=ranks, hooks=self.checkpointer or ranks)
        return self.engine_run

    def figure_path(self, name: str) -> Path:
        """Where figure ``name`` goes (probing.results.outputs.figure_path), checked like ``--output`` (a followed
        symbolic link gives its target)."""
        from probing.results.outputs import checked_figure_path

        if name in getattr(self, "figures", {}):
            return self.figures[name]
        return checked_figure_path(self.args.output, name, self.args.figure_format, inputs=self.inputs,
                                   follow_symlinks=self.args.follow_symlinks)

    def __enter__(self) -> "EngineCommand":
        return self

    def __exit__(self, *exc) -> None:
        if self.engine_run is not None:
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
            print("(pass --output FILE.json to keep the result" + (" and its figures)" if self.figure_names else ")"),
                  file=sys.stderr)


def run_analysis(args: argparse.Namespace, library, options, *, analysis: str, show, **extra) -> int:
    """The command of one analysis: the specs of ``args`` (``options``: the analysis's options dataclass) given to
    its ``library`` function, which starts its run through :meth:`EngineCommand.start` (every output checked
    first, the figures' among them); then rank 0 shows the result (``show(result)``) and writes it to ``--output``
    with the figures its command's record names beside it (probing.results.outputs.write_with_figures, as
    ``probing.run`` writes them). ``extra`` goes to the library function as it is."""
    from probing.results.outputs import Figures, write_with_figures

    with EngineCommand(args, analysis=analysis, start=False) as command:
        specs = command.specs(options)
        figures = _figures_of(library, specs[-1]) or Figures()
        command.figure_names = figures.names  # checked with --output, before any model time
        result = library(*specs, start=command.start, **figures.extra, **extra)
        if result is None:  # another process of a torchrun: rank 0 writes
            return 0
        show(result)
        for path in write_with_figures(result, figures if args.output else Figures(), write=command.write,
                                       path_of=command.figure_path):
            print(f"wrote {path}", file=sys.stderr)
        command.hint()
    return 0


@dataclass(frozen=True)
class AnalysisCommand:
    """A command that runs one analysis, declared: ``probing NAME`` parses the options of its registry record
    (``OPTIONS`` beside the record's ``library`` function), and :func:`run_analysis` gives them to that function
    and shows the result, with ``table`` (``"module:function"``, result -> text printed) or ``show(result, args)``
    where what is printed depends on the options too. ``say`` goes to the library function when given.

    Everything is named and imported only when asked for, so that ``--help`` or a refused option imports no
    analysis (and no torch); a command module is this declaration and its ``add_arguments``/``run``.
    """

    name: str
    epilog: str
    table: str | None = None
    show: Callable | None = None
    say: Callable | None = None

    def record(self):
        """The command's registry record (probing.plugins.Command)."""
        from probing.plugins import commands

        return commands()[self.name]

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.epilog = self.epilog
        add_options(parser, self.record().option_set())

    def run(self, args: argparse.Namespace) -> int:
        from probing.plugins import analyses, resolve

        record = self.record()
        analysis = next(name for name in analyses().names() if record in analyses()[name].commands)
        if self.table is not None:
            table = resolve(self.table)
            show = lambda result: print(table(result))
        else:
            show = lambda result: self.show(result, args)
        extra = {} if self.say is None else {"say": self.say}
        return run_analysis(args, resolve(record.library), record.option_set().spec, analysis=analysis, show=show,
                            **extra)


def _figures_of(library, options):
    """The figures the command record whose library function is ``library`` draws with ``options`` (None: none)."""
    from probing.plugins import commands

    named = f"{library.__module__}:{library.__qualname__}"  # as the record names it: no other analysis imported
    for record in commands().values():
        if record.library == named:
            return record.figures_of(options)
    return None


# ---------------------------------------------------------------------------- results given


def give_result(result: dict, output, *, follow_symlinks: bool = False) -> Path | None:
    """A command's finished result written to ``output`` (validated, atomically, and said on stderr) when one is
    given; the path written, or None."""
    if not output:
        return None
    from probing.results.io import write_result

    path = write_result(result, output, follow_symlinks=follow_symlinks)
    print(f"wrote {path}", file=sys.stderr)
    return path


# ---------------------------------------------------------------------------- tables of result files


def check_table_outputs(args: argparse.Namespace, *, inputs, earlier: Callable, refusal: str):
    """``--output`` (the tables as .md, the numbers as .json) and ``--figure`` of a command that compares result
    files into tables, checked before any file is read: an output of another kind is refused with ``refusal``,
    and an existing ``--output`` is replaced only when it is what ``earlier(output)`` recognises. Returns that
    probing.atomic.Earlier (None without --output), for :func:`write_tables`."""
    from probing.atomic import check_output_path, figure_format, figure_of
    from probing.errors import ProbingError

    if args.output and not args.output.lower().endswith((".md", ".json")):
        raise ProbingError(refusal, source="--output")
    replaces = earlier(args.output) if args.output else None
    for path, option, replaced in ((args.output, "--output", replaces),
                                   (args.figure, "--figure", args.figure and figure_of(args.figure))):
        if path:
            check_output_path(path, option=option, inputs=inputs, follow_symlinks=args.follow_symlinks,
                              replaces=replaced)
    if args.figure:
        figure_format(args.figure, option="--figure")
    return replaces


def write_tables(args: argparse.Namespace, numbers: dict, tables: Callable[[], str], *, replaces,
                 draw: Callable) -> None:
    """What :func:`check_table_outputs` checked, written: ``numbers`` to an --output .json, the Markdown
    ``tables()`` to an --output .md or else standard output, and ``draw(path)`` to --figure."""
    from probing.atomic import write_json_atomic, write_text_atomic

    if args.output and args.output.lower().endswith(".json"):
        written = write_json_atomic(numbers, args.output, follow_symlinks=args.follow_symlinks, replaces=replaces)
        print(f"wrote {written}", file=sys.stderr)
    elif args.output:
        written = write_text_atomic(tables(), args.output, follow_symlinks=args.follow_symlinks, replaces=replaces)
        print(f"wrote {written}", file=sys.stderr)
    else:
        sys.stdout.write(tables())
    if args.figure:
        print(f"wrote {draw(args.figure)}", file=sys.stderr)
