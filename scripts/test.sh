#!/usr/bin/env bash
# Runs troupe's whole test suite: vet, then every package's tests with the
# race detector. CI (.ci/run) runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
go vet ./...
go test -race -count=1 -timeout 25m ./...
