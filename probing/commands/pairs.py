"""``probing pairs``: a causal LM on minimal pairs, a pair set by name (BLiMP, CLAMS, RuBLiMP, agreement pairs made
from a treebank) or one's own file (accuracy per paradigm, per phenomenon, per field and overall)."""

from __future__ import annotations

import argparse

from probing.commands.common import (
    MAX_BATCH_SIZE,
    add_bootstrap_options,
    add_output_options,
    add_weights_options,
    batch_size,
    positive_int,
    seed_value,
    shard,
)
from probing.commands.pair_options import add_pair_set_options


def context_choice(text: str) -> str:
    """``--context``: bos, eos, none, or one token of the vocabulary (checked once the tokenizer is loaded).

    >>> context_choice("eos"), context_choice("<|endoftext|>")
    ('eos', '<|endoftext|>')
    """
    if not text or text != text.strip() or not text.isprintable():
        raise argparse.ArgumentTypeError(f"must be bos, eos, none or one token such as <|endoftext|>, got {text!r}")
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "A pair is right when the model gives the grammatical sentence the higher log-probability (a tie is "
        "wrong): log p(sentence) sums log p(token | all before it) over the sentence's tokens, tokenized as plain "
        "text after one BOS token (EOS when the tokenizer has no BOS). Overall = the mean of the paradigm "
        "accuracies, as BLiMP reports it; 95% Wilson score intervals (overall: of the mean, at the effective "
        "number of pairs). The pairs are a pair set (--pair-set: BLiMP by default, CLAMS, RuBLiMP, or agreement "
        "pairs made from a treebank), read from a folder (--blimp DIR or $PROBING_BLIMP for BLiMP, --minimal-pairs "
        "DIR or $PROBING_MINIMAL_PAIRS for every set), else a cache filled by a download from each set's public "
        "home, every file checked by its pinned sha256; or your own file (--pairs-file), unpinned. probing data "
        "pairs NAME writes a set out as JSON lines. Masked LMs have no minimal-pair score. Rules: "
        "docs/minimal-pairs.md."
    )
    parser.add_argument("--model", required=True, metavar="ID_OR_FOLDER", help="a causal LM: hub id or local folder")
    add_weights_options(parser, scored_in="log-probabilities are taken")
    add_pair_set_options(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--paradigms", nargs="+", metavar="UID",
                       help="paradigms to score, of the pair set or the file (default: all; BLiMP's 67 UIDs, a CLAMS "
                            "file's name, a RuBLiMP PID, the feature of pairs made from a treebank: number, person, "
                            "gender)")
    which.add_argument("--phenomena", nargs="+", metavar="TERM",
                       help="every paradigm of these phenomena (BLiMP's linguistics_term: subject_verb_agreement, "
                            "island_effects ...; RuBLiMP's phenomenon; a CLAMS file's name)")
    parser.add_argument("--limit", type=positive_int, metavar="N", help="only the first N pairs of each paradigm")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--blimp", metavar="DIR", help="a folder of BLiMP's UID.jsonl files (default: $PROBING_BLIMP, "
                                                       "else the download cache)")
    source.add_argument("--pairs-file", metavar="FILE.JSONL",
                        help="your own pairs instead of a pair set: JSON lines in BLiMP's format (sentence_good, "
                             "sentence_bad; optional UID, field, linguistics_term, pairID), as probing data pairs "
                             "writes them; not pinned: the result records the file's own sha256; --paradigms and "
                             "--phenomena choose among the file's")
    parser.add_argument("--batch-size", type=batch_size, default=32, metavar="B",
                        help=f"sentences per forward pass, at most {MAX_BATCH_SIZE} (changes no score; default: 32)")
    parser.add_argument("--context", default="bos", type=context_choice, metavar="TOKEN",
                        help="what every sentence is scored after: bos (the tokenizer's BOS token, else its EOS), eos, "
                             "none (the first token is then not scored), or one token of the vocabulary as the "
                             "tokenizer writes it (<|endoftext|>); an instruct model's BOS may be a chat-turn marker, "
                             "so the token is recorded and shown (default: bos)")
    parser.add_argument("--shard", type=shard, metavar="I/N",
                        help="only the pairs whose place in their paradigm is I modulo N; add the parts up with "
                             "probing merge (the same result as one run)")
    parser.add_argument("--seed", type=seed_value, default=0, metavar="N", help="seed of the bootstrap (default: 0)")
    add_bootstrap_options(parser, replicates="bootstrap replicates for the paired interval of a difference between "
                                              "two runs on the same pairs (the board's contexts), pairs resampled with "
                                              "replacement within each paradigm; the accuracies' own intervals are "
                                              "Wilson's and need none")
    add_output_options(parser, figures=False)


def run(args: argparse.Namespace) -> int:
    from probing.analyses.pairs.api import chosen_pair_set, score_pairs
    from probing.analyses.pairs.report import pairs_header, pairs_table
    from probing.atomic import check_output_path, result_of
    from probing.commands.common import give_result, model_inputs, progress_wanted, recorded_options
    from probing.commands.pair_options import check_pairs_file_alone, pair_set_inputs

    check_pairs_file_alone(args)
    if not args.pairs_file:  # a bad name or option before any file is looked at
        chosen_pair_set(args.pair_set, args.paradigms, blimp=args.blimp, lexicon=args.lexicon)
    if args.output:  # the pairs' files and the model's are inputs: no output goes among them
        check_output_path(args.output, inputs=[*pair_set_inputs(args), *model_inputs(args)],
                          follow_symlinks=args.follow_symlinks, replaces=result_of("pairs"))
    result = score_pairs(args.model, paradigms=args.paradigms, limit=args.limit, blimp=args.blimp,
                         batch_size=args.batch_size, bootstrap=args.bootstrap, seed=args.seed, device=args.device,
                         revision=args.revision, dtype=args.dtype, device_map=args.device_map,
                         context=args.context, shard=args.shard, progress=progress_wanted(args),
                         pairs_file=args.pairs_file, phenomena=args.phenomena, pair_set=args.pair_set,
                         minimal_pairs=args.minimal_pairs, lexicon=args.lexicon)
    print(pairs_header(result))
    print(pairs_table(result["pairs"]))
    result["config"]["options"] = recorded_options(args)  # every option that can change a number, as every command's
    give_result(result, args.output, follow_symlinks=args.follow_symlinks)
    return 0
