#!/usr/bin/env bash
# Regenerate everything under leaderboards/: result files, tables and plots.
#
#   bash leaderboards/make.sh                   # score 4 models x 2 treebanks, then tables and plots
#   SKIP_SCORING=1 bash leaderboards/make.sh    # only tables and plots, from the committed results
#
# Each run selects heads and offsets on the dev split and reports them on the
# test split (probing score --treebank NAME), with a Poisson bootstrap of
# $REPLICATES replicates (500 keeps every result file under ~3 MB; with 1000 the
# interval ends moved by at most 0.2 points on all-MiniLM-L6-v2, en_ewt). Checkpoints come from
# ../shared/models/get-model and treebanks from ../shared/treebanks, relative to
# the repository root, so no network is needed once get-model has run.
# On 2 shared CPU cores the scoring took 47 minutes, most of it all-mpnet-base-v2.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
shared="${PROBING_SHARED:-../shared}"
export PROBING_TREEBANKS="${PROBING_TREEBANKS:-$shared/treebanks}"
replicates="${REPLICATES:-500}"
python="${PYTHON:-python3}"
probing() { "$python" -m probing "$@"; }

treebanks=(en_ewt en_gum)
models=(minilm:all-MiniLM-L6-v2 mpnet:all-mpnet-base-v2)
relations=(dobj det pobj poss all)
reference=leaderboards/reference/clark2019-bert-base-wsj.json

if [ -z "${SKIP_SCORING:-}" ]; then
  for model in "${models[@]}"; do
    path="$("$shared/models/get-model" "${model%%:*}")"
    name="${model#*:}"
    for treebank in "${treebanks[@]}"; do
      mkdir -p "leaderboards/$treebank/results"
      for init in pretrained random-init; do
        flag=(); suffix=""
        if [ "$init" = random-init ]; then flag=(--random-init); suffix="-random-init"; fi
        output="leaderboards/$treebank/results/$name$suffix.json"
        echo "scoring $name ($init) on $treebank -> $output" >&2
        probing score --model "$path" --treebank "$treebank" --bootstrap "$replicates" --seed 0 \
          "${flag[@]}" --quiet --output "$output" > /dev/null
      done
    done
  done
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
  for result in "${results[@]}"; do
    stem="$(basename "$result" .json)"
    probing plot "$result" --output "$dir/plots/$stem.png"
    case "$stem" in
      *-random-init) ;;  # untrained heads: the overview says all there is to say
      *) for relation in "${relations[@]}"; do
           probing plot "$result" --relation "$relation" --output "$dir/plots/$stem-$relation.png"
         done ;;
    esac
  done
done
echo "leaderboards regenerated: $(ls leaderboards/*/leaderboard.md | tr '\n' ' ')" >&2
