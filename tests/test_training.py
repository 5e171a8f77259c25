"""Probing during training: a folder of Trainer checkpoints scored in step order, and the callback that
scores a live model at each evaluation of a transformers Trainer (tiny models, CPU, a few steps)."""

from __future__ import annotations

import csv
import shutil
import warnings

import numpy as np
import pytest
import torch

from probing.analyses.probe.api import run_probe
from probing.analyses.probe.config import ScoreConfig
from probing.analyses.probe.curves import find_checkpoints
from probing.cli import main
from probing.errors import ProbingError
from probing.model.loading import LoadedModel, load_model, scoring_mode
from probing.results.io import read_result
from probing.testing import sample_path, tiny_bert
from tests.helpers import tiny_model

RELATIONS = ("det", "all")


def heads_of(result: dict, relation: str) -> np.ndarray:
    entry = result["relations"][relation]
    return np.array([entry["heads"]["dep_to_head"], entry["heads"]["head_to_dep"]])


# ---------------------------------------------------------------------------- a folder of checkpoints


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """A Trainer-style run folder: checkpoint-10/ and checkpoint-20/ (two different tiny BERTs),
    plus files a Trainer leaves beside them."""
    folder = tmp_path_factory.mktemp("run")
    shutil.copytree(tiny_bert(seed=1), folder / "checkpoint-10")
    shutil.copytree(tiny_bert(seed=2), folder / "checkpoint-20")
    (folder / "runs").mkdir()
    (folder / "trainer_state.json").write_text("{}")
    return folder


def test_checkpoints_come_in_step_order_not_name_order(tmp_path):
    for step in (100, 20, 3):
        (tmp_path / f"checkpoint-{step}").mkdir()
        (tmp_path / f"checkpoint-{step}" / "config.json").write_text("{}")
    (tmp_path / "checkpoint-best").mkdir()  # not a step: ignored
    assert [c.step for c in find_checkpoints(tmp_path)] == [3, 20, 100]
    assert find_checkpoints(tmp_path / "checkpoint-3") is None  # a checkpoint is one model
    assert find_checkpoints(tmp_path / "absent") is None


def test_two_checkpoint_folders_of_one_step_and_an_unfinished_save_are_refused(tmp_path):
    for name in ("checkpoint-5", "checkpoint-05"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text("{}")
    with pytest.raises(ProbingError, match="both step 5"):
        find_checkpoints(tmp_path)
    shutil.rmtree(tmp_path / "checkpoint-05")
    (tmp_path / "checkpoint-9").mkdir()
    with pytest.raises(ProbingError, match="checkpoint-9 holds no config.json"):
        find_checkpoints(tmp_path)


def test_a_run_folder_is_scored_in_step_order_with_one_result_per_checkpoint_and_a_curve(run_folder, tmp_path,
                                                                                       capsys):
    output = tmp_path / "out" / "curve.json"
    code = main(["score", "--model", str(run_folder), "--relations", *RELATIONS, "--limit", "30",
                 "--bootstrap", "20", "--output", str(output)])
    printed = capsys.readouterr().out
    assert code == 0
    assert printed.index("step 10:") < printed.index("step 20:")
    written = sorted(path.name for path in output.parent.iterdir())
    assert written == ["curve-curve.csv", "curve-curve.md", "curve-curve.png", "curve-step10.json",
                       "curve-step20.json"]
    with (output.parent / "curve-curve.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    assert [(row["step"], row["relation"]) for row in rows] == [("10", "det"), ("10", "all"), ("20", "det"),
                                                                ("20", "all")]
    for step in (10, 20):
        result = read_result(output.parent / f"curve-step{step}.json", analysis="probe")
        assert result["config"]["training_step"] == step
        # Each checkpoint is an ordinary run: the counts are those of scoring its folder alone.
        alone = run_probe(ScoreConfig.from_fields(model=str(run_folder / f"checkpoint-{step}"), relations=RELATIONS, limit=30,
                                      bootstrap=0))
        assert result["model"]["fingerprint"] == alone["model"]["fingerprint"]
        for relation in RELATIONS:
            np.testing.assert_array_equal(heads_of(result, relation), heads_of(alone, relation))
            row = next(r for r in rows if r["step"] == str(step) and r["relation"] == relation)
            assert float(row["accuracy"]) == pytest.approx(alone["relations"][relation]["best"]["accuracy"])
            assert float(row["offset_accuracy"]) == pytest.approx(
                alone["relations"][relation]["best_baseline"]["accuracy"])
            assert float(row["low"]) <= float(row["accuracy"]) <= float(row["high"])
    assert (output.parent / "curve-curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| 10 " in (output.parent / "curve-curve.md").read_text()


def test_every_output_of_a_run_folder_is_checked_before_any_model_loads(run_folder, tmp_path, capsys):
    output = tmp_path / "curve.json"
    (tmp_path / "curve-step20.json").mkdir()  # the second checkpoint's result could not be written
    assert main(["score", "--model", str(run_folder), "--limit", "5", "--output", str(output)]) == 2
    assert "curve-step20.json: is a folder" in capsys.readouterr().err
    assert not (tmp_path / "curve-step10.json").exists()  # nothing was scored


def test_heldout_selection_works_per_checkpoint_and_the_control_comes_first(run_folder, tmp_path):
    from probing.data.treebank import read_treebank

    text = sample_path().read_text(encoding="utf-8").strip().split("\n\n")
    dev, test = tmp_path / "dev.conllu", tmp_path / "test.conllu"
    dev.write_text("\n\n".join(text[:40]) + "\n\n", encoding="utf-8")
    test.write_text("\n\n".join(text[40:]) + "\n\n", encoding="utf-8")
    assert len(list(read_treebank(test))) == len(text) - 40
    output = tmp_path / "heldout.json"
    assert main(["score", "--model", str(run_folder), "--select-on", str(dev), "--treebank", str(test),
                 "--relations", "det", "--bootstrap", "0", "--random-init", "--output", str(output)]) == 0
    control = read_result(tmp_path / "heldout-step0.json")
    assert control["model"]["random_init"] and control["config"]["training_step"] == 0
    for step in (10, 20):
        result = read_result(tmp_path / f"heldout-step{step}.json")
        assert not result["model"]["random_init"]
        assert result["heldout"]["select_on"]["treebank"]["path"].endswith("dev.conllu")
    with (tmp_path / "heldout-curve.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    assert [(row["step"], row["selection"], row["random_init"]) for row in rows] == [
        ("0", "chosen on dev", "1"), ("10", "chosen on dev", "0"), ("20", "chosen on dev", "0")]


def test_options_that_split_one_run_are_refused_for_a_run_folder(run_folder, tmp_path, capsys):
    assert main(["score", "--model", str(run_folder), "--shard", "0/2"]) == 2
    assert "drop --shard" in capsys.readouterr().err


# ---------------------------------------------------------------------------- live models


def test_a_live_model_is_probed_like_one_loaded_from_disk():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = tiny_model("gpt2")  # causal, byte-level BPE without a prefix space, no BOS of its own
    from_disk = load_model(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="sdpa").train()
    live = LoadedModel.from_live(model, tokenizer, name="gpt2-run", step=7)
    facts = ("num_layers", "num_heads", "is_causal", "stack", "prepend_token_id", "position_limit")
    assert {f: getattr(live, f) for f in facts} == {f: getattr(from_disk, f) for f in facts}
    assert live.fingerprint == "live:gpt2-run@7"
    assert live.tokenizer is not tokenizer  # the space before each word went onto a copy
    assert model.training and model.config._attn_implementation == "sdpa"
    config = ScoreConfig.from_fields(treebank=str(sample_path()), relations=RELATIONS, limit=20, bootstrap=0)
    with scoring_mode(model):
        live_result = run_probe(config, loaded=live)
    disk_result = run_probe(config, loaded=from_disk)
    for relation in RELATIONS:
        np.testing.assert_array_equal(heads_of(live_result, relation), heads_of(disk_result, relation))


def test_scoring_mode_restores_the_model_even_after_an_error():
    from transformers import AutoModelForMaskedLM

    model = AutoModelForMaskedLM.from_pretrained(tiny_bert(), attn_implementation="sdpa").train()
    with pytest.raises(RuntimeError), scoring_mode(model):
        assert not model.training and model.config._attn_implementation == "eager"
        raise RuntimeError("a failure while scoring")
    assert model.training and model.config._attn_implementation == "sdpa"
    model.eval()
    with scoring_mode(model):
        pass
    assert not model.training  # a model in eval mode stays there


# ---------------------------------------------------------------------------- the Trainer callback


def tiny_trainer(tmp_path, callbacks, *, max_steps: int = 4, eval_steps: int = 2):
    """A transformers Trainer pre-training the tiny BERT as a masked LM on sample sentences, on the CPU."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer, DataCollatorForLanguageModeling, Trainer, TrainingArguments

    from probing.data.treebank import read_treebank

    tokenizer = AutoTokenizer.from_pretrained(tiny_bert())
    model = AutoModelForMaskedLM.from_pretrained(tiny_bert(), attn_implementation="sdpa")
    sentences = [list(sentence.words) for sentence in read_treebank(sample_path())][:32]
    dataset = [{"input_ids": tokenizer(words, is_split_into_words=True)["input_ids"]} for words in sentences]
    args = TrainingArguments(
        output_dir=str(tmp_path / "trainer"), max_steps=max_steps, per_device_train_batch_size=8,
        per_device_eval_batch_size=8, eval_strategy="steps", eval_steps=eval_steps, eval_on_start=True,
        logging_steps=1, learning_rate=1e-2, save_strategy="no", report_to="none", use_cpu=True, seed=0,
        disable_tqdm=True,
    )
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15, seed=0)
    return Trainer(model=model, args=args, train_dataset=dataset, eval_dataset=dataset[:8], data_collator=collator,
                   processing_class=tokenizer, callbacks=callbacks)


def recorder():
    """A callback that records what every logger sees (on_log) and the model's state at each step."""
    from transformers import TrainerCallback

    class Recorder(TrainerCallback):
        def __init__(self):
            self.logs, self.metrics, self.attention = [], [], []

        def on_log(self, args, state, control, logs=None, **kwargs):
            self.logs.append((state.global_step, dict(logs)))

        def on_evaluate(self, args, state, control, metrics=None, **kwargs):
            self.metrics.append((state.global_step, dict(metrics)))

        def on_step_begin(self, args, state, control, model=None, **kwargs):
            self.attention.append(model.config._attn_implementation)

    return Recorder()


def test_the_callback_scores_each_evaluation_and_logs_through_the_trainer(tmp_path):
    from probing.analyses.probe.callbacks import ProbingCallback

    probe = ProbingCallback(limit=25, relations=RELATIONS, output_dir=tmp_path / "probing")
    seen = recorder()
    trainer = tiny_trainer(tmp_path, [probe, seen])
    assert probe.attach(trainer) is probe
    assert trainer.callback_handler.callbacks.count(probe) == 1  # attach does not add it twice
    trainer.train()

    assert [step for step, _ in probe.history] == [0, 2, 4]
    # What TensorBoard, W&B and the rest see: the Trainer's on_log, once per scored step.
    logged = [(step, logs) for step, logs in seen.logs if "probing/det" in logs]
    assert [step for step, _ in logged] == [0, 2, 4]
    assert set(logged[0][1]) >= {"probing/det", "probing/det_offset", "probing/all", "probing/all_offset"}
    assert [entry["step"] for entry in trainer.state.log_history if "probing/all" in entry] == [0, 2, 4]
    # The evaluation's own metrics carry the numbers too (callbacks after this one, trainer.evaluate()).
    assert all("probing/det" in metrics for _, metrics in seen.metrics)
    # Training went on with the attention implementation it had.
    assert seen.attention and set(seen.attention) == {"sdpa"}
    assert trainer.model.config._attn_implementation == "sdpa"

    # Step 0 is the model before any update: the same counts as scoring its checkpoint from disk.
    step0 = probe.history[0][1]
    from_disk = run_probe(ScoreConfig.from_fields(model=tiny_bert(), relations=RELATIONS, limit=25, bootstrap=0))
    for relation in RELATIONS:
        np.testing.assert_array_equal(heads_of(step0, relation), heads_of(from_disk, relation))
    assert logged[0][1]["probing/det"] == pytest.approx(from_disk["relations"]["det"]["best"]["accuracy"])
    # Named after the run (the Trainer's run name, else its output folder), one fingerprint per step.
    assert [result["model"]["fingerprint"] for _, result in probe.history] == [
        f"live:trainer@{step}" for step in (0, 2, 4)]

    written = sorted(path.name for path in (tmp_path / "probing").iterdir())
    assert written == ["probing-curve.csv", "probing-curve.md", "probing-curve.png", "probing-step0.json",
                       "probing-step2.json", "probing-step4.json"]
    assert read_result(tmp_path / "probing" / "probing-step2.json")["config"]["training_step"] == 2


def test_the_callback_runs_nothing_on_ordinary_steps():
    from transformers import TrainerCallback

    from probing.analyses.probe.callbacks import ProbingCallback

    per_step = ("on_step_begin", "on_step_end", "on_substep_end", "on_pre_optimizer_step", "on_optimizer_step",
                "on_log", "on_prediction_step", "on_save", "on_epoch_begin", "on_epoch_end")
    assert [name for name in per_step if getattr(ProbingCallback, name) is not getattr(TrainerCallback, name)] == []


def test_every_nth_evaluation_once_per_step_and_without_a_handle_on_the_trainer(tmp_path):
    from transformers import AutoModelForMaskedLM, AutoTokenizer, TrainerControl, TrainerState, TrainingArguments

    from probing.analyses.probe.callbacks import ProbingCallback

    probe = ProbingCallback(limit=5, relations=["det"], every=2, name="direct")
    model = AutoModelForMaskedLM.from_pretrained(tiny_bert(), attn_implementation="sdpa").train()
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert())
    args, state, control = TrainingArguments(output_dir=str(tmp_path), report_to="none"), TrainerState(), \
        TrainerControl()
    metrics = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step in (0, 0, 10, 20, 30, 40):  # step 0 twice: two eval datasets at one step
            state.global_step = step
            metrics = {}
            probe.on_evaluate(args, state, control, metrics=metrics, model=model, processing_class=tokenizer)
    assert [step for step, _ in probe.history] == [0, 20, 40]
    assert [entry["step"] for entry in state.log_history] == [0, 20, 40]
    assert "probing/det" in metrics
    assert len([w for w in caught if "not attached" in str(w.message)]) == 1
    assert model.training and model.config._attn_implementation == "sdpa"
    assert torch.is_grad_enabled()  # scoring's inference mode ends with it


def test_bad_callback_options_fail_when_it_is_made_not_mid_training(tmp_path):
    from probing.analyses.probe.callbacks import ProbingCallback

    with pytest.raises(ProbingError, match="every"):
        ProbingCallback(every=0)
    with pytest.raises(ProbingError, match="relation"):
        ProbingCallback(relations=["DOBJ"])
    with pytest.raises(ProbingError, match="absent.conllu"):
        ProbingCallback(treebank=str(tmp_path / "absent.conllu"))
    with pytest.raises(ProbingError, match="tokenizer"):
        ProbingCallback()._tokenizer_of(None)


def test_other_commands_point_a_run_folder_to_probing_score(run_folder, capsys):
    assert main(["surface", "--model", str(run_folder), "--limit", "3"]) == 2
    assert "probing score --model FOLDER scores them all" in capsys.readouterr().err


def test_the_worked_example_runs_and_draws_its_curve(tmp_path, monkeypatch, capsys):
    import importlib.util

    from conftest import REPO

    monkeypatch.delenv("PROBING_TREEBANKS", raising=False)  # the sample treebank: what a clean clone has
    spec = importlib.util.spec_from_file_location("train_tiny_mlm", REPO / "examples" / "train_tiny_mlm.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    figure = tmp_path / "figure.png"
    assert example.main(["--steps", "2", "--eval-every", "1", "--probe-limit", "5", "--output-dir",
                         str(tmp_path / "run"), "--figure", str(figure)]) == 0
    with (tmp_path / "run" / "probing-curve.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    assert sorted({int(row["step"]) for row in rows}) == [0, 1, 2]  # step 0: before any update
    assert figure.read_bytes()[:4] == b"\x89PNG"
    assert "| 0 " in capsys.readouterr().out
