#!/usr/bin/env bash
# Regenerate every figure under docs/figures/ that the docs show (except training-tiny-mlm.png, which
# examples/train_tiny_mlm.py --figure makes, see docs/training.md) and the numbers the docs quote:
#
#   bash docs/make_figures.sh                   # every part, one after the other
#   ONLY=analyses bash docs/make_figures.sh     # one part: analyses, dark-secrets, decoder, causal, explore or readings
#   LIMIT=300 ONLY=explore bash docs/make_figures.sh   # explore on the first 300 sentences only (a quick look)
#
# Parts (all on UD English-EWT dev, all-MiniLM-L6-v2 and all-mpnet-base-v2, on CPU):
#   analyses      docs/analyses.md: `probing report --pairs --limit 500` of each model (figures minilm-*.png and
#                 mpnet-*.png) and `probing score` on the same sentences, for the probe's best heads;
#                 numbers in build/docs/analyses-NAME.md
#   dark-secrets  docs/dark-secrets.md: `probing patterns --pairs --limit 200` of each model, `probing compare`
#                 of MiniLM with its random init and with a copy whose layer-4 queries got noise, and the
#                 `probing ablate` runs (probe metric); numbers in build/docs/dark-secrets.md
#   decoder       docs/dark-secrets.md, "Heads that hurt a decoder": `probing ablate --metric lm` of
#                 SmolLM2-135M-Instruct, --each-layer on 200 sentences and --each-head on 64, `probing gradients`
#                 on 100, and its probe on all of dev (are the heads whose removal matters the syntactic ones?);
#                 numbers in build/docs/decoder.md
#   causal        docs/dark-secrets.md, "Decoders: the direction they can read": `probing score` of
#                 SmolLM2-135M-Instruct chosen on the first 100 sentences of en_ewt dev, reported on the first 100
#                 of test, nsubj obj amod det all, classic and causal directions; its tables in build/docs/causal.txt
#                 (the BLiMP figures of that section come from ONLY=blimp bash leaderboards/make.sh)
#   explore       docs/explore.md: `probing explore` of each model (the no-op tables it prints are in
#                 build/docs/explore/NAME-noop.txt), a 1280 px screenshot of each page, and the det head's views;
#                 EXPLORE_MODELS="all-MiniLM-L6-v2 all-mpnet-base-v2 SmolLM2-135M-Instruct" adds SmolLM2's table
#   readings      docs/readings.md: `probing surface --pairs --limit 250` of each model (SmolLM2-135M-Instruct too)
#                 under --attention weights, norms and rollout, drawn side by side (readings-NAME.png); the
#                 per-layer tables in build/docs/readings/NAME-READING.txt; 11 CPU-minutes (40 min of wall time
#                 beside other jobs)
#
# Checkpoints come from $PROBING_MODELS/<folder> (all-MiniLM-L6-v2, all-mpnet-base-v2), linked into
# .cache/models/ (ignored by git) and named by that relative path, so no output records a machine's folders;
# treebanks from $PROBING_TREEBANKS or the cache (probing data fetch en_ewt). Everything is written under
# build/docs/ (ignored); only the figures are copied into docs/figures/. The explore screenshots need
# Debian's chromium. Wall time on the project's shared 2-core CPU (load average 5-6 from other jobs), one
# part at a time: analyses 10 min 34 s, dark-secrets 5 min 59 s, explore 6 min 4 s, 22 min 37 s in all;
# decoder 40 min 11 s (load average 2, from its own two threads) (each run appends its own to
# build/docs/timing.txt). A rerun gives the same figures: the explore
# screenshots and views came out byte for byte as committed.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
python="${PYTHON:-python3}"
only="${ONLY:-}"
build=build/docs
figures=docs/figures
probing() { "$python" -m probing "$@"; }
numbers() { "$python" docs/figure_numbers.py "$@"; }
wanted() { [ -z "$only" ] || [ "$only" = "$1" ]; }

link() {  # $PROBING_MODELS/$1 -> .cache/models/$1, so that outputs name the checkpoint by a relative path
  if [ -z "${PROBING_MODELS:-}" ] || [ ! -f "$PROBING_MODELS/$1/config.json" ]; then
    echo "make_figures: \$PROBING_MODELS/$1/config.json is missing; set PROBING_MODELS to the folder of checkpoints" >&2
    exit 1
  fi
  ln -sfn "$PROBING_MODELS/$1" ".cache/models/$1"
}

mkdir -p .cache/models "$build" "$figures"
link all-MiniLM-L6-v2
link all-mpnet-base-v2
minilm=.cache/models/all-MiniLM-L6-v2
mpnet=.cache/models/all-mpnet-base-v2

timed() {  # run a part and note its wall time: $1 = part
  local start=$SECONDS
  "part_${1//-/_}"
  echo "$1: $(( (SECONDS - start) / 60 )) min $(( (SECONDS - start) % 60 )) s" | tee -a "$build/timing.txt" >&2
}

part_analyses() {
  local name short model sentences
  for short in minilm mpnet; do
    model="$minilm"; [ "$short" = mpnet ] && model="$mpnet"
    name="$(basename "$model")"
    echo "report of $name on en_ewt dev, 500 segment pairs" >&2
    probing report --model "$model" --treebank en_ewt:dev --pairs --limit 500 --seed 0 --quiet \
      --output "$build/report-$name" > /dev/null
    # the report leaves the probe out of paired input, so it runs on the same sentences, one at a time
    sentences="$(numbers sentences en_ewt:dev --pairs --limit 500)"
    probing score --model "$model" --treebank en_ewt:dev --limit "$sentences" --bootstrap 0 --quiet \
      --output "$build/probe-$name.json" > /dev/null
    numbers analyses "$build/report-$name" "$build/probe-$name.json" | tee "$build/analyses-$name.md"
    cp "$build/report-$name/surface-surface.png" "$figures/$short-surface.png"
    cp "$build/report-$name/surface-entropy.png" "$figures/$short-entropy.png"
    cp "$build/report-$name/heads-heads.png" "$figures/$short-heads.png"
  done
}

part_dark_secrets() {
  local out="$build/dark-secrets" name short model perturbed="$build/models/all-MiniLM-L6-v2-layer4-query-noise"
  mkdir -p "$out"
  for short in minilm mpnet; do
    model="$minilm"; [ "$short" = mpnet ] && model="$mpnet"
    name="$(basename "$model")"
    echo "patterns of $name, 200 segment pairs" >&2
    probing patterns --model "$model" --treebank en_ewt:dev --pairs --limit 200 --quiet \
      --hand-labels tests/data/pattern_labels.csv --output "$out/patterns-$name.json" > "$out/patterns-$name.txt"
    cp "$out/patterns-$name-patterns.png" "$figures/dark-secrets-patterns-$short.png"
  done
  echo "compare MiniLM with its random init and with a perturbed copy, 200 sentences" >&2
  probing compare --model "$minilm" --second-model "$minilm" --second-random-init --seed 0 \
    --treebank en_ewt:dev --limit 200 --quiet --output "$out/compare-random.json" > /dev/null
  # the copy: Gaussian noise (0.5 x their standard deviation, seed 0) on layer 4's query weights
  "$python" - "$minilm" "$perturbed" <<'EOF'
import sys

import torch
from transformers import AutoModel, AutoTokenizer

source, copy = sys.argv[1:]
model = AutoModel.from_pretrained(source)
query = model.encoder.layer[3].attention.self.query.weight
with torch.no_grad():
    query.add_(0.5 * query.std() * torch.randn(query.shape, generator=torch.Generator().manual_seed(0)))
model.save_pretrained(copy)
AutoTokenizer.from_pretrained(source).save_pretrained(copy)
EOF
  probing compare --model "$minilm" --second-model "$perturbed" --treebank en_ewt:dev --limit 200 --quiet \
    --output "$out/compare-perturbed.json" > /dev/null
  cp "$out/compare-random-compare.png" "$figures/dark-secrets-compare-random.png"
  cp "$out/compare-perturbed-compare.png" "$figures/dark-secrets-compare-perturbed.png"
  echo "ablate MiniLM's heads one at a time (100 sentences) and layer by layer (200 sentences)" >&2
  probing ablate --model "$minilm" --treebank en_ewt:dev --limit 100 --each-head --metric probe \
    --relations det nsubj obj --bootstrap 500 --top 0 --quiet --output "$out/ablate-each-head.json" \
    > "$out/ablate-each-head.txt"
  probing ablate --model "$minilm" --treebank en_ewt:dev --limit 200 --each-layer --metric probe \
    --relations det nsubj --top 0 --quiet --output "$out/ablate-each-layer.json" > "$out/ablate-each-layer.txt"
  numbers dark-secrets "$out" | tee "$build/dark-secrets.md"
}

part_decoder() {  # a causal LM's own loss as the metric of head disabling, and its gradients (SmolLM2)
  local out="$build/decoder" model=.cache/models/SmolLM2-135M-Instruct
  link SmolLM2-135M-Instruct
  mkdir -p "$out"
  echo "ablate SmolLM2's layers (200 sentences) and heads (64 sentences), --metric lm" >&2
  probing ablate --model "$model" --treebank en_ewt:dev --limit 200 --each-layer --metric lm --top 0 --quiet \
    --output "$out/ablate-each-layer.json" > "$out/ablate-each-layer.txt"
  probing ablate --model "$model" --treebank en_ewt:dev --limit 64 --each-head --metric lm --top 0 --quiet \
    --output "$out/ablate-each-head.json" > "$out/ablate-each-head.txt"
  echo "gradients of SmolLM2's loss with respect to its attention (100 sentences)" >&2
  probing gradients --model "$model" --treebank en_ewt:dev --limit 100 --quiet --output "$out/gradients.json" \
    > "$out/gradients.txt"
  probing score --model "$model" --treebank en_ewt:dev --bootstrap 0 --quiet --output "$out/probe.json" > /dev/null
  numbers decoder "$out" | tee "$build/decoder.md"
}

part_causal() {  # a decoder's classic and causal directions, held out, on a stated slice of en_ewt
  link SmolLM2-135M-Instruct
  probing score --model .cache/models/SmolLM2-135M-Instruct --treebank en_ewt --limit 100 \
    --relations nsubj obj amod det all --bootstrap 500 --seed 0 --quiet --output "$build/causal.json" \
    | tee "$build/causal.txt"
}

part_explore() {
  local out="$build/explore" name model profile limit=()
  if [ -n "${LIMIT:-}" ]; then limit=(--limit "$LIMIT"); fi
  mkdir -p "$out"
  for name in ${EXPLORE_MODELS:-all-MiniLM-L6-v2 all-mpnet-base-v2}; do
    model=".cache/models/$name"
    link "$name"
    echo "exploring $name on en_ewt dev" >&2
    # det first: the page opens on the first relation's chosen head
    probing explore --model "$model" --treebank en_ewt:dev "${limit[@]}" --seed 0 --bootstrap 500 \
      --relations det dobj pobj poss all --output "$out/$name.html" --views "$out/$name-views" \
      --save-results "$out/$name" --quiet | tee "$out/$name-noop.txt"
    case "$name" in all-MiniLM-L6-v2|all-mpnet-base-v2) ;; *) continue ;; esac  # the docs show these two pages
    profile="$(mktemp -d)"
    chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
      --disable-sync --no-first-run --user-data-dir="$profile" --hide-scrollbars --window-size=1280,2100 \
      --screenshot="$figures/explore-$name.png" "file://$repo/$out/$name.html" 2>/dev/null
    rm -rf "$profile"
    cp "$(ls "$out/$name-views"/det-*.png | head -n 1)" "$figures/views-$name-det.png"
  done
}

part_readings() {  # each model's surface statistics under the three readings, side by side
  local out="$build/readings" name reading results
  mkdir -p "$out"
  for name in ${READINGS_MODELS:-all-MiniLM-L6-v2 all-mpnet-base-v2 SmolLM2-135M-Instruct}; do
    link "$name"
    results=()
    for reading in weights norms rollout; do
      echo "surface $name, $reading, en_ewt dev (250 segment pairs)" >&2
      probing surface --model ".cache/models/$name" --treebank en_ewt:dev --pairs --limit 250 --seed 0 \
        --attention "$reading" --quiet --output "$out/$name-$reading.json" > "$out/$name-$reading.txt"
      results+=("$out/$name-$reading.json")
    done
    probing plot "${results[@]}" --output "$figures/readings-$name.png"
  done
}

for part in analyses dark-secrets decoder causal explore readings; do
  if wanted "$part"; then timed "$part"; fi
done
echo "figures in $figures, numbers and results in $build" >&2
