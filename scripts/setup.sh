#!/usr/bin/env bash
# Installs what troupe's build and tests need on a fresh Debian machine with Go.
#   scripts/setup.sh          the runtime and test dependencies
#   scripts/setup.sh -proto   also protoc and protoc-gen-go, to regenerate messages/*.pb.go
set -euo pipefail

# containerd, runc, the CNI plugins (/usr/lib/cni), busybox-static (test
# images) and docker-registry (a local registry for pull tests) serve the
# containerd driver and bridge networking; tests start their own containerd.
need=(iproute2 iptables iputils-ping procps util-linux ca-certificates
  containerd runc containernetworking-plugins busybox-static docker-registry
  qemu-system-x86 linux-image-cloud-amd64 # qemu driver test: TCG boots the cloud kernel (virtio-net as modules)
  default-jdk-headless # java driver test: javac and jar build its test jar
  prometheus # the metrics test scrapes an agent with Debian's real Prometheus
  chromium) # web UI tests: headless Chromium driven by chromedp
if [[ "${1:-}" == "-proto" ]]; then
  need+=(protobuf-compiler libprotobuf-dev) # libprotobuf-dev: google/protobuf/struct.proto
fi

missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ "${1:-}" == "-proto" ]]; then
  go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
fi

go mod download
echo "setup: done"
