#!/usr/bin/env bash
# Generates the throwaway contract (v1/throwaway.proto, its HTTP rules in http.yaml) with the
# repository's pinned plugins, as buf.gen.yaml generates the contract (make generate runs this):
# the Go messages, their JSON codecs and protobuf decoders (protoc-gen-yardstick-json), vtprotobuf's
# codecs, the gRPC service, the gateway's registration and the OpenAPI document. The file is
# generated as yardstick/scoring/v1/throwaway.proto, a new file of the scoring package, beside the
# contract's auth.proto and batch.proto (imported as they are), into package
# github.com/yardstick-dev/yardstick/pkg/serve/testdata/throwaway/v1, which only pkg/serve's tests
# import (go build ./... skips testdata).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
here=pkg/serve/testdata/throwaway
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in/yardstick/auth/v1" "$tmp/in/yardstick/batch/v1" "$tmp/in/yardstick/scoring/v1" "$tmp/out"
cp proto/yardstick/auth/v1/auth.proto "$tmp/in/yardstick/auth/v1/"
cp proto/yardstick/batch/v1/batch.proto "$tmp/in/yardstick/batch/v1/"
bin/tools/buf format -w "$here/v1"
cp "$here/v1/throwaway.proto" "$tmp/in/yardstick/scoring/v1/"
rules="$PWD/$here/http.yaml"
bin/tools/buf generate "$tmp/in" --path "$tmp/in/yardstick/scoring/v1" --output "$tmp/out" --template "$(
	cat <<JSON
{"version": "v2", "plugins": [
  {"local": "bin/tools/protoc-gen-go", "out": ".", "opt": ["paths=source_relative"]},
  {"local": "bin/tools/protoc-gen-yardstick-json", "out": ".", "opt": ["paths=source_relative"]},
  {"local": "bin/tools/protoc-gen-go-grpc", "out": ".", "opt": ["paths=source_relative"]},
  {"local": "bin/tools/protoc-gen-go-vtproto", "out": ".", "opt": ["paths=source_relative", "features=marshal+unmarshal+size"]},
  {"local": "bin/tools/protoc-gen-grpc-gateway", "out": ".", "opt": ["paths=source_relative", "grpc_api_configuration=$rules"]},
  {"local": "bin/tools/protoc-gen-openapiv2", "out": ".", "opt": ["grpc_api_configuration=$rules", "allow_merge=false", "disable_default_errors=true", "openapi_naming_strategy=simple"]}
]}
JSON
)"
rm -f "$here"/v1/*.go "$here"/v1/*.json
mv "$tmp"/out/yardstick/scoring/v1/* "$here/v1/"
