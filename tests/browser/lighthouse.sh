#!/usr/bin/env bash
# Lighthouse scores of the repository's site, phone and desktop, on the
# home, installation, attestation and versions pages, against Debian's
# Chromium. Not part of `cargo test` (eight runs take minutes); run it by
# hand after changing the templates, styles or script:
#
#   (cd tests/browser && npm ci) && tests/browser/lighthouse.sh
#
# Prints one line per page and form factor: performance, accessibility,
# best practices, SEO (0-100); exits 1 when any is under 95.
set -euo pipefail
cd "$(dirname "$0")/../.."
lh=tests/browser/node_modules/.bin/lighthouse
[[ -x $lh ]] || { echo "run npm ci in tests/browser first" >&2; exit 2; }
export CHROME_PATH=${CHROME_PATH:-/usr/bin/chromium}
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
cargo run --quiet --release -- build --out "$work/site" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/site" >/dev/null 2>&1 &
server=$!
sleep 1
low=0
printf '%-22s %-8s %5s %5s %5s %5s\n' page form perf a11y bp seo
for page in /es/ /es/installation/ /es/attestation/ /es/versions/; do
  for form in mobile desktop; do
    preset=()
    [[ $form == desktop ]] && preset=(--preset=desktop)
    "$lh" "http://127.0.0.1:$port$page" "${preset[@]}" --quiet --output=json \
      --output-path="$work/report.json" \
      --only-categories=performance,accessibility,best-practices,seo \
      --chrome-flags="--headless=new --no-sandbox --disable-gpu" >/dev/null 2>&1
    read -r perf a11y bp seo < <(python3 - "$work/report.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["categories"]
print(*(round(c[k]["score"] * 100) for k in ("performance", "accessibility", "best-practices", "seo")))
PY
)
    printf '%-22s %-8s %5s %5s %5s %5s\n' "$page" "$form" "$perf" "$a11y" "$bp" "$seo"
    for s in $perf $a11y $bp $seo; do ((s >= 95)) || low=1; done
  done
done
exit $low
