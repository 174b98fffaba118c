#!/usr/bin/env bash
# How long after a page is saved `basepress serve` tells open pages to
# reload, on a generated corpus and on a copy of this repository's site.
#
#   bench/reload.sh [--preset large|small|N] [--seed S] [--edits N]
#
# It builds basepress and the helpers in release, generates the corpus
# (examples/gen_corpus.rs, 10,000 pages in 4 languages by default), starts
# `basepress serve` on a free port, waits for its first build, then edits
# one page N times (examples/reload_latency.rs: append a line, wait for
# the `reload` event, half a second apart) and prints the median, minimum
# and maximum milliseconds from the write to the event. The same on a copy
# of the repository's own site. Everything lives in a temporary folder,
# removed on exit, with the servers it started.
set -euo pipefail

preset=large
seed=1
edits=7
while (($#)); do
  case "$1" in
    --preset) preset=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --edits) edits=$2; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "reload.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/basepress-reload.XXXXXX")
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }
die() { log "reload.sh: $*"; exit 1; }

log "== building basepress and the helpers (release)"
(cd "$repo" && cargo build --release --locked --quiet --bin basepress \
  --example gen_corpus --example reload_latency) || die "cargo build failed"
bp="$repo/target/release/basepress"

# `measure ROOT PAGE`: serves ROOT, edits PAGE (below ROOT), prints the line.
measure() {
  local root=$1 page=$2
  "$bp" serve --root "$root" --port 0 >"$work/serve.out" 2>"$work/serve.err" &
  server=$!
  local port=""
  for _ in $(seq 1200); do # up to 10 minutes for the first build
    port=$(sed -n 's|^serving http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$work/serve.out")
    [ -n "$port" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$work/serve.err" >&2; die "basepress serve stopped"; }
    sleep 0.5
  done
  [ -n "$port" ] || die "basepress serve printed no address"
  log "   $(grep -m1 '^built' "$work/serve.err" || true)"
  "$repo/target/release/examples/reload_latency" "$port" "$root/$page" "$edits"
  grep '^built\|^rebuilt' "$work/serve.err" | tail -1 | sed 's/^/   last: /' >&2
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=""
}

log "== generating the corpus ($preset, seed $seed)"
"$repo/target/release/examples/gen_corpus" --preset "$preset" --seed "$seed" --out "$work/bp" 2>&1 >/dev/null | sed 's/^/   /' >&2
page=$(cd "$work/bp" && find content/en -name '*.md' | sort | sed -n '100p')
log "== the corpus: editing $page"
echo "corpus ($preset): $(measure "$work/bp" "$page")"

mkdir "$work/repo"
for item in site.yaml image-releases.yaml content bases templates static; do
  [ -e "$repo/$item" ] && cp -r "$repo/$item" "$work/repo/"
done
log "== this repository's site: editing content/es/health-probes.md"
echo "repository site: $(measure "$work/repo" content/es/health-probes.md)"
