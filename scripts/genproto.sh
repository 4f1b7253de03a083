#!/usr/bin/env bash
# Regenerates kserve/pb from proto/. Run from anywhere: bash scripts/genproto.sh
# Pinned generators: protoc 3.21.12 (Debian bookworm's protobuf-compiler), protoc-gen-go v1.36.12,
# protoc-gen-go-grpc v1.5.1. The generated code is checked in; CI does not regenerate it.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v protoc >/dev/null || { echo "protoc missing: apt-get install -y protobuf-compiler" >&2; exit 1; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN=$bin go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
GOBIN=$bin go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
mkdir -p kserve/pb
protoc -I proto \
  --plugin=protoc-gen-go="$bin/protoc-gen-go" --plugin=protoc-gen-go-grpc="$bin/protoc-gen-go-grpc" \
  --go_out=kserve/pb --go_opt=paths=source_relative \
  --go-grpc_out=kserve/pb --go-grpc_opt=paths=source_relative \
  proto/model_config.proto proto/grpc_service.proto
echo "regenerated kserve/pb with $(protoc --version)"
