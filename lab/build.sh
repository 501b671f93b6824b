#!/usr/bin/env bash
# Builds every Go program of the lab (each folder here with a go.mod) into lab/bin/NAME.
# Rebuilds only when a source file is newer than the binary.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p bin
export GOFLAGS=-mod=readonly GOTOOLCHAIN=local
for mod in */go.mod; do
  dir=${mod%/go.mod}
  out=bin/$dir
  if [ -x "$out" ] && [ -z "$(find "$dir" -newer "$out" -type f | head -1)" ]; then continue; fi
  echo "lab: building $dir" >&2
  (cd "$dir" && go build -trimpath -o "../$out" .)
done
