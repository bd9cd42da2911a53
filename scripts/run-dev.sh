#!/usr/bin/env bash
# Starts both services in dev mode on the embedded demonstration content, prints the demo
# credentials and a curl that works, and stops both on Ctrl-C. Used by `make run` (which builds
# bin/scoring and bin/forecast first).
# CONTENT=DIR serves the content bundle in DIR instead (YARDSTICK_CONTENT_DIR of both services;
# docs/content.md); the banner then names the bundle and its hash.
#
# Ports: SCORING_HTTP, SCORING_GRPC, FORECAST_HTTP, FORECAST_GRPC (host:port; defaults 127.0.0.1 and
# 8080, 9090, 8081, 9091). A busy port stops the start, naming the process that holds it.
# It says "running" only once both services are alive, hold their own ports and answer /readyz.
# Nothing outlives it however it is stopped: Ctrl-C or SIGTERM (trap), a service that exits (the
# other is stopped), SIGINT or SIGTERM to make's pid alone, and SIGKILL of make or of this script
# (the watchdog of scripts/lib/procs.sh).
# A stop that was asked for (Ctrl-C, SIGTERM, make signalled) says so in one line and ends with
# status 0, so make adds no "Error" line; make itself still ends by the signal, so a caller of
# make sees the interruption. A service that stops unasked is named, with its status, and the
# script ends with that status (1 if it was 0: it still did not run as it should).
# RUN_DEV_PARENT is the pid whose death stops everything (`make run` passes make's; default $PPID).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/procs.sh

SCORING_HTTP=${SCORING_HTTP:-127.0.0.1:8080}
SCORING_GRPC=${SCORING_GRPC:-127.0.0.1:9090}
FORECAST_HTTP=${FORECAST_HTTP:-127.0.0.1:8081}
FORECAST_GRPC=${FORECAST_GRPC:-127.0.0.1:9091}
parent=${RUN_DEV_PARENT:-$PPID}
export YARDSTICK_DEV=true YARDSTICK_LOG_FORMAT=text YARDSTICK_SHUTDOWN_GRACE=5s

CONTENT=${CONTENT:-}
if [[ -n $CONTENT ]]; then
	[[ -d $CONTENT ]] || { echo "run-dev: CONTENT=$CONTENT is not a directory (a content bundle: docs/content.md)" >&2; exit 1; }
	CONTENT=$(cd "$CONTENT" && pwd)
	export YARDSTICK_CONTENT_DIR=$CONTENT
fi

for bin in bin/scoring bin/forecast; do
	[[ -x $bin ]] || { echo "run-dev: $bin is missing: run 'make run' (it builds first)" >&2; exit 1; }
done
command -v curl >/dev/null || { echo "run-dev: curl is needed (apt-get install -y curl)" >&2; exit 1; }

busy=()
for addr in "$SCORING_HTTP" "$SCORING_GRPC" "$FORECAST_HTTP" "$FORECAST_GRPC"; do
	holder=$(port_holder "${addr##*:}")
	[[ -z $holder ]] || busy+=("  port ${addr##*:} ($addr) is in use by $holder")
done
if ((${#busy[@]})); then
	printf 'run-dev: cannot start, ports are taken:\n' >&2
	printf '%s\n' "${busy[@]}" >&2
	printf 'Stop that process (an earlier run: kill PID), or choose other ports, e.g.\n' >&2
	printf '  SCORING_HTTP=127.0.0.1:18080 SCORING_GRPC=127.0.0.1:19090 FORECAST_HTTP=127.0.0.1:18081 FORECAST_GRPC=127.0.0.1:19091 make run\n' >&2
	exit 1
fi

pids=()
watchdog_pid=
cleanup() {
	trap - EXIT
	trap '' INT TERM # a second Ctrl-C, or the watchdog's SIGTERM, must not cut the stop short
	[[ -n $watchdog_pid ]] && kill "$watchdog_pid" 2>/dev/null || true
	stop "${pids[@]}"
	wait 2>/dev/null || true
}
trap cleanup EXIT
# asked WHY: a stop was asked for; the services are stopped by cleanup (on Ctrl-C they have the
# signal too and are already draining).
asked() {
	trap '' INT TERM # one line: the watchdog may send SIGTERM on make's Ctrl-C too
	echo "run-dev: $1: stopping both services" >&2
	exit 0
}
trap 'asked Ctrl-C' INT
trap 'asked SIGTERM' TERM

YARDSTICK_HTTP_ADDR=$SCORING_HTTP YARDSTICK_GRPC_ADDR=$SCORING_GRPC bin/scoring &
pids+=($!)
YARDSTICK_HTTP_ADDR=$FORECAST_HTTP YARDSTICK_GRPC_ADDR=$FORECAST_GRPC bin/forecast &
pids+=($!)
watchdog "$parent" "${pids[@]}"

# ready PID NAME HTTP GRPC: PID is alive, holds both its ports (not some other process that
# answers on them) and answers /readyz; 20 s at most.
ready() {
	local pid=$1 name=$2 http=$3 grpc=$4
	for _ in $(seq 1 200); do
		alive "$pid" || { echo "run-dev: $name exited during start (its log is above)" >&2; return 1; }
		if owns_port "$pid" "${http##*:}" && owns_port "$pid" "${grpc##*:}" &&
			curl -fsS "http://$http/readyz" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.1
	done
	echo "run-dev: $name did not become ready on $http within 20 s" >&2
	return 1
}
ready "${pids[0]}" scoring "$SCORING_HTTP" "$SCORING_GRPC"
ready "${pids[1]}" forecast "$FORECAST_HTTP" "$FORECAST_GRPC"

content="the embedded demonstration content"
try='{"items":[{"id":"L000100","result":1},{"id":"L000200","result":0},{"id":"L000300","result":1}]}'
try_path=/api/score/items/idsWithResults/standard
if [[ -n $CONTENT ]]; then
	# The hash the services loaded (yardstick_reload_info), as the catalog and yardstick-content name it.
	hash=$(curl -fsS "http://$SCORING_HTTP/metrics" | sed -nE 's/^yardstick_reload_info\{.*hash="([0-9a-f]+)".*source="content".*/\1/p' | head -1)
	content="the content bundle $CONTENT (hash ${hash:-unknown})"
	try='{}' try_path=/api/content/forms
fi

cat <<MSG

  Yardstick is running in DEV MODE on $content.
    scoring : http://$SCORING_HTTP   (gRPC $SCORING_GRPC)
    forecast: http://$FORECAST_HTTP   (gRPC $FORECAST_GRPC)
  Dev credentials: clientId=demo  clientSecret=demo-secret

  Try:
    TOKEN=\$(curl -s -X POST http://$SCORING_HTTP/authToken -H 'Content-Type: application/json' \\
      -d '{"clientId":"demo","clientSecret":"demo-secret"}' | sed -E 's/.*"accessToken":"([^"]+)".*/\1/')
    curl -s -X POST http://$SCORING_HTTP$try_path \\
      -H "Authorization: Bearer \$TOKEN" -H 'Content-Type: application/json' \\
      -d '$try'

  Every endpoint: docs/examples.md (the forecast service on $FORECAST_HTTP needs its own token).
  Ctrl-C stops both.
MSG

# Until a service exits by itself (the other is then stopped) or a stop is asked for (the traps).
ended=
if wait -n -p ended "${pids[@]}"; then status=0; else status=$?; fi
name=scoring other=forecast
[[ ${ended:-} == "${pids[1]}" ]] && name=forecast other=scoring
echo "run-dev: $name stopped unexpectedly (exit status $status; its log above says why); stopping $other" >&2
exit $((status ? status : 1))
