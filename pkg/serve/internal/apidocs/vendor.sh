#!/usr/bin/env bash
# Re-vendors Swagger UI: fetches npm's swagger-ui-dist at the pinned version, checks the tarball's
# integrity, and copies only the files /docs serves (plus the licences) into dist/. To upgrade,
# change VERSION and INTEGRITY (npm view swagger-ui-dist@X dist.integrity) and run this.
set -euo pipefail
cd "$(dirname "$0")"

VERSION=5.35.0
INTEGRITY=sha512-U06rpMtW9V3XPGOBeamTUSr0Z09jMX4IJuANpE/EZbAhw0G8CgwrzU4YmXkn/h0wCDNsXdGarTNNHC3sU8yVUQ==
FILES=(swagger-ui-bundle.js swagger-ui.css favicon-32x32.png LICENSE NOTICE swagger-ui-bundle.js.LICENSE.txt)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "swagger-ui-dist@$VERSION" >/dev/null)
tarball="$tmp/swagger-ui-dist-$VERSION.tgz"
got="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
[[ "$got" == "$INTEGRITY" ]] || { echo "integrity mismatch: got $got, want $INTEGRITY" >&2; exit 1; }
tar -xzf "$tarball" -C "$tmp"
rm -rf dist && mkdir dist
for f in "${FILES[@]}"; do cp "$tmp/package/$f" dist/; done
echo "$VERSION" > dist/VERSION
echo "vendored swagger-ui-dist $VERSION into $(pwd)/dist"
