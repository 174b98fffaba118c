#!/usr/bin/env bash
# Issue 14's figure: a build after editing one page of next, against a
# clean build, on a site of 50 docs versions (10,000 pages: 4 languages ×
# 50 pages × 50 versions), and whether both give the same files.
#
#   TMPDIR=/dev/shm bench/versions.sh [--runs N] [--seed S] [--basepress BIN]
#       [--examples DIR]
#
# Each of N rounds (default 7): a clean build into an empty folder, then
# twice an edit of one page of next and a build into the same folder, each
# under /usr/bin/time. Both edit builds reuse the 49 versions that did not
# change: the first links their files from the output into a new folder
# (there is no spare yet), the second recycles the spare that the clean
# build's site became, as every later build does. Prints the medians of
# wall time and CPU time (user + sys), the ratios to the clean build, peak
# RSS, and checks that the last edit build's output is file for file a
# clean build's (`diff -r`, the build record aside). The first round warms
# the caches and is not counted.
set -euo pipefail
runs=7 seed=1 bp_given="" examples_given=""
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --basepress) bp_given=$2; shift 2 ;;
    --examples) examples_given=$2; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "versions.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/basepress-versions.XXXXXX")
trap 'rm -rf "$work"' EXIT
log() { printf '%s\n' "$*" >&2; }
if [ -z "$bp_given" ] || [ -z "$examples_given" ]; then
  log "== building basepress and gen_corpus (release)"
  (cd "$repo" && cargo build --release --locked --quiet --bin basepress --example gen_corpus)
fi
bp=${bp_given:-$repo/target/release/basepress}
gen=${examples_given:-$repo/target/release/examples}/gen_corpus
log "== generating 50 versions × 4 languages × 50 pages (seed $seed)"
"$gen" --preset large --docs-versions 50 --seed "$seed" --out "$work/site-src" >/dev/null 2>&1
page=$(cd "$work/site-src" && find content/en -name '*.md' | sort | sed -n 3p)
[ -n "$page" ] || { log "versions.sh: no page in content/en"; exit 1; }

# `timed NAME`: runs a build into $work/out/site, appending
# "wall cpu rss" to $work/NAME.
timed() {
  sync
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$bp" build --root "$work/site-src" \
    --out "$work/out/site" >"$work/log" 2>&1 || { tail -20 "$work/log" >&2; exit 1; }
  awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$work/time" >>"$work/$1"
}
for r in $(seq 0 "$runs"); do
  rm -rf "$work/out" && mkdir "$work/out"
  name=clean first=first edit=edit
  [ "$r" -eq 0 ] && name=warm first=warm-first edit=warm-edit
  timed "$name"
  printf '\nEdited in round %s.\n' "$r" >>"$work/site-src/$page"
  timed "$first"
  printf '\nEdited again in round %s.\n' "$r" >>"$work/site-src/$page"
  timed "$edit"
  log "   round $r/$runs: clean $(tail -1 "$work/$name" | cut -d' ' -f1) s, edits $(tail -1 "$work/$first" | cut -d' ' -f1) s and $(tail -1 "$work/$edit" | cut -d' ' -f1) s"
done
# The last edit build against a clean build of the same sources.
"$bp" build --root "$work/site-src" --out "$work/clean-site" >"$work/log" 2>&1 || { tail -20 "$work/log" >&2; exit 1; }
same=yes
diff -r -x .basepress-cache.json "$work/out/site" "$work/clean-site" >/dev/null || same=NO

median() { sort -g | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
col() { cut -d' ' -f"$2" "$work/$1" | median; }
cw=$(col clean 1) cc=$(col clean 2)
row() { # LABEL NAME
  local w c
  w=$(col "$2" 1) c=$(col "$2" 2)
  awk -v l="$1" -v w="$w" -v c="$c" -v m="$(col "$2" 3)" -v cw="$cw" -v cc="$cc" \
    'BEGIN {printf "| %s | %.2f s | %.2f s | %.1f %% | %.1f %% | %d MiB |\n", l, w, c, 100 * w / cw, 100 * c / cc, m / 1024}'
}
printf '| 50 versions, 10,000 pages (medians of %s rounds) | wall | CPU | wall / clean | CPU / clean | peak RSS |\n' "$runs"
printf '|---|---:|---:|---:|---:|---:|\n'
row "clean build" clean
row "first build after an edit of next (no spare yet)" first
row "build after an edit of next (target ≤ 10 %)" edit
echo "| edit build's files equal a clean build's | $same | | | | |"
[ "$same" = yes ]
