#!/usr/bin/env bash
# make ts-client: installs the pinned packages (package-lock.json), checks that the generated
# types are those of the OpenAPI documents in this commit, type-checks the client and its
# example, builds it, and runs its tests against the built services (bin/scoring, bin/forecast:
# make ts-client builds them first). Any failure fails. With the argument build (make
# browser-test) it installs and builds only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
command -v npm >/dev/null || { echo "ts-client needs node and npm (Debian: apt-get install -y nodejs npm)" >&2; exit 1; }
# npm ci starts from an empty node_modules: skipped while the lock is the one installed.
if ! cmp -s package-lock.json node_modules/.installed-lock.json; then
	npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	cp package-lock.json node_modules/.installed-lock.json
fi
if [[ "${1:-}" == build ]]; then # make browser-test: the client as built, for its page
	exec npm run --silent build
fi
npm run --silent check-generated
npm run --silent typecheck
npm run --silent build
npm test
