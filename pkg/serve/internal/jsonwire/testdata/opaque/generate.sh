#!/usr/bin/env bash
# Regenerates the Opaque-API build of the contract that jsonwire's fail-closed test decodes into
# (make generate runs this). The contract's .proto files are copied with every package moved under
# "opaque." (so both builds can be registered in one test binary; auth.proto, which
# declares the permission option, and batch.proto, the batch streams' status, are imported as
# they are) and generated with protoc-gen-go's
# default_api_level=API_OPAQUE: hidden fields and a presence bitmap, the struct shape protobuf-go
# generates by default from edition 2024.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=pkg/serve/internal/jsonwire/testdata/opaque
mkdir -p "$tmp/yardstick/auth/v1"
cp proto/yardstick/auth/v1/auth.proto "$tmp/yardstick/auth/v1/" # imported as it is: its extension is registered once
mkdir -p "$tmp/yardstick/batch/v1"
cp proto/yardstick/batch/v1/batch.proto "$tmp/yardstick/batch/v1/"
# Every .proto file of each service's package (the scoring package also holds ContentService).
for s in scoring forecast; do
	mkdir -p "$tmp/opaque/yardstick/$s/v1"
	for f in proto/yardstick/$s/v1/*.proto; do
		sed -e 's/^package yardstick\./package opaque.yardstick./' \
			-e 's/(yardstick\.auth\.v1\./(.yardstick.auth.v1./' \
			-e 's/ yardstick\.batch\.v1\./ .yardstick.batch.v1./' \
			-e 's/(yardstick\.batch\.v1\./(.yardstick.batch.v1./' \
			-e "s#^option go_package = .*#option go_package = \"github.com/yardstick-dev/yardstick/$out/${s}v1\";#" \
			"$f" >"$tmp/opaque/yardstick/$s/v1/$(basename "$f")"
	done
done
rm -f "$out"/*/*.pb.go
bin/tools/buf generate "$tmp" --path "$tmp/opaque" --template '{"version":"v2","plugins":[{"local":"bin/tools/protoc-gen-go","out":".","opt":["module=github.com/yardstick-dev/yardstick","default_api_level=API_OPAQUE"]}]}'
