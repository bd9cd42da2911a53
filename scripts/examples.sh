#!/usr/bin/env bash
# Writes docs/examples.md: a curl example and the real response for every endpoint, produced from
# the running services (dev mode, embedded demonstration content), so the docs stay true.
# `make docs` runs it; `make check-docs` (part of `make ci`) fails when the file is stale.
#
# The commands in the file are run exactly as shown (eval), against services on free loopback
# ports (so it runs beside a `make run`), with SCORING and FORECAST pointing at them; a reader's
# SCORING/FORECAST are make run's. The services are built as `make build` builds them, with the
# version from git describe; each apiVersion they answer must be that version, and is written as
# <version> so the file does not change with every commit. Access tokens in responses are
# written as <ACCESS_TOKEN>, page tokens (signed with a key of the process) as <PAGE_TOKEN>.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/procs.sh
out=${1:-docs/examples.md}

work=$(mktemp -d)
pids=()
watchdog_pid=
cleanup() {
	trap - EXIT
	[[ -n $watchdog_pid ]] && kill "$watchdog_pid" 2>/dev/null || true
	stop "${pids[@]}"
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
ldflags="-X github.com/yardstick-dev/yardstick/pkg/serve.Version=$version"
go build -ldflags "$ldflags" -o "$work/scoring" github.com/yardstick-dev/yardstick/services/scoring/cmd/scoring
go build -ldflags "$ldflags" -o "$work/forecast" github.com/yardstick-dev/yardstick/services/forecast/cmd/forecast
go build -o "$work/prettyjson" ./scripts/prettyjson
go build -o "$work/planchart" ./scripts/planchart
go build -o "$work/growthchart" ./scripts/growthchart

# Both services on free loopback ports, started here (not inside $(…), whose subshell would keep
# the pids from cleanup); the watchdog stops them should this script be killed.
for name in scoring forecast; do
	YARDSTICK_DEV=true YARDSTICK_LOG_FORMAT=json YARDSTICK_HTTP_ADDR=127.0.0.1:0 YARDSTICK_GRPC_ADDR=127.0.0.1:0 \
		"$work/$name" >/dev/null 2>"$work/$name.log" &
	pids+=($!)
done
watchdog "$PPID" "${pids[@]}"

# address NAME PID: the HTTP address from the service's "serving" log line.
address() {
	local addr
	for _ in $(seq 1 200); do
		alive "$2" || break
		addr=$(sed -nE 's/.*"msg":"serving".*"http":"([^"]+)".*/\1/p' "$work/$1.log" | head -1)
		[[ -n $addr ]] && { echo "$addr"; return; }
		sleep 0.05
	done
	echo "examples: $1 did not start:" >&2
	cat "$work/$1.log" >&2
	return 1
}
SCORING=http://$(address scoring "${pids[0]}")
FORECAST=http://$(address forecast "${pids[1]}")

# The file's first block, run here as written: the readers' tokens are these commands' tokens.
setup=$(
	cat <<'SH'
SCORING=http://localhost:8080    # make run: scoring service
FORECAST=http://localhost:8081   # make run: forecast service
SCORING_TOKEN=$(curl -s -X POST "$SCORING/authToken" -H 'Content-Type: application/json' \
  -d '{"clientId":"demo","clientSecret":"demo-secret"}' | sed -E 's/.*"accessToken":"([^"]+)".*/\1/')
FORECAST_TOKEN=$(curl -s -X POST "$FORECAST/authToken" -H 'Content-Type: application/json' \
  -d '{"clientId":"demo","clientSecret":"demo-secret"}' | sed -E 's/.*"accessToken":"([^"]+)".*/\1/')
SH
)
eval "$(sed -E '/^(SCORING|FORECAST)=http/d' <<<"$setup")"
for t in "$SCORING_TOKEN" "$FORECAST_TOKEN"; do
	[[ $t == ey* ]] || { echo "examples: the token step did not give a token: $t" >&2; exit 1; }
done

# example TITLE SERVICE PATH BODY [CONTENT-TYPE] [AUTH: yes|no]
example() {
	local title=$1 service=$2 path=$3 body=$4 ctype=${5:-application/json} auth=${6:-yes}
	last_body=$body
	local base=SCORING token=SCORING_TOKEN
	[[ $service == forecast ]] && base=FORECAST token=FORECAST_TOKEN
	local cmd="curl -s -X POST \"\$$base$path\""
	[[ $auth == yes ]] && cmd+=" \\"$'\n'"  -H \"Authorization: Bearer \$$token\""
	cmd+=" \\"$'\n'"  -H 'Content-Type: $ctype' \\"$'\n'"  -d '$body'"
	local status
	status=$(eval "$cmd -o \"\$work/body\" -w '%{http_code}'")
	local answered
	answered=$(sed -nE 's/.*"apiVersion": ?"([^"]*)".*/\1/p' "$work/body" | sort -u)
	if [[ -n $answered && $answered != "$version" ]]; then
		echo "examples: $title answered apiVersion \"$answered\"; want the build's \"$version\"" >&2
		exit 1
	fi
	{
		echo "### $title"
		echo
		echo '```sh'
		echo "$cmd"
		echo '```'
		echo
		echo "Response \`$status\`:"
		echo
		echo '```json'
		if [[ $ctype == application/x-ndjson ]]; then
			# One answer a line, as the service writes them (compact JSON lines).
			sed -E -e 's/"apiVersion":"[^"]*"/"apiVersion":"<version>"/g' "$work/body"
		else
			"$work/prettyjson" <"$work/body" | sed -E \
				-e 's/"(accessToken|access_token)": "[^"]+"/"\1": "<ACCESS_TOKEN>"/' \
				-e 's/"nextPageToken": "[^"]+"/"nextPageToken": "<PAGE_TOKEN>"/' \
				-e 's/"apiVersion": "[^"]*"/"apiVersion": "<version>"/'
		fi
		echo '```'
		echo
	} >>"$work/examples.md"
}

# chart TITLE FILE: draws the last example's answer (a growth plan) as an SVG beside the output
# file, with scripts/planchart, and shows it under that example: the picture partners draw.
chart() {
	local title=$1 file=$2
	printf '%s' "$last_body" >"$work/plan-request.json"
	"$work/planchart" -request "$work/plan-request.json" -answer "$work/body" -o "$(dirname "$out")/$file"
	{
		echo "The same answer drawn as a chart by \`scripts/planchart\` (\`make docs\` redraws it):"
		echo
		echo "![$title: the expected measure at each school time with its 80% band, the target and the day it is reached]($file)"
		echo
	} >>"$work/examples.md"
}

# growthchart TITLE FILE: draws the last example's answer (a growth percentile) as an SVG beside
# the output file, with scripts/growthchart, and shows it under that example.
growthchart() {
	local title=$1 file=$2
	printf '%s' "$last_body" >"$work/growth-request.json"
	"$work/growthchart" -request "$work/growth-request.json" -answer "$work/body" -o "$(dirname "$out")/$file"
	{
		echo "The same answer drawn as a chart by \`scripts/growthchart\` (\`make docs\` redraws it):"
		echo
		echo "![$title: the student's prior and current measures, the cuts as a fan from the latest prior, and the SGP]($file)"
		echo
	} >>"$work/examples.md"
}

{
	cat <<'MD'
# Examples: every endpoint, with its real response

Written by `scripts/examples.sh` from the running services (dev mode, embedded demonstration
content); `make check-docs` fails when this file no longer matches what they answer. Every field,
range and error is described in [api.md](api.md).

Start the services with `make run`, then paste this once into the same shell: it names the two
services and gets a token from each. Tokens are per service: the forecast service does not accept
the scoring service's token. Every command below then pastes as it is; it needs only curl and sed.

```sh
MD
	echo "$setup"
	cat <<'MD'
```

Responses are shown indented; the services answer compact JSON. `<ACCESS_TOKEN>` stands for the
token a call answers, `<PAGE_TOKEN>` for a catalog page's token (signed with the deployment's key,
so it differs from one deployment to the next), `<version>` for the build's version
(`apiVersion`: under `make run` the commit, from `git describe`).

## Token

MD
} >"$work/examples.md"
source scripts/examples.list
mkdir -p "$(dirname "$out")"
mv "$work/examples.md" "$out"
echo "wrote $out"
