#!/usr/bin/env bash
# basepress against Hugo, side by side on the same generated corpus.
#
#   bench/compare.sh [--runs N] [--preset large|small|N] [--seed S]
#   bench/compare.sh --smoke     # CI: small corpus, basepress only, once
#
# It generates the corpus once (examples/gen_corpus.rs, basepress and Hugo
# layouts of the same pages), builds basepress in release, then, after one
# warm-up build of each, alternates basepress and Hugo (A B A B …) for N
# runs and prints for each tool the median wall time, pages per second and
# peak RSS, and the basepress/Hugo ratio of every pair with its median.
# It also times the I/O floor of the same build (examples/io_floor.rs:
# read every source, write the same files at the same sizes), basepress
# per page at 1,000, 5,000 and 10,000 pages, and `basepress check` on the
# repository's own content.
#
# Every build writes to a fresh folder, outside the timed region the
# previous output is removed and `sync` flushes it, so one run's
# write-back does not slow the next. Every command has a time limit, and
# the temporary folder is removed on exit.
#
# Everything happens below $TMPDIR (default /tmp), so the disk is the one
# a site is normally built on. `TMPDIR=/dev/shm bench/compare.sh` runs it
# all in memory, where the I/O floor is the cost of copying bytes and the
# ratio to it shows the CPU work alone.
set -euo pipefail

runs=5
preset=large
seed=1
smoke=false
check_runs=30
limit=1200 # seconds, for any one build
while (($#)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --preset) preset=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --smoke) smoke=true; shift ;;
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/basepress-bench.XXXXXX")
cleanup() { wipe "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }
# Removes a folder tree many entries at a time: on a disk mounted with
# online discard, `rm -rf` of one build's output takes over 30 s.
wipe() {
  [ -e "$1" ] || return 0
  find "$1" -mindepth 2 -maxdepth 2 -print0 | xargs -0 -r -P 16 -n 8 rm -rf || true
  rm -rf "$1"
}
die() { log "compare.sh: $*"; exit 1; }

# The smoke only proves the pipeline runs: a debug build (which the tests
# that follow reuse) rather than a release one, which costs CI minutes.
profile=release dir=release
if $smoke; then profile=dev dir=debug; fi
log "== building basepress and the bench helpers ($profile)"
(cd "$repo" && cargo build --profile "$profile" --locked --quiet --bin basepress \
  --example gen_corpus --example io_floor) || die "cargo build failed"
# Copies, so that a rebuild during the benchmark cannot change them.
mkdir "$work/bin"
cp "$repo/target/$dir/basepress" "$repo/target/$dir/examples/gen_corpus" \
  "$repo/target/$dir/examples/io_floor" "$work/bin/"
bp="$work/bin/basepress"
gen="$work/bin/gen_corpus"
floor="$work/bin/io_floor"

# --- smoke: for CI, no timing, no Hugo -------------------------------------
if $smoke; then
  log "== smoke: small corpus, one basepress build"
  "$gen" --preset small --seed "$seed" --out "$work/corpus" 2>&1 >/dev/null | sed 's/^/   /' >&2
  timeout "$limit" "$bp" build --root "$work/corpus" --out "$work/site" >/dev/null 2>"$work/log" ||
    { cat "$work/log" >&2; die "basepress failed on the small corpus"; }
  pages=$(find "$work/site" -name index.html -path '*/*/*' | wc -l)
  [ "$pages" -ge 1000 ] || die "expected 1,000 pages, found $pages"
  floor_s=$("$floor" --src "$work/corpus" --like "$work/site" --out "$work/floor" 2>/dev/null)
  [ -n "$floor_s" ] || die "io_floor printed nothing"
  log "   $(tail -1 "$work/log")"
  echo "bench smoke: ok ($pages pages built, I/O floor helper ran)"
  exit 0
fi

command -v hugo >/dev/null || die "hugo is not installed (apt-get install -y hugo)"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install -y time)"

# --- corpus ------------------------------------------------------------------
case "$preset" in
  small) pages=1000 ;;
  large) pages=10000 ;;
  *) pages=$preset ;;
esac
log "== generating the corpus: $pages pages, seed $seed (basepress and Hugo)"
"$gen" --preset "$preset" --seed "$seed" --out "$work/bp" --hugo "$work/hugo" 2>&1 >/dev/null | sed 's/^/   /' >&2

# One timed run: `measure NAME CMD…` appends "wall_s rss_kib" to $work/t-NAME.
measure() {
  local name=$1
  shift
  sync
  if ! timeout "$limit" /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/out.log" 2>&1; then
    tail -20 "$work/out.log" >&2
    die "$name failed: $*"
  fi
  tail -1 "$work/time" >>"$work/t-$name"
}
run_bp() { wipe "$work/out-bp"; measure "$1" "$bp" build --root "$2" --out "$work/out-bp"; }
run_hugo() { wipe "$work/out-hugo"; measure "$1" hugo --quiet --source "$work/hugo" --destination "$work/out-hugo"; }
run_floor() { wipe "$work/out-floor"; sync; "$floor" --src "$work/bp" --like "$work/like" --out "$work/out-floor" 2>/dev/null >>"$work/t-floor"; }

median() { sort -g | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
col() { awk -v c="$1" '{print $c}' "$work/t-$2"; }

# --- side by side ------------------------------------------------------------
log "== warm-up: one build of each"
run_bp warm "$work/bp"
run_hugo warm-hugo
mv "$work/out-bp" "$work/like" # the floor writes what basepress wrote
for i in $(seq "$runs"); do
  log "== run $i/$runs: basepress, Hugo, I/O floor"
  run_bp basepress "$work/bp"
  run_hugo hugo
  run_floor
done
du -sb "$work/like" | cut -f1 >"$work/bytes-$pages"
wipe "$work/out-bp"
sync
"$bp" build --root "$work/bp" --out "$work/out-bp" --timings 2>&1 | grep '^timings:' >"$work/stages" || true
for d in out-bp out-hugo out-floor like; do wipe "$work/$d"; done

# --- linearity ---------------------------------------------------------------
lin_sizes=(1000 5000)
for n in "${lin_sizes[@]}"; do
  "$gen" --preset "$n" --seed "$seed" --out "$work/lin-$n" 2>/dev/null
done
log "== linearity: basepress at ${lin_sizes[*]} pages, $runs rounds"
for i in $(seq "$runs"); do
  for n in "${lin_sizes[@]}"; do
    run_bp "lin-$n" "$work/lin-$n"
    [ -f "$work/bytes-$n" ] || du -sb "$work/out-bp" | cut -f1 >"$work/bytes-$n"
  done
done
wipe "$work/out-bp"

# --- basepress check on the repository ----------------------------------------
log "== basepress check on the repository, $check_runs runs"
check_code=0
"$bp" check --root "$repo" >/dev/null 2>&1 || check_code=$?
[ "$check_code" -le 1 ] || die "basepress check could not read the repository (exit $check_code)"
for i in $(seq "$check_runs"); do
  t0=$EPOCHREALTIME
  "$bp" check --root "$repo" >/dev/null 2>&1 || true
  t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f\n", (b - a) * 1000}' >>"$work/t-check"
done

# --- report ------------------------------------------------------------------
bp_wall=$(col 1 basepress | median)
hugo_wall=$(col 1 hugo | median)
floor_wall=$(col 1 floor | median)
bp_rss=$(col 2 basepress | sort -n | tail -1)
hugo_rss=$(col 2 hugo | sort -n | tail -1)
paste -d' ' <(col 1 basepress) <(col 1 hugo) | awk '{printf "%.3f\n", $1 / $2}' >"$work/ratios"
ratio_median=$(median <"$work/ratios")
spread() { sort -g | awk '{v[NR]=$1} END {printf "%s-%s", v[1], v[NR]}'; }

echo
echo "basepress vs Hugo $(hugo version | awk '{print $2}' | cut -d+ -f1), $pages pages, seed $seed, $runs alternating runs after a warm-up, $(nproc) cores"
echo
printf '| %-22s | %12s | %16s | %10s | %14s |\n' "tool" "median wall" "wall range" "pages/s" "peak RSS"
printf '| %-22s | %12s | %16s | %10s | %14s |\n' "---" "---:" "---:" "---:" "---:"
row() { # name wall range rss_kib
  awk -v n="$1" -v w="$2" -v r="$3" -v m="$4" -v p="$pages" 'BEGIN {
    printf "| %-22s | %10.2f s | %14s s | %10.0f | %10.0f MiB |\n", n, w, r, p / w, m / 1024 }'
}
row basepress "$bp_wall" "$(col 1 basepress | spread)" "$bp_rss"
row hugo "$hugo_wall" "$(col 1 hugo | spread)" "$hugo_rss"
awk -v w="$floor_wall" -v r="$(col 1 floor | spread)" -v p="$pages" 'BEGIN {
  printf "| %-22s | %10.2f s | %14s s | %10.0f | %14s |\n", "I/O floor (read+write)", w, r, p / w, "" }'
echo
echo "basepress / Hugo per pair: $(paste -sd' ' "$work/ratios"); median $ratio_median"
awk -v b="$bp_wall" -v f="$floor_wall" 'BEGIN {printf "basepress / I/O floor: %.1f x\n", b / f}'
echo "basepress stages (one more build): $(sed 's/^timings: //' "$work/stages")"
echo
echo "| pages | basepress median wall | per page | output per page |"
echo "| ---: | ---: | ---: | ---: |"
for n in $(printf '%s\n' "${lin_sizes[@]}" "$pages" | sort -nu); do
  name=lin-$n
  [ "$n" = "$pages" ] && name=basepress
  [ -f "$work/t-$name" ] || continue
  w=$(col 1 "$name" | median)
  awk -v n="$n" -v w="$w" -v b="$(cat "$work/bytes-$n")" 'BEGIN {
    printf "| %d | %.2f s | %.2f ms | %.0f KiB |\n", n, w, w * 1000 / n, b / n / 1024 }'
  awk -v w="$w" -v n="$n" 'BEGIN {print w * 1000 / n}' >>"$work/per-page"
done
awk '{v[NR]=$1; s+=$1} END {m=s/NR; lo=v[1]; hi=v[1]; for (i in v) {if (v[i]<lo) lo=v[i]; if (v[i]>hi) hi=v[i]}
  printf "per page: %.0f%% to %+.0f%% of their mean\n", (lo/m-1)*100, (hi/m-1)*100}' "$work/per-page"
echo
sort -g "$work/t-check" | awk -v code="$check_code" '{v[NR]=$1} END {
  printf "basepress check on the repository: median %.1f ms over %d runs (%.1f-%.1f ms), exit code %d\n",
  (NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2), NR, v[1], v[NR], code }'
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
