#!/usr/bin/env bash
# GPU check for a host with NVIDIA GPUs (not part of CI: CI has no GPU).
# Builds troupe, starts a dev agent, prints the fingerprinted devices, runs
# a job that asks for one GPU and shows what its task was given: the
# environment troupe set and `nvidia-smi -L` restricted to that device.
#   scripts/gpu-check.sh            # prints everything, exits non-zero on failure
set -euo pipefail
cd "$(dirname "$0")/.."
# go-nvml's cgo code calls NVML functions NVIDIA marked deprecated: without
# this, a fresh build prints ~150 lines of C compiler warnings.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"

command -v nvidia-smi >/dev/null || { echo "gpu-check: nvidia-smi not found: is this a GPU host?" >&2; exit 2; }
echo "== host GPUs (nvidia-smi -L)"
nvidia-smi -L

go build -o bin/ ./cmd/troupe
export TROUPE_ADDR=http://127.0.0.1:4746
work=$(mktemp -d)
bin/troupe agent -dev -http-addr 127.0.0.1:4746 >"$work/agent.log" 2>&1 &
agent=$!
trap 'kill $agent 2>/dev/null; wait $agent 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  bin/troupe node status 2>/dev/null | grep -q ready && break
  sleep 0.2
done

node=$(bin/troupe node status -json | sed -n 's/.*"ID": *"\([^"]*\)".*/\1/p' | head -1)
echo "== fingerprinted devices (troupe node status -verbose)"
bin/troupe node status -verbose "$node" | sed -n '/^Device Resources/,/^Allocations/p'
echo "== sampled usage (troupe node status -stats)"
bin/troupe node status -stats "$node" | sed -n '/^Host Resource Utilization/,/^Allocations/p'

cat >"$work/gpu.hcl" <<'HCL'
job "gpu-check" {
  type = "batch"
  group "g" {
    task "smi" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo NVIDIA_VISIBLE_DEVICES=$NVIDIA_VISIBLE_DEVICES; echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES; nvidia-smi -L -i \"$NVIDIA_VISIBLE_DEVICES\""]
      }
      resources {
        device "nvidia/gpu" {
          count = 1
        }
      }
    }
  }
}
HCL
echo "== job asking for one GPU"
bin/troupe job run "$work/gpu.hcl"
alloc=$(bin/troupe job status gpu-check | awk '$3 == "g" {print $1; exit}')
for _ in $(seq 1 100); do
  bin/troupe alloc status "$alloc" | grep -q 'Client Status *= complete\|Client Status *= failed' && break
  sleep 0.2
done
bin/troupe alloc status "$alloc" | sed -n '/^Task "smi"/,$p'
echo "== task output"
bin/troupe alloc logs "$alloc" smi
assigned=$(bin/troupe alloc status -json "$alloc" | tr -d ' \n' | sed -n 's/.*"DeviceIDs":\["\([^"]*\)".*/\1/p')
echo "== assigned: $assigned"
bin/troupe alloc logs "$alloc" smi | grep -q "NVIDIA_VISIBLE_DEVICES=$assigned" || { echo "gpu-check: the task did not get its GPU" >&2; exit 1; }
listed=$(bin/troupe alloc logs "$alloc" smi | grep -c '^GPU ' || true)
[[ "$listed" == 1 ]] || { echo "gpu-check: nvidia-smi listed $listed GPUs for the task, want 1" >&2; exit 1; }
echo "gpu-check: OK"
