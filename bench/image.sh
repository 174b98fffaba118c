#!/usr/bin/env bash
# The image benchmark: `basepress image inspect` on a synthetic 1 GiB image
# (about 50,000 files in 10 gzip layers) against the floor of reading it,
# `gzip -dc | sha256sum` on the same layer blobs.
#
#   bench/image.sh [--runs N] [--size-mib M] [--files F] [--layers L]
#
# The image is generated once (examples/gen_image.rs) below $TMPDIR. Each
# run is timed with /usr/bin/time (wall, user+system CPU, peak RSS); the
# two commands alternate, after one warm-up of each, and the medians are
# printed with the ratio of basepress to the floor. Inspection runs with
# --no-cache: every layer is read, hashed, decompressed and walked. Then a
# second inspection through a filled cache is timed the same way.
set -euo pipefail

runs=5
size=1024
files=50000
layers=10
while (($#)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --size-mib) size=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."

cargo build --release --quiet --bin basepress --example gen_image
bin=target/release/basepress
work=$(mktemp -d "${TMPDIR:-/tmp}/basepress-image-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
img="$work/image"
target/release/examples/gen_image --out "$img" --size-mib "$size" --files "$files" --layers "$layers"

# The layer blobs, from the manifest the tag names.
manifest=$(python3 -c 'import json,sys; i=json.load(open(sys.argv[1]+"/index.json")); print(i["manifests"][0]["digest"][7:])' "$img")
mapfile -t blobs < <(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/blobs/sha256/"+sys.argv[2])); [print(sys.argv[1]+"/blobs/sha256/"+l["digest"][7:]) for l in m["layers"]]' "$img" "$manifest")
printf '%s\n' "${blobs[@]}" > "$work/blobs"
floor="while read -r b; do gzip -dc \"\$b\" | sha256sum >/dev/null; done < $work/blobs"
inspect="$bin image inspect oci:$img:bench --no-cache --format json >/dev/null"
cached="$bin image inspect oci:$img:bench --cache $work/cache --format json >/dev/null"

# Prints "wall cpu rss_kib" of one run of a shell command.
measure() {
  /usr/bin/time -f '%e %U %S %M' -o "$work/t" timeout 600 bash -c "$1"
  read -r wall user sys rss < "$work/t"
  echo "$wall $(echo "$user + $sys" | bc) $rss"
}

measure "$floor" >/dev/null
measure "$inspect" >/dev/null
: > "$work/floor"
: > "$work/inspect"
for ((i = 0; i < runs; i++)); do
  measure "$floor" >> "$work/floor"
  measure "$inspect" >> "$work/inspect"
done

measure "$cached" >/dev/null
: > "$work/cached"
for ((i = 0; i < runs; i++)); do
  measure "$cached" >> "$work/cached"
done

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
col() { awk -v c="$2" '{print $c}' "$1" | median; }
fw=$(col "$work/floor" 1); fc=$(col "$work/floor" 2); fr=$(col "$work/floor" 3)
iw=$(col "$work/inspect" 1); ic=$(col "$work/inspect" 2); ir=$(col "$work/inspect" 3)
cw=$(col "$work/cached" 1); cc=$(col "$work/cached" 2); cr=$(col "$work/cached" 3)
echo
echo "image: $(du -sm "$img" | cut -f1) MiB on disk, ${#blobs[@]} layers; medians of $runs runs"
printf '%-28s %8s %8s %10s\n' "" "wall s" "cpu s" "peak RSS"
printf '%-28s %8s %8s %7s MiB\n' "gzip -dc | sha256sum" "$fw" "$fc" "$((fr / 1024))"
printf '%-28s %8s %8s %7s MiB\n' "basepress image inspect" "$iw" "$ic" "$((ir / 1024))"
printf '%-28s %8s %8s %7s MiB\n' "  the same, from the cache" "$cw" "$cc" "$((cr / 1024))"
echo "ratio (basepress / floor): wall $(echo "scale=2; $iw / $fw" | bc), cpu $(echo "scale=2; $ic / $fc" | bc)"
