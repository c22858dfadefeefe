#!/usr/bin/env bash
# Record the kernel's side of the Linux TCP model's check (validation/linux/README.md): one
# kernel Reno or CUBIC flow per run across the emulated link (crates/netemu's example
# kernel_tcp), TCP_INFO every 10 ms. Needs root. Usage:
#   validation/linux/record.sh OUTDIR [REPS]
# writes OUTDIR/<cc>-<path>-<queue>-<rep>.csv for cc in reno, cubic; path 10m20 (10 Mb/s,
# 20 ms base RTT, 15 s) and 50m100 (50 Mb/s, 100 ms, 20 s); queue 1bdp and q4 (a quarter
# BDP): 17/4 and 417/104 packets of 1500 bytes.
set -euo pipefail
out=${1:?output directory}
reps=${2:-10}
mkdir -p "$out"
cargo build --release -q -p netemu --example kernel_tcp
bin=target/release/examples/kernel_tcp
for rep in $(seq 1 "$reps"); do
  for cc in reno cubic; do
    for cfg in "10m20 10000000 10 17 4 15" "50m100 50000000 50 417 104 20"; do
      set -- $cfg
      for q in 1bdp q4; do
        limit=$4
        [ "$q" = q4 ] && limit=$5
        "$bin" --cc "$cc" --bw "$2" --delay-ms "$3" --limit "$limit" --secs "$6" \
          --out "$out/$cc-$1-$q-$rep.csv"
      done
    done
  done
done
