#!/bin/bash
# Pinning experiment (issue 11, the many-host excess after the first byte): fiber, the 100-host page, Chromium, warm
# DoQ and DoH against Do53, with the browser, its stubs and the validation's own processes pinned to CPU 0 and the
# lab's far side (CoreDNS, the page server, the netem delayers) to CPU $1 (1: a core of their own; 0: all on one).
#
#   bench/results/validation/pinning/pin-cores.sh 1 sep    # then: pin-cores.sh 0 same
#
# Needs root and scripts/setup; nothing else may run meanwhile. Writes /tmp/pin-TAG.{md,json,raw.json.gz,log}.
core=${1:?CPU for the far side: 0 or 1}; tag=${2:?a tag for the output files}
ROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
cd "$ROOT"
scripts/validate --browser chromium --profile fiber --pages 100 --scenario warm --transports "${PIN_T:-doq,doh}" \
  --loads "${PIN_N:-10}" --min-loads "${PIN_N:-10}" --dot-stub stubby --server-idle 20 --stub-nodelay \
  --raw "/tmp/pin-$tag.raw.json.gz" --out "/tmp/pin-$tag.md" --json "/tmp/pin-$tag.json" > "/tmp/pin-$tag.log" 2>&1 &
vp=$!
declare -A seen
# Once a second: each new process under the validation's node processes goes to CPU 0 (children inherit it), each
# far-side process to CPU $core. One ps snapshot per pass; each pid is pinned once.
while kill -0 $vp 2>/dev/null; do
  ps -eo pid=,ppid=,args= > "/tmp/pin-$tag.ps"
  for p in $(awk -v main="node $ROOT/dist/bench/validate/main.js$" '
    { pid[NR]=$1; ppid[NR]=$2; a=$0; sub(/^ *[0-9]+ +[0-9]+ +/, "", a); args[NR]=a; n=NR }
    END {
      far="lab/bin/(coredns|netem)|dist/lab/(har|site)/"
      for (i=1;i<=n;i++) if (args[i] ~ main) root[pid[i]]=1
      changed=1; while (changed) { changed=0; for (i=1;i<=n;i++) if ((ppid[i] in root) && !(pid[i] in root) && args[i] !~ far) { root[pid[i]]=1; changed=1 } }
      for (p in root) print "0:" p
      for (i=1;i<=n;i++) if (args[i] ~ far) print "R:" pid[i]
    }' "/tmp/pin-$tag.ps"); do
    q=${p#*:}
    [ -n "${seen[$q]}" ] && continue
    seen[$q]=1
    if [ "${p%%:*}" = 0 ]; then taskset -a -p -c 0 "$q" >/dev/null 2>&1; else taskset -a -p -c "$core" "$q" >/dev/null 2>&1; fi
  done
  sleep 1
done
wait $vp
