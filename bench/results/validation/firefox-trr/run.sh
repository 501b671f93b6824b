#!/bin/bash
# Firefox's TRR lookups on the zdnet page at 4G, warm: two loads a side (Do53, DoH) with Firefox's own log
# (MOZ_LOG, appended per launch) and a capture of DNS and port 443 in the lab's client namespace.
# As root, from the repository's root after scripts/setup, nothing else running. Writes into ${1:-/tmp/firefox-trr};
# then: python3 bench/results/validation/firefox-trr/analyse.py ${1:-/tmp/firefox-trr}
set -eu
out=${1:-/tmp/firefox-trr}
rm -rf "$out" && mkdir -p "$out"
MOZ_LOG=append,timestamp,nsHostResolver:5,TRR:5 MOZ_LOG_FILE="$out/ff" timeout 900 scripts/validate --browser firefox \
  --profile 4g --pages none --har ../shared/pages/www.zdnet.com.har --scenario warm --transports doh --loads 2 \
  --min-loads 2 --dot-stub stubby --server-idle 20 --stub-nodelay --raw "$out/raw.json.gz" --out "$out/report.md" \
  > "$out/validate.log" 2>&1 &
v=$!
ns=
for _ in $(seq 1 600); do ns=$(ip netns list | grep -o 'dnscost-c-[0-9]*-0' | head -1); [ -n "$ns" ] && break; sleep 0.2; done
[ -n "$ns" ] || { echo "no lab client namespace appeared" >&2; kill $v; exit 1; }
ip netns exec "$ns" dumpcap -q -i any -s 160 -f "udp port 53 or tcp port 443" -w "$out/cap.pcapng" > "$out/dumpcap.log" 2>&1 &
d=$!
rc=0; wait $v || rc=$?
kill $d; wait $d 2>/dev/null || true
tshark -r "$out/cap.pcapng" -T fields -e frame.time_epoch -e ip.src -e ip.dst -e tcp.srcport -e tcp.dstport -e tcp.len \
  > "$out/cap.tsv" 2>/dev/null
tshark -r "$out/cap.pcapng" -Y 'dns.flags.response==1' -T fields -e frame.time_epoch -e dns.time > "$out/do53.tsv" 2>/dev/null
exit $rc
