#!/usr/bin/env bash
# Builds the QUIC companion (dnscost-quic) into native-host/quic/bin/ with the machine's Go (>= 1.26). Called by
# scripts/setup; rebuilds only when a source file is newer than the binary. Without it the host reports doq and
# doh3 as unavailable.
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin" GOFLAGS=-mod=readonly GOTOOLCHAIN=local
out=bin/dnscost-quic
if [ -x "$out" ] && [ -z "$(find . -path ./bin -prune -o -type f -newer "$out" -print | head -1)" ]; then exit 0; fi
echo "quic: building dnscost-quic" >&2
mkdir -p bin
go build -trimpath -o "$out" .
