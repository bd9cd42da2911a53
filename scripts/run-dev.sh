#!/usr/bin/env bash
# Starts both services in dev mode on the embedded demonstration content, prints the demo
# credentials and a curl that works, and stops both on Ctrl-C. Used by `make run`.
set -euo pipefail
cd "$(dirname "$0")/.."

SCORING_HTTP=${SCORING_HTTP:-127.0.0.1:8080}
FORECAST_HTTP=${FORECAST_HTTP:-127.0.0.1:8081}
export YARDSTICK_DEV=true YARDSTICK_LOG_FORMAT=text YARDSTICK_SHUTDOWN_GRACE=5s

pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait; }
trap cleanup EXIT INT TERM

YARDSTICK_HTTP_ADDR=$SCORING_HTTP YARDSTICK_GRPC_ADDR=127.0.0.1:9090 bin/scoring &
pids+=($!)
YARDSTICK_HTTP_ADDR=$FORECAST_HTTP YARDSTICK_GRPC_ADDR=127.0.0.1:9091 bin/forecast &
pids+=($!)

for addr in "$SCORING_HTTP" "$FORECAST_HTTP"; do
	for _ in $(seq 1 100); do
		curl -fsS "http://$addr/readyz" >/dev/null 2>&1 && break
		sleep 0.1
	done
	curl -fsS "http://$addr/readyz" >/dev/null || { echo "service on $addr did not become ready" >&2; exit 1; }
done

cat <<MSG

  Yardstick is running in DEV MODE on the embedded demonstration content.
    scoring : http://$SCORING_HTTP   (gRPC 127.0.0.1:9090)
    forecast: http://$FORECAST_HTTP   (gRPC 127.0.0.1:9091)
  Dev credentials: clientId=demo  clientSecret=demo-secret

  Try:
    TOKEN=\$(curl -s -X POST http://$SCORING_HTTP/authToken -H 'Content-Type: application/json' \\
      -d '{"clientId":"demo","clientSecret":"demo-secret"}' | sed -E 's/.*"accessToken":"([^"]+)".*/\1/')
    curl -s -X POST http://$SCORING_HTTP/api/score/items/idsWithResults/standard \\
      -H "Authorization: Bearer \$TOKEN" -H 'Content-Type: application/json' \\
      -d '{"items":[{"id":"L000100","result":1},{"id":"L000200","result":0},{"id":"L000300","result":1}]}'

  Ctrl-C stops both.
MSG
wait -n
