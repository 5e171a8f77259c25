"""``--workers N``: the input side in worker processes makes the batches, and so the counts, of ``--workers 0``.

Small batches make many chunks (a chunk is batch_size x CHUNK_BATCHES units), so that each of two workers
makes several and the order in which they come back matters.
"""

from __future__ import annotations

import json
import os

import pytest
from helpers import tiny_model
from test_cli import assert_one_line_error

from probing.cli import main
from probing.data.inputs import InputSource, PendingUnit, Unit
from probing.engine.accumulator import Accumulator
from probing.engine.batching import CHUNK_BATCHES
from probing.engine.feeding import ChunkPlan, prepared_chunks
from probing.engine.options import PassOptions, usable_cores
from probing.engine.passes import run_pass
from probing.errors import ProbingError
from probing.model.loading import load_model
from probing.testing import sample_path

BATCH_SIZE = 2
"""Chunks of 2 x CHUNK_BATCHES = 32 units: the sample treebank's 75 sentences are three chunks."""


def _batches(plan: ChunkPlan, tokenizer, workers: int) -> list[tuple]:
    """Every batch as (chunk position, unit indices, input ids) in the order the pass gets them."""
    return [(chunk.position, batch.indices, batch.input_ids.tolist())
            for chunk in prepared_chunks(plan, tokenizer, workers=workers) for batch in chunk.batches]


@pytest.mark.parametrize("shard, done", [(None, 0), ((1, 2), 0), (None, 40)])
def test_workers_make_the_batches_of_this_process_in_its_order(shard, done):
    loaded = load_model(tiny_model("bert"))
    made = {}
    for workers in (0, 2):
        source = InputSource.treebank(str(sample_path()))
        plan = ChunkPlan(source, BATCH_SIZE, 64, shard=shard, done=done, prepend=loaded.prepend_token_id)
        made[workers] = _batches(plan, loaded.tokenizer, workers)
        assert source.units_total == 75  # known once the input was read to its end, here or in the workers
    assert made[2] == made[0]
    assert len({position for position, *_ in made[0]}) == (3 if shard is None and not done else 2)


@pytest.mark.parametrize("family", ["bert", "llama"])
def test_counts_are_identical_with_zero_one_and_two_workers(family, tmp_path, capsys):
    common = ["score", "--model", tiny_model(family), "--treebank", str(sample_path()), "--batch-size", str(BATCH_SIZE),
              "--bootstrap", "50", "--quiet"]
    results = {}
    for workers in (0, 1, 2):
        output = tmp_path / f"workers-{workers}.json"
        assert main([*common, "--workers", str(workers), "--output", str(output)]) == 0
        results[workers] = json.loads(output.read_text())
    capsys.readouterr()
    assert results[1]["relations"] == results[0]["relations"]  # every count and bootstrap replicate
    assert results[2]["relations"] == results[0]["relations"]
    assert results[2]["treebank"] == results[0]["treebank"]
    assert results[2]["config"] == results[0]["config"]  # the workers decide no number: not in the config


def _malformed(tmp_path, line_number: int):
    """The sample treebank with one token line's HEAD made a word, at ``line_number`` (1-based) or just after."""
    lines = sample_path().read_text(encoding="utf-8").split("\n")
    index = next(i for i in range(line_number - 1, len(lines)) if lines[i][:1].isdigit())
    fields = lines[index].split("\t")
    fields[6] = "x"
    lines[index] = "\t".join(fields)
    path = tmp_path / "malformed.conllu"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path, index + 1


@pytest.mark.parametrize("workers", [0, 2])
def test_a_malformed_line_in_a_worker_is_the_same_one_line(workers, tmp_path, capsys):
    length = len(sample_path().read_text(encoding="utf-8").split("\n"))
    path, line = _malformed(tmp_path, length - 20)  # in the last chunk: the workers have made batches before it
    output = tmp_path / "out" / "r.json"
    output.parent.mkdir()
    code = main(["score", "--model", tiny_model("bert"), "--treebank", str(path), "--batch-size", str(BATCH_SIZE),
                 "--workers", str(workers), "--bootstrap", "0", "--quiet", "--output", str(output)])
    captured = capsys.readouterr()
    assert_one_line_error(code, captured.out, captured.err, f"{path}:{line}:")
    assert list(output.parent.iterdir()) == []  # nothing written


def test_an_error_from_a_worker_keeps_its_place_and_its_location(tmp_path):
    """Raised after exactly the chunks this process would have made before it, with its file and line."""
    length = len(sample_path().read_text(encoding="utf-8").split("\n"))
    path, line = _malformed(tmp_path, length - 20)
    loaded = load_model(tiny_model("bert"))
    for workers in (0, 2):
        plan = ChunkPlan(InputSource.treebank(str(path)), BATCH_SIZE, 64)
        positions = []
        with pytest.raises(ProbingError) as raised:
            for chunk in prepared_chunks(plan, loaded.tokenizer, workers=workers):
                positions.append(chunk.position)
        assert (raised.value.source, raised.value.line) == (str(path), line)
        assert positions == [0, 1]  # the third chunk holds the malformed line


def test_a_negative_number_of_workers_is_refused():
    with pytest.raises(ProbingError, match="read in this process") as refused:
        PassOptions(workers=-1)
    assert refused.value.source == "--workers"


def test_more_workers_than_usable_cores_are_refused_and_as_many_are_accepted():
    cores = usable_cores()
    assert PassOptions(workers=cores).workers == cores
    with pytest.raises(ProbingError, match=f"to {cores} \\(a process per core") as refused:
        PassOptions(workers=cores + 1)
    assert refused.value.source == "--workers"
    assert BATCH_SIZE * CHUNK_BATCHES == 32


def test_the_probes_pairs_are_made_on_the_input_side_in_the_workers():
    from probing.analyses.probe.accumulator import ProbeAccumulator
    from probing.analyses.probe.pairs import collect_pairs, pairs_key

    loaded = load_model(tiny_model("bert"))
    relations = ("det", "nsubj", "all")
    probe = ProbeAccumulator.create(relations, loaded.num_layers, loaded.num_heads, offsets=(-1, 1), bootstrap=0,
                                    seed=0, causal=False)
    plan = ChunkPlan(InputSource.treebank(str(sample_path())), BATCH_SIZE, 64, preparers=(probe,))
    batches = [batch for chunk in prepared_chunks(plan, loaded.tokenizer, workers=2) for batch in chunk.batches]
    assert len(batches) > 30
    for batch in batches:
        prepared, made = batch.prepared[pairs_key(relations)], collect_pairs(batch.sentences, relations)
        assert all(bool((getattr(prepared, name) == getattr(made, name)).all())
                   for name in ("row", "query", "target", "relation", "dependent"))


def test_weights_drawn_on_the_input_side_are_the_ones_drawn_in_place():
    import torch

    from probing.stats.bootstrap import ReplicateSums, poisson_weights

    generator = torch.Generator().manual_seed(0)
    batches = [(list(range(start, start + 5)), torch.randint(0, 4, (5, 3), generator=generator).float())
               for start in range(0, 40, 5)]
    in_place, ahead = (ReplicateSums(replicates=50, seed=7, shapes={"correct": (3,)}, chunk=12) for _ in range(2))
    for indices, counts in batches:
        in_place.add(indices, {"correct": counts})
        ahead.add(indices, {"correct": counts}, poisson_weights(indices, replicates=50, seed=7))
    assert torch.equal(ahead["correct"], in_place["correct"]) and int(in_place["correct"].sum()) > 0


def _corrupted(tmp_path, *, head_at: int | None = None, carriage_return_at: int | None = None):
    """The sample treebank with a token line's HEAD made a word (a parse error) and/or a carriage return put in a
    token line (an error in the line itself, found by a lazy read too), each at the first token line at or after
    the given 1-based line number."""
    lines = sample_path().read_text(encoding="utf-8").split("\n")

    def token_line(number: int) -> int:
        return next(i for i in range(number - 1, len(lines)) if lines[i][:1].isdigit())

    if head_at is not None:
        index = token_line(head_at)
        fields = lines[index].split("\t")
        fields[6] = "x"
        lines[index] = "\t".join(fields)
    if carriage_return_at is not None:
        index = token_line(carriage_return_at)
        lines[index] = lines[index].replace("\t", "\r\t", 1)
    path = tmp_path / "corrupted.conllu"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _stops(plan: ChunkPlan, tokenizer, workers: int) -> tuple[list[int], str]:
    positions = []
    with pytest.raises(ProbingError) as raised:
        for chunk in prepared_chunks(plan, tokenizer, workers=workers):
            positions.append(chunk.position)
    return positions, str(raised.value)


def _line_of_sentence(index: int) -> int:
    """The first line of the sample treebank's sentence ``index``."""
    return next(unit.sentence.line for unit in InputSource.treebank(str(sample_path())).units() if unit.index == index)


@pytest.mark.parametrize("case", ["parse error then a bad line in the same chunk",
                                  "parse error in a worker's chunk, bad line in the next",
                                  "parse error past the limit",
                                  "parse error in another shard",
                                  "parse error in what a resumed run skips"])
def test_a_lazy_read_in_the_workers_stops_where_this_process_stops(case, tmp_path):
    """Workers parse only their own chunks; whatever the mix of errors, the pass stops after the same chunks
    with the same one error as when this process reads the input alone. Chunks are 32 sentences."""
    options = {"shard": None, "done": 0, "limit": None}
    if case == "parse error then a bad line in the same chunk":  # chunk 1, worker 1's: sentences 32-63
        path = _corrupted(tmp_path, head_at=_line_of_sentence(40), carriage_return_at=_line_of_sentence(50))
    elif case == "parse error in a worker's chunk, bad line in the next":
        path = _corrupted(tmp_path, head_at=_line_of_sentence(40), carriage_return_at=_line_of_sentence(70))
    elif case == "parse error past the limit":
        path, options["limit"] = _corrupted(tmp_path, head_at=_line_of_sentence(70)), 64
    elif case == "parse error in another shard":  # sentence 41 is shard 1's; this pass reads shard 0
        path, options["shard"] = _corrupted(tmp_path, head_at=_line_of_sentence(41)), (0, 2)
    else:  # a resume past 40 sentences skips sentence 5
        path, options["done"] = _corrupted(tmp_path, head_at=_line_of_sentence(5)), 40
    tokenizer = load_model(tiny_model("bert")).tokenizer
    stops = {}
    for workers in (0, 1, 2):
        source = InputSource.treebank(str(path), limit=options["limit"])
        plan = ChunkPlan(source, BATCH_SIZE, 64, shard=options["shard"], done=options["done"])
        stops[workers] = _stops(plan, tokenizer, workers)
    assert stops[1] == stops[0] and stops[2] == stops[0]
    assert stops[0][1].startswith(f"{path}:") and "HEAD is not an integer" in stops[0][1]  # the parse error first


def test_workers_have_stopped_when_the_error_that_stopped_the_pass_is_raised(tmp_path):
    """The error's traceback holds the pass's frames; its workers must not wait for the garbage collector
    (there DataLoader joined each unfinished worker for 5 s before killing it)."""
    import multiprocessing

    # 300 sentences in 10 chunks of 32, the parse error in chunk 7 (sentence 233: the 8th of the corrupted copy).
    # Worker 1 makes the odd chunks and worker 0 the even ones, each at most two ahead of the pass, so when the
    # first chunk arrives neither can have met the error or run out of chunks and exited: both must be running.
    # (With the error in chunk 1, worker 1 could meet it, report it and exit before the pass looked, on a busy
    # machine.)
    corrupted = _corrupted(tmp_path, head_at=_line_of_sentence(8))
    path = tmp_path / "long.conllu"
    path.write_text(sample_path().read_text(encoding="utf-8") * 3 + corrupted.read_text(encoding="utf-8"),
                    encoding="utf-8")
    plan = ChunkPlan(InputSource.treebank(str(path)), BATCH_SIZE, 64)
    running = []
    with pytest.raises(ProbingError) as raised:
        for _ in prepared_chunks(plan, load_model(tiny_model("bert")).tokenizer, workers=2):
            running.append(len(multiprocessing.active_children()))
    assert running[0] == 2 and len(running) == 7  # the workers ran while the pass did, up to the error's chunk
    assert raised.traceback and multiprocessing.active_children() == []


def test_a_lazy_read_parses_to_the_units_of_an_eager_one():
    eager = list(InputSource.treebank(str(sample_path())).units())
    lazy = list(InputSource.treebank(str(sample_path())).units(lazy=True))
    assert {type(unit) for unit in lazy} == {PendingUnit}
    assert [unit.parsed() for unit in lazy] == eager and len(eager) == 75


def test_segment_pairs_are_read_eagerly_even_when_asked_lazily():
    """Where a document ends, an eager read parses the next sentence before it yields the last pair alone; read
    lazily, an error in that sentence would come a unit later. So pairs are never read lazily."""
    lazy = list(InputSource.treebank(str(sample_path()), pairs=True).units(lazy=True))
    assert {type(unit) for unit in lazy} == {Unit} and any(unit.second for unit in lazy)


def test_a_lazy_read_of_a_half_numbers_its_units_as_an_eager_one():
    def odd_half():  # the odd sentences of the first 70, numbered again from 0
        return InputSource(sample_path(), "treebank", limit=70, half="odd")

    eager = list(odd_half().units())
    lazy = [unit.parsed() for unit in odd_half().units(lazy=True)]
    assert lazy == eager and len(eager) == 35
    assert (eager[1].index, eager[1].sentence.index) == (1, 3)  # the file's own index stays on the sentence


class _FreezeCount:
    """A preparer that records, in each batch, how many objects the garbage collector of the process that
    made the batch holds frozen."""

    def prepare(self, batch) -> dict:
        import gc

        return {"frozen": gc.get_freeze_count()}


def test_a_worker_freezes_what_it_inherited_from_the_main_process():
    import gc

    loaded = load_model(tiny_model("bert"))
    plan = ChunkPlan(InputSource.treebank(str(sample_path())), BATCH_SIZE, 64, preparers=(_FreezeCount(),))
    in_workers = [batch.prepared["frozen"] for chunk in prepared_chunks(plan, loaded.tokenizer, workers=2)
                  for batch in chunk.batches]
    here = [batch.prepared["frozen"] for chunk in prepared_chunks(plan, loaded.tokenizer, workers=0)
            for batch in chunk.batches]
    assert min(in_workers) > 10_000  # torch, transformers and the model, at the least
    assert set(here) == {gc.get_freeze_count()} == {0}  # the main process freezes nothing


class _TokenizerThreads(Accumulator):
    """Records, on the input side, what the fast tokenizer is told about its threads."""

    analysis = "tokenizer-threads"

    def __init__(self):
        super().__init__()
        self.seen: set = set()

    def prepare(self, batch) -> dict:
        import os

        self.seen.add(os.environ.get("TOKENIZERS_PARALLELISM"))
        return {}

    def update(self, view) -> None:
        pass


@pytest.mark.parametrize("set_by_user", [None, "true"])
def test_the_batching_thread_of_a_cpu_pass_tokenises_on_one_core(set_by_user, monkeypatch):
    """Beside a model on the CPU the tokenizer keeps to the batching thread (its own threads would take the
    model's cores); a value the user set is left as it is, and nothing is left behind."""
    if set_by_user is None:
        monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    else:
        monkeypatch.setenv("TOKENIZERS_PARALLELISM", set_by_user)
    loaded, recorder = load_model(tiny_model("bert")), _TokenizerThreads()
    run_pass(loaded, InputSource.treebank(str(sample_path()), limit=40), [recorder], PassOptions(batch_size=8))
    assert recorder.seen == {set_by_user or "false"}
    assert os.environ.get("TOKENIZERS_PARALLELISM") == set_by_user


class _SlowInput(Accumulator):
    """An input side that takes ``pause`` seconds per batch (in its ``prepare``) and a model side that takes none."""

    analysis = "slow-input"

    def __init__(self, pause: float):
        super().__init__()
        self.pause, self.batches = pause, 0

    def prepare(self, batch) -> dict:
        import time

        time.sleep(self.pause)
        return {}

    def update(self, view) -> None:
        self.batches += 1


@pytest.mark.parametrize("prefetch", [True, False])
def test_the_time_the_model_waits_for_its_input_is_counted(prefetch):
    """What the input side does not hide behind the model shows in ``seconds_waiting_for_input``: here each
    batch's input takes 50 ms and the accumulator none, so nearly all of the pass is waiting, with or without
    the batching thread; a fast input side waits far less."""
    loaded, slow = load_model(tiny_model("bert")), _SlowInput(0.05)
    stats = run_pass(loaded, InputSource.treebank(str(sample_path()), limit=24), [slow],
                     PassOptions(batch_size=8, prefetch=prefetch))
    assert slow.batches == 3
    assert 0.15 <= stats.seconds_waiting_for_input <= stats.seconds_total
    quick = run_pass(loaded, InputSource.treebank(str(sample_path()), limit=24), [_SlowInput(0.0)],
                     PassOptions(batch_size=8, prefetch=prefetch))
    # Relative, not absolute: on a loaded machine both sides wait longer, but the slow side still waits its
    # 3 x 50 ms more (half of it is the margin left for noise).
    assert quick.seconds_waiting_for_input < stats.seconds_waiting_for_input - 0.075


def test_a_killed_worker_is_named_from_torchs_error_when_its_exit_status_is_not_there_yet(monkeypatch):
    """Torch noticed the death (its SIGCHLD handler raised), the process object had no exit status yet (seen once
    in a few hundred kills on a busy machine): the worker is still named, with its signal, from torch's message,
    not left as an internal error; any other RuntimeError stays what it is."""
    from types import SimpleNamespace

    import probing.engine.feeding as feeding

    running = SimpleNamespace(_workers=[SimpleNamespace(pid=40, exitcode=None), SimpleNamespace(pid=41, exitcode=None)])
    monkeypatch.setattr(feeding, "_RUNNING", [running])
    stopped = feeding.stopped_input_worker(error=RuntimeError("DataLoader worker (pid 41) is killed by signal: Killed. "))
    assert stopped.message.startswith("input worker 2 of 2 (process 41) was killed by SIGKILL, which is what the "
                                      "system's out-of-memory killer sends")
    assert feeding.stopped_input_worker(error=RuntimeError("CUDA out of memory")) is None
    assert feeding.stopped_input_worker() is None  # both alive, no error to read
