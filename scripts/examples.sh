#!/usr/bin/env bash
# Writes docs/examples.md: a curl example and the real response for every endpoint, produced from
# the running services (dev mode, embedded demonstration content), so the docs stay true.
# `make docs` runs it; `make check-docs` (part of `make ci`) fails when the file is stale.
# Tokens are replaced by <ACCESS_TOKEN>; apiVersion is "dev" (no version is linked in).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/examples.md}

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/scoring" github.com/yardstick-dev/yardstick/services/scoring/cmd/scoring
go build -o "$work/forecast" github.com/yardstick-dev/yardstick/services/forecast/cmd/forecast

# Start a service on free loopback ports and read its HTTP address from its "serving" log line.
start() {
	local name=$1
	YARDSTICK_DEV=true YARDSTICK_LOG_FORMAT=json YARDSTICK_HTTP_ADDR=127.0.0.1:0 YARDSTICK_GRPC_ADDR=127.0.0.1:0 \
		"$work/$name" >/dev/null 2>"$work/$name.log" &
	pids+=($!)
	for _ in $(seq 1 200); do
		addr=$(sed -nE 's/.*"msg":"serving".*"http":"([^"]+)".*/\1/p' "$work/$name.log" | head -1)
		[[ -n $addr ]] && { echo "$addr"; return; }
		sleep 0.05
	done
	echo "$name did not start:" >&2; cat "$work/$name.log" >&2; exit 1
}
scoring=$(start scoring)
forecast=$(start forecast)

pretty() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), indent=2))'; }

token() {
	curl -sS -X POST "http://$1/authToken" -H 'Content-Type: application/json' \
		-d '{"clientId":"demo","clientSecret":"demo-secret"}' | sed -E 's/.*"accessToken":"([^"]+)".*/\1/'
}
scoring_token=$(token "$scoring")
forecast_token=$(token "$forecast")

# example TITLE SERVICE PATH BODY [CONTENT-TYPE] [AUTH: yes|no]
example() {
	local title=$1 service=$2 path=$3 body=$4 ctype=${5:-application/json} auth=${6:-yes}
	local addr tok shown_host
	if [[ $service == scoring ]]; then addr=$scoring tok=$scoring_token shown_host='{scoring_url}'
	else addr=$forecast tok=$forecast_token shown_host='{forecast_url}'; fi
	local args=(-sS -X POST "http://$addr$path" -H "Content-Type: $ctype" -d "$body" -o "$work/body" -w '%{http_code}')
	[[ $auth == yes ]] && args+=(-H "Authorization: Bearer $tok")
	local status
	status=$(curl "${args[@]}")
	{
		echo "### $title"
		echo
		echo '```sh'
		echo "curl -X POST $shown_host$path \\"
		[[ $auth == yes ]] && echo "  -H 'Authorization: Bearer <ACCESS_TOKEN>' \\"
		echo "  -H 'Content-Type: $ctype' \\"
		echo "  -d '$body'"
		echo '```'
		echo
		echo "Response \`$status\`:"
		echo
		echo '```json'
		sed -E 's/"accessToken": ?"[^"]+"/"accessToken":"<ACCESS_TOKEN>"/' "$work/body" | pretty
		echo '```'
		echo
	} >>"$work/examples.md"
}

cat >"$work/examples.md" <<'MD'
# Examples: every endpoint, with its real response

Written by `scripts/examples.sh` from the running services (dev mode, embedded demonstration
content); `make check-docs` fails when this file no longer matches what they answer. `{scoring_url}`
is `http://localhost:8080` and `{forecast_url}` `http://localhost:8081` under `make run`.

## Token

MD
source scripts/examples.list
mkdir -p "$(dirname "$out")"
mv "$work/examples.md" "$out"
echo "wrote $out"
