#!/usr/bin/env bash
# Records services/scoring/internal/scoring/testdata/dichotomous.ndjson.gz: the answers of the
# scoring service as it was before partial credit (REF, commit dc8bcb8 by default) to a corpus of
# requests of dichotomous items on every scoring path, which TestDichotomousDifferential holds
# this build to byte for byte. It builds REF's scoring service in a temporary worktree, runs it in
# dev mode (embedded demonstration content) on free loopback ports, and runs the test in record
# mode against it (the test generates the corpus, seeded, and writes each answer, JSON and gRPC).
# Usage: scripts/record-dichotomous.sh [REF]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/procs.sh
ref=${1:-dc8bcb8}

work=$(mktemp -d)
pid=
cleanup() {
	trap - EXIT
	[[ -n $pid ]] && stop "$pid"
	git worktree remove --force "$work/src" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

git worktree add --detach "$work/src" "$ref" >/dev/null
(cd "$work/src" && go build -o "$work/scoring" github.com/yardstick-dev/yardstick/services/scoring/cmd/scoring)

YARDSTICK_DEV=true YARDSTICK_LOG_FORMAT=json YARDSTICK_HTTP_ADDR=127.0.0.1:0 YARDSTICK_GRPC_ADDR=127.0.0.1:0 \
	"$work/scoring" >/dev/null 2>"$work/scoring.log" &
pid=$!
line=
for _ in $(seq 1 200); do
	alive "$pid" || break
	line=$(grep -m1 '"msg":"serving"' "$work/scoring.log" || true)
	[[ -n $line ]] && break
	sleep 0.05
done
[[ -n $line ]] || { echo "record-dichotomous: $ref's scoring service did not start:" >&2; cat "$work/scoring.log" >&2; exit 1; }
http=$(sed -nE 's/.*"http":"([^"]+)".*/\1/p' <<<"$line")
grpc=$(sed -nE 's/.*"grpc":"([^"]+)".*/\1/p' <<<"$line")

if ! go test -count=1 -run '^TestDichotomousDifferential$' -v ./services/scoring/internal/scoring/ \
	-args -record-http "http://$http" -record-grpc "$grpc" >"$work/test.log" 2>&1; then
	cat "$work/test.log" >&2
	exit 1
fi
grep -E 'recorded' "$work/test.log"
ls -l services/scoring/internal/scoring/testdata/dichotomous.ndjson.gz
