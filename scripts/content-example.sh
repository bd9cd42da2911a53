#!/usr/bin/env bash
# Writes the worked example of docs/content.md ("Your own content"): runs each command of
# scripts/content-example.list exactly as shown, in a scratch directory holding a copy of
# docs/content-example/ (so the commands paste as they are from the repository's root once the
# commands are built), with the operator commands built from this checkout on PATH, and puts the
# commands and what they print between the example markers of the file. Durations in the output
# are written as <time>. `make docs` runs it; `make check-docs` fails when the file is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
doc=docs/content.md
out=${1:-$doc}
begin='<!-- worked example: written by scripts/content-example.sh (make docs) -->'
end='<!-- end of the worked example -->'

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/run/docs"
go build -o "$work/bin/yardstick-calibrate" ./pkg/measure/cmd/yardstick-calibrate
go build -o "$work/bin/yardstick-content" ./pkg/measure/cmd/yardstick-content
cp -r docs/content-example "$work/run/docs/"

# step COMMAND: runs it (status shown when not 0) and writes it with its output.
step() {
	local cmd=$1 status=0
	(cd "$work/run" && PATH="$work/bin:$PATH" eval "$cmd") >"$work/output" 2>&1 || status=$?
	{
		echo '```sh'
		echo "$ $cmd"
		sed -E 's/, [0-9.]+(ns|µs|ms|s)$/, <time>/' "$work/output"
		((status == 0)) || echo "(exit status $status)"
		echo '```'
		echo
	} >>"$work/example.md"
}
# say TEXT: a paragraph between the steps.
say() { printf '%s\n\n' "$1" >>"$work/example.md"; }

: >"$work/example.md"
source scripts/content-example.list

grep -qxF "$begin" "$doc" && grep -qxF "$end" "$doc" || { echo "content-example: $doc lacks the example markers" >&2; exit 1; }
awk -v begin="$begin" -v end="$end" -v example="$work/example.md" '
	$0 == begin { print; print ""; while ((getline line < example) > 0) print line; skip = 1; next }
	$0 == end { skip = 0 }
	!skip { print }
' "$doc" >"$work/doc.md"
mkdir -p "$(dirname "$out")"
mv "$work/doc.md" "$out"
echo "wrote $out"
