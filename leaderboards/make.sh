#!/usr/bin/env bash
# Regenerate everything under leaderboards/: result files, tables and plots.
#
#   bash leaderboards/make.sh                 # score every model on every treebank, then tables and plots
#   SKIP_SCORING=1 bash leaderboards/make.sh  # only tables and plots, from the committed results
#   SKIP_TABLES=1 bash leaderboards/make.sh   # only the runs (when several subsets run one after another)
#   ONLY=probe bash leaderboards/make.sh      # one family of runs: probe, norms, trees, coref, noop, atlas, atlas-trees,
#                                             # blimp, versus, importance, agreement
#   VERSUS_SIZED=1 ONLY=versus bash leaderboards/make.sh  # the causal board's rows with the draws its family needs
#                                             # (only: those alone, as leaderboards/gpu.sh runs them)
#   AGREEMENT_CAUSAL=only ONLY=agreement bash leaderboards/make.sh  # agreement's disabled heads alone (gpu.sh's);
#                                             # AGREEMENT_LANGUAGES=de picks rows of its grid
#   MODELS=all-MiniLM-L6-v2 INITS=pretrained TREEBANKS=en_ewt ONLY=trees bash leaderboards/make.sh  # a subset
#   PLAN=1 bash leaderboards/make.sh          # run nothing: list the pieces of the grid that are done and those left
#   FORCE=1 bash leaderboards/make.sh         # run every piece again, even those already made by the same command
#   DEVICE=cuda VERSUS_DIR=leaderboards/versus-gpu ... # every model run on that device (leaderboards/gpu.sh: the GPU grid)
#
# Every run is a piece: its output, and the command that made it, recorded in leaderboards/pieces.tsv when it
# is written. A piece whose output is there and was made by the very same command is done and is not run again,
# so a grid too long for one sitting (the atlas, BLiMP's 67,000 pairs, the causal board) is run by calling this
# script again: it goes on where it stopped. A piece that supports it saves a checkpoint now and then (in
# $GRID_STATE, default ~/.cache/probing/grid, outside the repository) and resumes from it. The script ends with
# what is done and what is left.
#
# Checkpoints are read from $PROBING_MODELS/<folder> (all-MiniLM-L6-v2, all-mpnet-base-v2,
# SmolLM2-135M-Instruct) and treebanks from $PROBING_TREEBANKS or the cache (probing data fetch
# en_ewt en_gum); a model that is absent is left out, and the tables say so by its missing row.
# Every run selects on the dev split and reports on test (--treebank NAME), with a Poisson bootstrap
# of $REPLICATES replicates (500 keeps each result file small; 1000 moved interval ends by at most
# 0.2 points on all-MiniLM-L6-v2, en_ewt). The models are linked into .cache/models/ (ignored by git)
# and named by that relative path, so no result records a machine's folders.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
replicates="${REPLICATES:-500}"
python="${PYTHON:-python3}"
only="${ONLY:-}"
device="${DEVICE:-}"  # --device of every model run (empty: the commands' default, cpu); part of each piece's command
if [ -n "${PLAN:-}" ]; then unset SKIP_SCORING; SKIP_TABLES=1; fi  # walk every piece, run nothing
probing() { "$python" -m probing "$@"; }
wanted() { [ -z "$only" ] || [ "$only" = "$1" ]; }

manifest=leaderboards/pieces.tsv  # OUTPUT<TAB>its sha256<TAB>the command that made it (paths relative to the repository)
grid_state="${GRID_STATE:-${PROBING_CACHE:-$HOME/.cache/probing}/grid}"
touch "$manifest"
pieces_done=0; pieces_run=0; pieces_left=()
made_by() {  # made_by OUTPUT ARGS...: true when OUTPUT is there, as these ARGS made it (the manifest's sha256)
  local output="$1"; shift
  [ -z "${FORCE:-}" ] && [ -f "$output" ] &&
    grep -qxF "$output	$(sha256sum < "$output" | cut -d' ' -f1)	$*" "$manifest"
}
piece() {  # piece OUTPUT [--resumable] [--any-device] ARGS...: run `probing ARGS --output OUTPUT` unless it is done
  # (see above). --any-device: the device is not part of the piece's command, so a piece made on a GPU is done for a
  # CPU grid and the other way round (the agreement family's causal pieces, which gpu.sh runs: the device moves
  # floats at near-ties only, and piece-times.tsv still says what made each piece)
  local output="$1"; shift
  local resumable="" any_device=""
  while [[ "$1" == --resumable || "$1" == --any-device ]]; do
    [ "$1" = --resumable ] && resumable=1; [ "$1" = --any-device ] && any_device=1; shift
  done
  local on=(); [ -n "$device" ] && on=(--device "$device")
  [ -z "$any_device" ] && set -- "$@" "${on[@]}" && on=()
  if made_by "$output" "$@"; then pieces_done=$((pieces_done + 1)); return 0; fi
  local checkpoint="$grid_state/${output//\//__}.checkpoint"
  if [ -n "${PLAN:-}" ]; then  # a piece cut short says how far its checkpoint got
    local saved=""
    [ -n "$resumable" ] && [ -f "$checkpoint" ] && saved="$("$python" -c "import sys
from probing.engine.checkpointing import progress
print(progress(sys.argv[1]))" "$checkpoint" 2> /dev/null)" && saved=" (resumes from its checkpoint: $saved)"
    pieces_left+=("$output$saved"); return 0
  fi
  local extra=()
  if [ -n "$resumable" ]; then
    mkdir -p "$grid_state"
    extra=(--checkpoint "$checkpoint"); [ -f "$checkpoint" ] && extra+=(--resume)
  fi
  echo "$* ${on[*]} -> $output" >&2
  local started=$SECONDS
  probing "$@" "${on[@]}" "${extra[@]}" --output "$output" > /dev/null
  record_piece "$output" "$@"
  record_time "$output" $((SECONDS - started))
  echo "  done in $((SECONDS - started)) s" >&2
}
record_piece() {  # record_piece OUTPUT ARGS...: OUTPUT was just made by `probing ARGS`
  local output="$1"; shift
  local line; line="$(printf '%s\t%s\t%s' "$output" "$(sha256sum < "$output" | cut -d' ' -f1)" "$*")"
  { grep -vF "$output	" "$manifest" || true; echo "$line"; } | LC_ALL=C sort > "$manifest.tmp" && mv "$manifest.tmp" "$manifest"
  pieces_run=$((pieces_run + 1))
}
times=leaderboards/piece-times.tsv  # OUTPUT<TAB>seconds its last run took<TAB>on what (the boards' notes quote these)
machine() {  # the device a piece ran on, in words: the GPU's name, or the CPU cores it had (its threads, when
  # OMP_NUM_THREADS gave it fewer: a grid beside another on the second core)
  if [[ "$device" == cuda* ]] && command -v nvidia-smi > /dev/null; then
    echo "$device: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  elif [ "$(nproc)" -lt "$(nproc --all)" ]; then
    local threads; threads="$(nproc)"
    echo "${device:-cpu}: $threads thread$([ "$threads" = 1 ] || echo s) of $(nproc --all) cores"
  else
    echo "${device:-cpu}: $(nproc) cores"
  fi
}
record_time() {  # record_time OUTPUT SECONDS
  { [ -f "$times" ] && grep -vF "$1	" "$times" || true; printf '%s\t%s\t%s\n' "$1" "$2" "$(machine)"; } |
    LC_ALL=C sort > "$times.tmp" && mv "$times.tmp" "$times"
}
merged() {  # merged OUTPUT PART...: probing merge of the parts once every part is done (else the output is left)
  local output="$1"; shift
  local part; for part in "$@"; do [ -f "$part" ] || { pieces_left+=("$output (waits for its parts)"); return 0; }; done
  # done when the output merged these very parts (each part's path and creation time, its merged_from): merging
  # again would change nothing but the output's own creation time
  if [ -z "${FORCE:-}" ] && "$python" -c "import json, sys
created = lambda path: json.load(open(path))['created']
merged = {part['path']: part['created'] for part in json.load(open(sys.argv[1])).get('merged_from', [])}
sys.exit(merged != {part: created(part) for part in sys.argv[2:]})" "$output" "$@" 2> /dev/null; then
    return 0
  fi
  if [ -n "${PLAN:-}" ]; then pieces_left+=("$output (its parts are done: merge)"); return 0; fi
  probing merge --output "$output" "$@" 2> /dev/null
}

treebanks=(${TREEBANKS:-en_ewt en_gum})
models=(${MODELS:-all-MiniLM-L6-v2 all-mpnet-base-v2 SmolLM2-135M-Instruct})
inits=(${INITS:-pretrained random-init})
relations=(dobj det pobj poss all)
reference=leaderboards/reference/clark2019-bert-base-wsj.json

mkdir -p .cache/models
present=()
for name in "${models[@]}"; do
  if [ -n "${PROBING_MODELS:-}" ] && [ -f "$PROBING_MODELS/$name/config.json" ]; then
    ln -sfn "$PROBING_MODELS/$name" ".cache/models/$name"
    present+=("$name")
  else
    echo "$name is not in \$PROBING_MODELS: left out" >&2
  fi
done

score_all() {  # a command for every model, treebank and init: $1 = family, $2 = command, rest = its options
  local family="$1" command="$2"; shift 2
  for name in "${present[@]}"; do
    for treebank in "${treebanks[@]}"; do
      [ "$family" = coref ] && [ "$treebank" != en_gum ] && continue  # only GUM carries coreference
      mkdir -p "leaderboards/$treebank/results"
      for init in "${inits[@]}"; do
        flag=(); suffix=""
        if [ "$init" = random-init ]; then flag=(--random-init); suffix="-random-init"; fi
        extra=()
        # SmolLM2's trees keep every head's replicate counts in two readings (classic and causal): with 500
        # replicates its pretrained files pass the 5 MB a file, so they get 400 (intervals move by ~0.1 point)
        [ "$family" = trees ] && [ "$name" = SmolLM2-135M-Instruct ] && [ "$init" = pretrained ] && extra=(--bootstrap 400)
        output="leaderboards/$treebank/results/$name$suffix${family:+-$family}.json"
        [ "$family" = probe ] && output="leaderboards/$treebank/results/$name$suffix.json"
        piece "$output" --resumable "$command" --model ".cache/models/$name" --treebank "$treebank" \
          --bootstrap "$replicates" --seed 0 "${flag[@]}" --quiet "$@" "${extra[@]}"
      done
    done
  done
}

if [ -z "${SKIP_SCORING:-}" ]; then
  wanted probe && score_all probe score
  wanted norms && score_all norms score --attention norms
  # The trained probes' weights are dropped (kept as their sha256): they are most of a trees result's size
  # (SmolLM2's 3.7 MB of float32), and a leaderboard copy is read, not reused with --select-on.
  wanted trees && score_all trees trees --drop-probe-weights
  wanted coref && score_all coref coref --window 512  # one window for every model: the decoder's own is 8k
  # The [SEP] no-op test on test, for the heads each probe result (pretrained or random init) chose on dev. Its
  # result keeps every head's replicate sums (float64, so that parts merge and an in-sample choice can be made
  # after the pass): 100 replicates keep all-mpnet-base-v2's file near 3 MB (500 made it 15 MB); SmolLM2's 270
  # heads need 50 to stay under this repository's 5 MB per file.
  if wanted noop; then
    for name in "${present[@]}"; do
      noop_replicates="${NOOP_REPLICATES:-100}"
      [ "$name" = SmolLM2-135M-Instruct ] && noop_replicates="${NOOP_REPLICATES:-50}"
      for treebank in "${treebanks[@]}"; do
        for init in "${inits[@]}"; do
          flag=(); suffix=""
          if [ "$init" = random-init ]; then flag=(--random-init); suffix="-random-init"; fi
          probe="leaderboards/$treebank/results/$name$suffix.json"
          [ -f "$probe" ] || { echo "no $probe: no-op test of $name ($init) on $treebank left out" >&2; continue; }
          output="leaderboards/$treebank/results/$name$suffix-noop.json"
          noop=(explore --model ".cache/models/$name" "${flag[@]}" --treebank "$treebank:test" --result "$probe" \
            --bootstrap "$noop_replicates" --seed 0 --quiet)
          if made_by "$output" "${noop[@]}"; then pieces_done=$((pieces_done + 1)); continue; fi
          if [ -n "${PLAN:-}" ]; then pieces_left+=("$output"); continue; fi
          saved="$(mktemp -d)"
          echo "explore (no-op test) $name ($init) on $treebank -> $output" >&2
          probing "${noop[@]}" --save-results "$saved" --output "$saved/page.html" > /dev/null
          mv "$saved/noop.json" "$output"
          rm -rf "$saved"
          record_piece "$output" "${noop[@]}"
        done
      done
    done
  fi
fi

# The multilingual atlas (docs/languages.md): every PUD treebank that is available (en_pud only for those who
# fetched it) x the multilingual checkpoints and their random inits. A bare PUD name chooses each head and
# offset on the file's even half and reports it on the odd half; --limit N takes the first N sentences of the
# file before halving. ATLAS_LIMIT and ATLAS_TREES_LIMIT size the runs (empty: all 1,000 sentences); the
# committed atlas was made with these defaults (all 1,000 sentences of each treebank; leaderboards/README.md).
pud=(${PUD:-ar_pud de_pud en_pud fi_pud fr_pud hi_pud ru_pud tr_pud zh_pud})
atlas_models=(${ATLAS_MODELS:-multilingual-e5-small gemma-3-270m})
atlas_limit="${ATLAS_LIMIT-}"
atlas_trees_limit="${ATLAS_TREES_LIMIT-}"
atlas_trees_inits=(${ATLAS_TREES_INITS:-pretrained random-init})
atlas=leaderboards/atlas
available() {  # a treebank already local (PROBING_TREEBANKS or the cache); else say why on one line, return 1.
  # Any other failure (a broken import, a bug) stops the script rather than quietly leaving every treebank out.
  "$python" -c "import sys
from probing.data.datasets.resolution import resolve_treebank
from probing.errors import ProbingError
try:
    resolve_treebank(sys.argv[1], download=False)
except ProbingError as error:
    print(f'{sys.argv[1]}: {error}', file=sys.stderr)
    sys.exit(3)" "$1" || { status=$?; [ "$status" -eq 3 ] && return 1; echo "make.sh: checking $1 failed (exit $status)" >&2; exit "$status"; }
}
atlas_present=()
for name in "${atlas_models[@]}"; do
  if [ -n "${PROBING_MODELS:-}" ] && [ -f "$PROBING_MODELS/$name/config.json" ]; then
    ln -sfn "$PROBING_MODELS/$name" ".cache/models/$name"
    atlas_present+=("$name")
  else
    echo "$name is not in \$PROBING_MODELS: left out of the atlas" >&2
  fi
done
if [ -z "${SKIP_SCORING:-}" ] && { wanted atlas || wanted atlas-trees; }; then
  mkdir -p "$atlas/results"
  for treebank in "${pud[@]}"; do
    available "$treebank" || { echo "$treebank left out of the atlas" >&2; continue; }
    for name in "${atlas_present[@]}"; do
      for init in "${inits[@]}"; do
        flag=(); suffix=""
        if [ "$init" = random-init ]; then flag=(--random-init); suffix="-random-init"; fi
        if wanted atlas; then
          piece "$atlas/results/$name$suffix-$treebank.json" --resumable score --model ".cache/models/$name" \
            --treebank "$treebank" ${atlas_limit:+--limit "$atlas_limit"} --bootstrap "$replicates" --seed 0 \
            "${flag[@]}" --quiet
        fi
        if wanted atlas-trees && [[ " ${atlas_trees_inits[*]} " == *" $init "* ]]; then
          piece "$atlas/results/$name$suffix-$treebank-trees.json" --resumable trees --model ".cache/models/$name" \
            --treebank "$treebank" ${atlas_trees_limit:+--limit "$atlas_trees_limit"} --no-probes \
            --bootstrap "$replicates" --seed 0 "${flag[@]}" --quiet
        fi
      done
    done
  done
fi

# BLiMP's minimal pairs (docs/minimal-pairs.md) for the intact decoders: all 1,000 pairs of each of the 67
# paradigms (BLIMP_LIMIT=N: the first N of each), each model after its BOS token and, for SmolLM2-Instruct, whose
# BOS is its chat-turn marker <|im_start|>, also after its EOS <|im_end|>, after nothing, and after <|endoftext|>,
# the document separator of its pretraining (BLIMP_CONTEXTS_<model> overrides).
# The pairs are scored in BLIMP_PARTS parts (--shard I/N, each a sample of every paradigm), kept in
# blimp/parts/ so that a grid cut short goes on where it stopped; once every part of a run is there, probing merge
# adds them up into blimp/results/ (the very result of one run). The pairs are read from $PROBING_BLIMP, else
# downloaded and checked by sha256.
blimp_models=(${BLIMP_MODELS:-SmolLM2-135M-Instruct gemma-3-270m})
blimp_limit="${BLIMP_LIMIT-}"
blimp_parts="${BLIMP_PARTS:-20}"
blimp_contexts() {  # the contexts a model is scored after
  case "$1" in
    SmolLM2-135M-Instruct) echo "${BLIMP_CONTEXTS_SMOLLM2:-bos eos none <|endoftext|>}" ;;
    *) echo "bos" ;;
  esac
}
if [ -z "${SKIP_SCORING:-}" ] && wanted blimp; then
  mkdir -p leaderboards/blimp/results leaderboards/blimp/parts
  for name in "${blimp_models[@]}"; do
    if [ -n "${PROBING_MODELS:-}" ] && [ -f "$PROBING_MODELS/$name/config.json" ]; then
      ln -sfn "$PROBING_MODELS/$name" ".cache/models/$name"
    else
      echo "$name is not in \$PROBING_MODELS: left out of BLiMP" >&2; continue
    fi
    for context in $(blimp_contexts "$name"); do
      stem="$name"; [ "$context" = bos ] || stem="$name-after-${context//[^A-Za-z0-9]/}"  # <|endoftext|>: endoftext
      parts=()
      for ((index = 0; index < blimp_parts; index++)); do
        part="leaderboards/blimp/parts/$stem/part-$index-of-$blimp_parts.json"
        mkdir -p "$(dirname "$part")"
        piece "$part" --resumable pairs --model ".cache/models/$name" ${blimp_limit:+--limit "$blimp_limit"} --context "$context" \
          --shard "$index/$blimp_parts" --bootstrap 1000 --seed 0 --quiet
        parts+=("$part")
      done
      merged "leaderboards/blimp/results/$stem-blimp.json" "${parts[@]}"
    done
  done
fi

# Chosen against matched random heads (docs/dark-secrets.md): each relation's top K heads, chosen on all of
# en_ewt dev (its DEV result is kept beside the others: it is the choice), disabled against VERSUS_RANDOM matched
# random sets (every distinct set once where the layer-matched space holds no more than that: k=1, or a layer of
# gemma-3-270m's 4 heads). The decoders with a trained LM head: on the LM loss and the probe over the first
# $VERSUS_LIMIT sentences of en_ewt test, and on the relations' own BLiMP phenomena (the first $VERSUS_PAIRS pairs of
# each of their 14 paradigms); the encoders, which have no trained LM head: on the probe only. Each model, metric,
# relation and k is one piece (results/MODEL-METRIC-REL-kK.json), so the grid goes on where it stopped.
versus_models=(${VERSUS_MODELS:-SmolLM2-135M-Instruct gemma-3-270m})
versus_encoders=(${VERSUS_ENCODERS-all-MiniLM-L6-v2})  # MPNet computes attention in its own code: no head can be disabled
versus_relations=(${VERSUS_RELATIONS:-det nsubj})
versus_phenomena=(${VERSUS_PHENOMENA:-determiner_noun_agreement subject_verb_agreement})  # BLiMP's, of those relations
versus_k=(${VERSUS_K:-1 4})
versus_random="${VERSUS_RANDOM:-100}"
# The encoders' rows (the probe alone, on a small model: about 3 s a set here) got 1,200 draws; the decoders' 100
# (and gemma's 81-set layer spaces) cannot reach 0.05 after Holm, and the board's notes list them as untestable.
versus_random_encoders="${VERSUS_RANDOM_ENCODERS:-1200}"
# The sized pieces (VERSUS_SIZED=1: after the grid above; VERSUS_SIZED=only: they alone, as leaderboards/gpu.sh runs
# them, so that no CPU piece is run again on another device): the rows that need more draws than they have, with the
# draws the board's family needs (its notes compute them: 14 primary cells can be made testable, so 1 + draws >=
# 20 x 14), band-matched (ablate --match band) where the chosen set's layer-matched space holds fewer sets than that
# (gemma-3-270m's 4 heads a layer), layer-matched where it holds enough (SmolLM2's 4,096 sets). They read the DEV
# result already made and write results/MODEL-METRIC-REL-kK-sized.json, which the board shows in place of the row's
# earlier piece once it is there. MiniLM's rows have their draws already (1,200, and the 924 sets of nsubj's space).
versus_sized="${VERSUS_SIZED:-}"
versus_sized_models=(${VERSUS_SIZED_MODELS:-SmolLM2-135M-Instruct gemma-3-270m})
versus_sized_k=(${VERSUS_SIZED_K:-4})
versus_sized_draws="${VERSUS_SIZED_DRAWS:-279}"
matching_for() {  # matching_for DEV REL K DRAWS: layer when the chosen set's layer-matched space holds DRAWS sets, else band
  "$python" -c "import sys
from probing.analyses.ablation.versus import matching_needed
from probing.results.io import read_result
print(matching_needed(read_result(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))" "$@"
}
versus_limit="${VERSUS_LIMIT-300}"
versus_pairs="${VERSUS_PAIRS-50}"
versus_metrics=(${VERSUS_METRICS:-lm probe minimal-pairs})
versus="${VERSUS_DIR:-leaderboards/versus}"  # another folder keeps a grid of other sizes or another device apart
if [ -z "${SKIP_SCORING:-}" ] && wanted versus && [ "$versus_sized" != only ]; then
  mkdir -p "$versus/results"
  for name in "${versus_models[@]}" "${versus_encoders[@]}"; do
    if [ -n "${PROBING_MODELS:-}" ] && [ -f "$PROBING_MODELS/$name/config.json" ]; then
      ln -sfn "$PROBING_MODELS/$name" ".cache/models/$name"
    else
      echo "$name is not in \$PROBING_MODELS: left out of chosen vs random" >&2; continue
    fi
    metrics=("${versus_metrics[@]}"); draws="$versus_random"
    if [[ " ${versus_encoders[*]} " == *" $name "* ]]; then
      metrics=(probe); draws="$versus_random_encoders"  # no trained LM head: the probe alone
    fi
    dev="$versus/results/$name-dev.json"
    piece "$dev" --resumable score --model ".cache/models/$name" --treebank en_ewt:dev \
      --relations "${versus_relations[@]}" all --bootstrap 0 --seed 0 --quiet
    for metric in "${metrics[@]}"; do
      for relation in "${versus_relations[@]}"; do
        input=(--treebank en_ewt:test ${versus_limit:+--limit "$versus_limit"}); resumable=(--resumable)
        case "$metric" in
          probe) input+=(--relations "$relation" all --scores-only) ;;  # its sums: 400 MB a model
          minimal-pairs) input=(--phenomena "${versus_phenomena[@]}" ${versus_pairs:+--limit "$versus_pairs"}) ;;
        esac
        for k in "${versus_k[@]}"; do
          piece "$versus/results/$name-$metric-$relation-k$k.json" "${resumable[@]}" ablate \
            --model ".cache/models/$name" --metric "$metric" "${input[@]}" --chosen "$relation" --k "$k" \
            --random "$draws" --select-on "$dev" --bootstrap 1000 --seed 0 --quiet
        done
      done
    done
  done
fi
if [ -z "${SKIP_SCORING:-}" ] && wanted versus && [ -n "$versus_sized" ]; then
  for name in "${versus_sized_models[@]}"; do
    dev="$versus/results/$name-dev.json"
    if [ ! -f "$dev" ] || [ -z "${PROBING_MODELS:-}" ] || [ ! -f "$PROBING_MODELS/$name/config.json" ]; then
      echo "$name: no checkpoint or no $dev: its sized pieces left out" >&2; continue
    fi
    ln -sfn "$PROBING_MODELS/$name" ".cache/models/$name"
    for metric in "${versus_metrics[@]}"; do
      for relation in "${versus_relations[@]}"; do
        input=(--treebank en_ewt:test ${versus_limit:+--limit "$versus_limit"})
        case "$metric" in
          probe) input+=(--relations "$relation" all --scores-only) ;;
          minimal-pairs) input=(--phenomena "${versus_phenomena[@]}" ${versus_pairs:+--limit "$versus_pairs"}) ;;
        esac
        for k in "${versus_sized_k[@]}"; do
          match="$(matching_for "$dev" "$relation" "$k" "$versus_sized_draws")"
          piece "$versus/results/$name-$metric-$relation-k$k-sized.json" --resumable ablate \
            --model ".cache/models/$name" --metric "$metric" "${input[@]}" --chosen "$relation" --k "$k" \
            --random "$versus_sized_draws" --match "$match" --select-on "$dev" --bootstrap 1000 --seed 0 --quiet
        done
      done
    done
  done
fi

# Every head alone (the importance map): each head of the model disabled by itself, on the same units as the
# causal board's rows (the LM loss and the probe on the first $VERSUS_LIMIT sentences of en_ewt test, the relations'
# own BLiMP paradigms), with every condition's bootstrap replicates kept (--scores-only) so that a head's harm can be
# set against its DEV accuracy (the versus board's DEV results) without another model pass. One piece per model and
# metric (results/MODEL-METRIC.json), resumable; the encoders on the probe alone, as on the versus board.
importance="${IMPORTANCE_DIR:-leaderboards/importance}"
importance_models=(${IMPORTANCE_MODELS:-all-MiniLM-L6-v2 gemma-3-270m SmolLM2-135M-Instruct})
if [ -z "${SKIP_SCORING:-}" ] && wanted importance; then
  mkdir -p "$importance/results"
  for name in "${importance_models[@]}"; do
    if [ -n "${PROBING_MODELS:-}" ] && [ -f "$PROBING_MODELS/$name/config.json" ]; then
      ln -sfn "$PROBING_MODELS/$name" ".cache/models/$name"
    else
      echo "$name is not in \$PROBING_MODELS: left out of the importance maps" >&2; continue
    fi
    metrics=("${versus_metrics[@]}")
    [[ " ${versus_encoders[*]} " == *" $name "* ]] && metrics=(probe)
    for metric in "${metrics[@]}"; do
      input=(--treebank en_ewt:test ${versus_limit:+--limit "$versus_limit"})
      case "$metric" in
        probe) input+=(--relations "${versus_relations[@]}" all) ;;
        minimal-pairs) input=(--phenomena "${versus_phenomena[@]}" ${versus_pairs:+--limit "$versus_pairs"}) ;;
      esac
      # --any-device: gpu.sh makes the decoders' maps (hours each on two CPU cores), and a CPU grid takes them as done
      piece "$importance/results/$name-$metric.json" --resumable --any-device ablate --model ".cache/models/$name" \
        --metric "$metric" "${input[@]}" --each-head --scores-only --bootstrap 1000 --seed 0 --quiet
    done
  done
fi

# Agreement in every language (docs/minimal-pairs.md): does a language's subject head matter for its agreement?
# One multilingual causal LM; per language its `nsubj` heads chosen on DEV (a PUD treebank's even half, as in the
# atlas; en_ewt dev for English), its pair sets (CLAMS and RuBLiMP, the first $AGREEMENT_LIMIT pairs of each
# paradigm, beside the agreement pairs made from the treebank's held-out odd half, all of them), scored intact,
# then those heads disabled (k = 1 and 4) against matched random sets and every head alone (the importance map).
# LANGUAGE=DEV=SET,SET...: Chinese has no agreeing verb (no pair) and is left out.
agreement_model="${AGREEMENT_MODEL:-gemma-3-270m}"
agreement_grid=(${AGREEMENT_GRID:-de=de_pud:even=clams-de,de_pud:odd:agreement fr=fr_pud:even=clams-fr,fr_pud:odd:agreement
  ru=ru_pud:even=clams-ru,rublimp,ru_pud:odd:agreement fi=fi_pud:even=fi_pud:odd:agreement,fi_tdt:test:agreement
  hi=hi_pud:even=hi_pud:odd:agreement ar=ar_pud:even=ar_pud:odd:agreement tr=tr_pud:even=tr_pud:odd:agreement
  en=en_ewt:dev=en_ewt:test:agreement})
agreement_limit="${AGREEMENT_LIMIT-100}"   # pairs per paradigm of a curated set (CLAMS: 7 paradigms, RuBLiMP: 19)
agreement_k=(${AGREEMENT_K:-1 4})
agreement_random="${AGREEMENT_RANDOM:-100}"
agreement_causal="${AGREEMENT_CAUSAL-1}"  # empty: the intact accuracies alone (minutes), not the disabled heads (hours);
# only: the disabled heads alone, on DEV results already made (leaderboards/gpu.sh runs them so on a GPU)
agreement_languages=" ${AGREEMENT_LANGUAGES:-} "  # LANGUAGE ...: those rows of the grid only (empty: every row)
agreement=leaderboards/agreement
if [ -z "${SKIP_SCORING:-}" ] && wanted agreement; then
  if [ -n "${PROBING_MODELS:-}" ] && [ -f "$PROBING_MODELS/$agreement_model/config.json" ]; then
    ln -sfn "$PROBING_MODELS/$agreement_model" ".cache/models/$agreement_model"
    mkdir -p "$agreement/results"
    for row in "${agreement_grid[@]}"; do
      IFS== read -r language dev_treebank sets <<< "$row"
      [ "$agreement_languages" = "  " ] || [[ "$agreement_languages" == *" $language "* ]] || continue
      dev="$agreement/results/$agreement_model-$language-dev.json"
      if [ "$agreement_causal" = only ]; then  # the causal pieces choose on the DEV result a CPU grid made
        [ -f "$dev" ] || { echo "$language: no $dev yet: its causal pieces left out" >&2; continue; }
      else
        available "$dev_treebank" || continue   # with its split or half: en_ewt alone names no split
        piece "$dev" --resumable score --model ".cache/models/$agreement_model" --treebank "$dev_treebank" \
          --relations nsubj all --bootstrap 0 --seed 0 --quiet
      fi
      IFS=, read -r -a pair_sets <<< "$sets"
      for set in "${pair_sets[@]}"; do
        stem="$agreement_model-${set//:/-}"
        units=(--pair-set "$set"); [[ "$set" == *:agreement ]] || units+=(${agreement_limit:+--limit "$agreement_limit"})
        [ "$agreement_causal" = only ] ||
          piece "$agreement/results/$stem.json" --resumable pairs --model ".cache/models/$agreement_model" "${units[@]}" --seed 0 --quiet
        [ -n "$agreement_causal" ] || continue
        for k in "${agreement_k[@]}"; do
          piece "$agreement/results/$stem-nsubj-k$k.json" --resumable --any-device ablate \
            --model ".cache/models/$agreement_model" --metric minimal-pairs "${units[@]}" --chosen nsubj --k "$k" \
            --random "$agreement_random" --select-on "$dev" --bootstrap 1000 --seed 0 --quiet
        done
        piece "$agreement/results/$stem-each-head.json" --resumable --any-device ablate \
          --model ".cache/models/$agreement_model" --metric minimal-pairs "${units[@]}" --each-head --scores-only \
          --bootstrap 1000 --seed 0 --quiet
      done
    done
  else
    echo "$agreement_model is not in \$PROBING_MODELS: left out of agreement in every language" >&2
  fi
fi

rederived() {  # rederived RESULT: give a --chosen result the versus block this version derives from its own
  # conditions and state, when it differs (a rule changed, as the permutation test's tie did in 2026-12): the
  # file is rewritten atomically and, when the manifest had recorded it as made, recorded again, so the model
  # time is not spent a second time
  local output="$1" recorded made=""
  recorded="$(grep -F "$output	" "$manifest" | cut -f3)" || recorded=""
  [ -n "$recorded" ] && made_by "$output" "$recorded" && made=1
  "$python" -c "import sys
from probing.analyses.ablation.versus import versus_block
from probing.results.io import read_result, write_result
result = read_result(sys.argv[1], analysis='ablation')
block = versus_block(result)
if 'versus' in result and block != result['versus']:
    write_result({**result, 'versus': block}, sys.argv[1])
    print(f'{sys.argv[1]}: versus block derived again by this version', file=sys.stderr)
else:
    sys.exit(1)" "$output" || return 0
  if [ -n "$made" ]; then record_piece "$output" "$recorded"; pieces_run=$((pieces_run - 1)); fi
}
report_pieces() {  # what is done and what is left of the grid this call walked
  echo "pieces: ${pieces_done} done before this call, ${pieces_run} run now, ${#pieces_left[@]} left" >&2
  local left; for left in "${pieces_left[@]}"; do echo "  left: $left" >&2; done
}
if [ -n "${SKIP_TABLES:-}" ]; then
  report_pieces
  [ -n "${PLAN:-}" ] || echo "results written; tables and plots left as they were (SKIP_TABLES)" >&2
  exit 0
fi

for treebank in "${treebanks[@]}"; do
  dir="leaderboards/$treebank"
  shopt -s nullglob; results=("$dir"/results/*.json); shopt -u nullglob
  if [ "${#results[@]}" -eq 0 ]; then echo "no results in $dir/results; skipped" >&2; continue; fi
  for format in md:md csv:csv json:json latex:tex html:html; do
    probing leaderboard "${results[@]}" --reference "$reference" --format "${format%%:*}" \
      --output "$dir/leaderboard.${format#*:}"
  done
  mkdir -p "$dir/plots"
  for result in "$dir"/results/*.json; do
    stem="$(basename "$result" .json)"
    case "$stem" in
      *-trees|*-coref|*-noop) continue ;;  # their figures are made by their own commands
    esac
    probing plot "$result" --output "$dir/plots/$stem.png"
    case "$stem" in
      *-random-init*|*-norms) ;;  # the overview says all there is to say
      *) for relation in "${relations[@]}"; do
           probing plot "$result" --relation "$relation" --output "$dir/plots/$stem-$relation.png"
         done ;;
    esac
  done
done
# The atlas's tables: one board of every language (each with its best-offset row) and the whole-tree table;
# per model and init, the transfer matrices (.md, .json with intervals) and the languages x relations figure.
if [ -d "$atlas/results" ]; then
  shopt -s nullglob; results=("$atlas"/results/*.json); shopt -u nullglob
  if [ "${#results[@]}" -gt 0 ]; then
    for format in md:md csv:csv json:json latex:tex html:html; do  # the same formats and reference as the English boards
      probing leaderboard "${results[@]}" --reference "$reference" --format "${format%%:*}" \
        --output "$atlas/leaderboard.${format#*:}"
    done
    mkdir -p "$atlas/transfer"
    for name in "${atlas_models[@]}"; do
      for init in "${inits[@]}"; do
        suffix=""; [ "$init" = random-init ] && suffix="-random-init"
        files=()
        for treebank in "${pud[@]}"; do
          [ -f "$atlas/results/$name$suffix-$treebank.json" ] && files+=("$atlas/results/$name$suffix-$treebank.json")
        done
        [ "${#files[@]}" -eq 0 ] && continue
        probing transfer "${files[@]}" --output "$atlas/transfer/$name$suffix.md" --figure "$atlas/$name$suffix.png"
        probing transfer "${files[@]}" --output "$atlas/transfer/$name$suffix.json"
      done
    done
  fi
fi
# Chosen against matched random heads: one table of every model's --chosen ablations (every metric), and per
# model and metric the figure of the chosen sets' effects against the random sets' histograms.
# (results/MODEL-METRIC.json: a whole model's grid in one file, as the smaller boards before the pieces were made)
# Every such board: leaderboards/versus, and beside it any other VERSUS_DIR (leaderboards/versus-gpu).
for board in $(printf '%s\n' leaderboards/versus leaderboards/versus-* "$versus" | sort -u); do
  shopt -s nullglob
  found=("$board"/results/*-{lm,probe,minimal-pairs}.json "$board"/results/*-{lm,probe,minimal-pairs}-*-k*.json)
  shopt -u nullglob
  versus_results=()
  for result in "${found[@]}"; do  # a row's sized piece, once made, takes the place of its earlier piece
    [ -f "${result%.json}-sized.json" ] || versus_results+=("$result")
  done
  [ "${#versus_results[@]}" -gt 0 ] || continue
  for result in "${versus_results[@]}"; do rederived "$result"; done
  where=()
  [ "$board" = leaderboards/versus ] && where=(--note "Where the missing draws are made: leaderboards/make.sh's \
sized pieces (VERSUS_SIZED; results/MODEL-METRIC-REL-kK-sized.json, which take their row's place on this board once \
made), the decoders' (SmolLM2-135M-Instruct, gemma-3-270m: k = 4, 279 draws, band-matched where the layer-matched \
space holds fewer sets) on a GPU by leaderboards/gpu.sh, since two CPU cores would take the hours the notes above \
estimate; all-MiniLM-L6-v2's testable rows have their draws from the CPU grid.")
  for format in md:md csv:csv json:json latex:tex html:html; do
    probing leaderboard "${versus_results[@]}" --format "${format%%:*}" "${where[@]}" --output "$board/versus.${format#*:}"
  done
  mkdir -p "$board/plots"
  for result in "${versus_results[@]}"; do
    probing plot "$result" --output "$board/plots/$(basename "$result" .json).png"
  done
done
# The importance maps (docs/importance.md): each model's every-head ablations (importance/results/MODEL-METRIC.json,
# made above) set against its DEV accuracies, the versus board's DEV result (versus/results/MODEL-dev.json): per
# model and metric the map, rho and the chosen heads' ranks (importance/maps/MODEL-METRIC.json) and its figure
# (importance/plots/MODEL-METRIC.png), then one board of them all (importance/importance.*). No model runs here.
map_of() {  # map_of RESULT DEV MAP FIGURE: probing importance's MAP (and FIGURE) of RESULT against DEV, unless MAP
  # is up to date: its recorded sources are these two files as they are now. A map records when and by which commit
  # it was made, so redrawing an unchanged one would rewrite every map on every run of this script (and no board
  # would regenerate byte for byte). FORCE=1 redraws them all (a change of `probing importance` itself).
  local result="$1" dev="$2" map="$3" figure="$4"
  if [ -z "${FORCE:-}" ] && [ -f "$map" ] && [ -f "$figure" ] && "$python" -c "import hashlib, json, sys
sources = json.load(open(sys.argv[1]))['sources']
wanted = {'ablation': sys.argv[2], 'dev': sys.argv[3]}
same = all(sources[key]['path'] == path and sources[key]['sha256'] == hashlib.sha256(open(path, 'rb').read()).hexdigest()
           for key, path in wanted.items())
sys.exit(0 if same else 1)" "$map" "$result" "$dev"; then
    return 0
  fi
  probing importance "$result" --select-on "$dev" --output "$map" --figure "$figure" > /dev/null
}
shopt -s nullglob; importance_results=("$importance"/results/*-{lm,probe,minimal-pairs}.json); shopt -u nullglob
importance_maps=()
for result in "${importance_results[@]}"; do
  stem="$(basename "$result" .json)"
  case "$stem" in *-minimal-pairs) name="${stem%-minimal-pairs}" ;; *) name="${stem%-*}" ;; esac
  dev="$versus/results/$name-dev.json"
  if [ ! -f "$dev" ]; then echo "$dev is not there: the map of $result is left out" >&2; continue; fi
  mkdir -p "$importance/maps" "$importance/plots"
  map_of "$result" "$dev" "$importance/maps/$stem.json" "$importance/plots/$stem.png"
  importance_maps+=("$importance/maps/$stem.json")
done
if [ "${#importance_maps[@]}" -gt 0 ]; then
  for format in md:md csv:csv json:json latex:tex html:html; do
    probing leaderboard "${importance_maps[@]}" --format "${format%%:*}" --output "$importance/importance.${format#*:}"
  done
fi
# Agreement in every language: the intact accuracies of every language's pair sets side by side (curated and made
# from a treebank: do they agree?), then, where their runs are done, the chosen heads against random sets (one board
# of languages x k) and every head alone on each set (maps/, plots/ and one board, as the importance maps above).
agreement_intact=(); agreement_versus=(); agreement_maps=()
for row in "${agreement_grid[@]}"; do
  IFS== read -r language dev_treebank sets <<< "$row"
  IFS=, read -r -a pair_sets <<< "$sets"
  for set in "${pair_sets[@]}"; do
    stem="$agreement_model-${set//:/-}"
    [ -f "$agreement/results/$stem.json" ] && agreement_intact+=("$agreement/results/$stem.json")
    for k in "${agreement_k[@]}"; do
      [ -f "$agreement/results/$stem-nsubj-k$k.json" ] && agreement_versus+=("$agreement/results/$stem-nsubj-k$k.json")
    done
    dev="$agreement/results/$agreement_model-$language-dev.json"
    if [ -f "$agreement/results/$stem-each-head.json" ] && [ -f "$dev" ]; then
      mkdir -p "$agreement/maps" "$agreement/plots"
      map_of "$agreement/results/$stem-each-head.json" "$dev" "$agreement/maps/$stem.json" "$agreement/plots/$stem.png"
      agreement_maps+=("$agreement/maps/$stem.json")
    fi
  done
done
agreement_board() {  # agreement_board NAME RESULT...: agreement/NAME.{md,csv,json} of those results, if any
  local name="$1"; shift
  [ "$#" -gt 0 ] || return 0
  local format; for format in md:md csv:csv json:json; do
    probing leaderboard "$@" --format "${format%%:*}" --output "$agreement/$name.${format#*:}"
  done
}
agreement_board agreement "${agreement_intact[@]}"
agreement_board versus "${agreement_versus[@]}"
agreement_board importance "${agreement_maps[@]}"
# Across languages: are the heads that matter for agreement the same heads in every language? Every two maps' per-head
# harm on BLiMP overall (the sets' mean accuracy) set side by side (probing importance --across: rho, p within
# layers, Holm over the pairs, the heads most harmful in several sets), once two or more maps are made.
if [ "${#agreement_maps[@]}" -ge 2 ]; then
  probing importance --across "${agreement_maps[@]}" --output "$agreement/across.md" --figure "$agreement/plots/across.png"
  probing importance --across "${agreement_maps[@]}" --output "$agreement/across.json"
fi
# BLiMP's board: the intact decoders beside BLiMP's published figures (not a leaderboard.* file: the probe's
# reference rows, which every leaderboard.* carries, have no place on it).
shopt -s nullglob; blimp_results=(leaderboards/blimp/results/*.json); shopt -u nullglob
if [ "${#blimp_results[@]}" -gt 0 ]; then
  for format in md:md csv:csv json:json; do
    probing leaderboard "${blimp_results[@]}" --format "${format%%:*}" --output "leaderboards/blimp/blimp.${format#*:}"
  done
fi
echo "leaderboards regenerated: $(ls leaderboards/*/leaderboard.md | tr '\n' ' ')" >&2
report_pieces
