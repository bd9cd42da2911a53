#!/usr/bin/env bash
# make lint-openapi: installs the pinned linters (package-lock.json) and runs Stoplight Spectral
# (spectral:oas) and Redocly (recommended) on each OpenAPI document given. Any error or warning of
# either fails. Usage: tools/openapi-lint/lint.sh DOCUMENT...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
(( $# )) || { echo "usage: $0 DOCUMENT..." >&2; exit 2; }
command -v npm >/dev/null || { echo "lint-openapi needs node and npm (Debian: apt-get install -y nodejs npm)" >&2; exit 1; }

# Exact versions from package-lock.json; no install scripts are needed (or run). npm ci starts
# from an empty node_modules (about a minute): skipped while the lock is the one installed.
if ! cmp -s "$here/package-lock.json" "$here/node_modules/.installed-lock.json"; then
  (cd "$here" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
  cp "$here/package-lock.json" "$here/node_modules/.installed-lock.json"
fi
bin=$here/node_modules/.bin
# Redocly CLI: no usage reports, no update check (the machine reaches the npm registry only).
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true

status=0
echo "spectral $("$bin/spectral" --version) (spectral:oas):"
"$bin/spectral" lint --ruleset "$here/.spectral.yaml" --fail-severity warn "$@" || status=1

# Redocly exits 0 on warnings: read its JSON report of each document and fail on any problem.
for doc in "$@"; do
  report=$("$bin/redocly" lint --config "$here/redocly.yaml" --format json "$doc" 2>/dev/null) || true
  node -e '
    const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
    for (const p of r.problems) {
      const at = p.location && p.location[0] ? p.location[0].source.ref + p.location[0].pointer : "";
      console.log(`  ${at}: ${p.severity} ${p.ruleId}: ${p.message}`);
    }
    console.log(`redocly ${r.version} (recommended) ${process.argv[1]}: ${r.totals.errors} errors, ${r.totals.warnings} warnings`);
    process.exit(r.totals.errors + r.totals.warnings === 0 ? 0 : 1);
  ' "$doc" <<<"$report" || status=1
done
exit $status
