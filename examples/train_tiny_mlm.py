"""Pre-train a tiny masked LM from scratch on treebank text and watch its heads with probing's callback.

    python3 examples/train_tiny_mlm.py                 # under ten minutes on a 2-core CPU

A 3-layer, 4-head BERT with hidden size 64, random weights and its own WordPiece vocabulary learns to
fill masked words with transformers' Trainer. At every evaluation
ProbingCallback scores the model in memory; the first evaluation comes before
any update (``eval_on_start``), so step 0 is the random-init control. When
training ends the curve (best head vs best offset per relation, per step) is
drawn beside the per-step results in ``--output-dir``.

Text: the words of the project's sample treebank (75 sentences, trained and
probed on the same sentences), or, when ``PROBING_TREEBANKS`` points at a
folder holding en_ewt, en_ewt dev's words for training and the first
``--probe-limit`` sentences of en_ewt test for probing (sentences the model
never read). docs/training.md walks through a run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output-dir", default="tiny-mlm-run", metavar="DIR",
                        help="where the per-step results and the curve go (default: tiny-mlm-run)")
    parser.add_argument("--steps", type=int, default=400, metavar="N", help="optimizer steps (default: 400)")
    parser.add_argument("--eval-every", type=int, default=20, metavar="N",
                        help="steps between evaluations, each probed (default: 20)")
    parser.add_argument("--probe-limit", type=int, default=200, metavar="N",
                        help="sentences probed at each evaluation (default: 200)")
    parser.add_argument("--learning-rate", type=float, default=5e-3, metavar="LR",
                        help="peak learning rate (default: 0.005)")
    parser.add_argument("--layers", type=int, default=3, metavar="N", help="layers of 4 heads (default: 3)")
    parser.add_argument("--hidden", type=int, default=64, metavar="N", help="hidden size (default: 64)")
    parser.add_argument("--figure", metavar="FILE.png", help="also save the curve's figure here")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed of weights, masking, order (default: 0)")
    return parser.parse_args(argv)


def texts() -> tuple[Path, Path, str]:
    """(treebank whose words are trained on, treebank probed, a label): en_ewt when PROBING_TREEBANKS
    holds it, else the packaged sample treebank for both."""
    from probing.data.datasets.resolution import resolve_treebank
    from probing.testing import sample_path

    if os.environ.get("PROBING_TREEBANKS"):
        return resolve_treebank("en_ewt:dev", download=False), resolve_treebank("en_ewt:test", download=False), \
            "en_ewt (train on dev words, probe on test)"
    return sample_path(), sample_path(), "the sample treebank (train and probe on its 75 sentences)"


def main(argv=None) -> int:
    import torch
    from transformers import BertConfig, BertForMaskedLM, DataCollatorForLanguageModeling, Trainer, TrainingArguments
    from transformers.utils import logging as hf_logging

    from probing.analyses.probe.callbacks import ProbingCallback
    from probing.analyses.probe.curves import curve, draw_curve
    from probing.atomic import save_figure_atomic
    from probing.data.treebank import read_treebank
    from probing.testing import wordpiece_tokenizer

    args = parse_args(argv)
    hf_logging.set_verbosity_error()
    train_path, probe_path, label = texts()
    sentences = [list(sentence.words) for sentence in read_treebank(train_path)]
    words = [word for sentence in sentences for word in sentence]
    print(f"text: {label}: {len(sentences)} sentences, {len(words)} words", file=sys.stderr)

    # A vocabulary that fits the corpus: small enough that most words split into a few pieces.
    tokenizer = wordpiece_tokenizer(words, vocab_size=min(4000, max(400, len(set(words)) // 3)))
    encoded = [tokenizer(sentence, is_split_into_words=True, truncation=True, max_length=128)["input_ids"]
               for sentence in sentences]
    train = [{"input_ids": ids} for ids in encoded]
    held_out = train[-64:] if len(train) > 640 else train[:16]  # the masked-LM loss curve only

    torch.manual_seed(args.seed)
    model = BertForMaskedLM(BertConfig(
        vocab_size=len(tokenizer), hidden_size=args.hidden, num_hidden_layers=args.layers, num_attention_heads=4,
        intermediate_size=4 * args.hidden, max_position_embeddings=128, pad_token_id=tokenizer.pad_token_id,
        attn_implementation="sdpa",
    ))
    training = TrainingArguments(
        output_dir=str(Path(args.output_dir) / "trainer"), run_name="tiny-mlm", max_steps=args.steps,
        per_device_train_batch_size=32, per_device_eval_batch_size=32, learning_rate=args.learning_rate, warmup_steps=40,
        weight_decay=0.01, lr_scheduler_type="linear", eval_strategy="steps", eval_steps=args.eval_every,
        eval_on_start=True, logging_steps=args.eval_every, save_strategy="no", report_to="none", use_cpu=True,
        seed=args.seed, disable_tqdm=True,
    )
    probe = ProbingCallback(str(probe_path), limit=args.probe_limit, output_dir=args.output_dir)
    trainer = Trainer(model=model, args=training, train_dataset=train, eval_dataset=held_out,
                      data_collator=DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15, seed=args.seed),
                      processing_class=tokenizer)
    probe.attach(trainer)
    started = time.perf_counter()
    trainer.train()
    print(f"trained {args.steps} steps in {time.perf_counter() - started:.0f} s, probed "
          f"{len(probe.history)} times; the curve is in {args.output_dir}/probing-curve.*", file=sys.stderr)
    print((Path(args.output_dir) / "probing-curve.md").read_text(encoding="utf-8"))
    if args.figure:
        save_figure_atomic(draw_curve(curve(probe.history), f"tiny masked LM from scratch on {label}; "
                                                   "step 0: the random initialisation, before any update"), args.figure)
        print(f"wrote {args.figure}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
