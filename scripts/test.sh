#!/usr/bin/env bash
# Runs troupe's whole test suite: vet, then every package's tests with the
# race detector, then a short run of each fuzz target (its committed corpus
# in testdata/fuzz is replayed by the plain tests too). CI (.ci/run) runs
# exactly this. Longer fuzz runs are by hand, e.g.
#   go test -run '^$' -fuzz '^FuzzParseHCL$' -fuzztime 10m ./jobspec/
set -euo pipefail
cd "$(dirname "$0")/.."
# go-nvml's cgo code calls NVML functions NVIDIA marked deprecated: without
# this, a fresh build prints ~150 lines of C compiler warnings.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"
# The browser tests' screenshots (ui/uitest ArtifactDir) are kept here.
export TROUPE_TEST_ARTIFACTS="${TROUPE_TEST_ARTIFACTS:-$PWD/test-artifacts}"
scripts/setup.sh
go vet ./...
go test -race -count=1 -timeout 25m ./...
# Tests with two agents in one process skip under -race (protoactor's
# remote.Start writes grpc's global logger; agent/federation_test.go):
# run them without it.
go test -count=1 -run '^(TestFederationWithNomadClient|TestACLReplication)$' ./agent/
fuzztime="${TROUPE_FUZZTIME:-20s}"
for target in jobspec:FuzzParseJSON jobspec:FuzzParseHCL httpapi:FuzzParseQuery; do
	go test -run '^$' -fuzz "^${target#*:}\$" -fuzztime "$fuzztime" "./${target%%:*}/"
done
