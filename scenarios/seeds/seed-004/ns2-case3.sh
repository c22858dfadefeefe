#!/bin/sh
# Writes ns2-case3.toml: seed 004's case 3 "fit" setup (tfrc-cbr.toml: flow A's CBR at 1 ... 10
# Mb/s, flow B's at 448 kb/s, Agent/TFRC with SndrType_ 1) run in NS-2.35 itself, measured from
# its trace as the paper's tables count: data packets (tcpFriend) entering the first link and
# arriving at the destination node, 1000 payload bytes each, delay from the first enqueue to the
# arrival, jitter = max - min delay. `tfrclab reproduce seed-004` shows these beside the paper.
#
# Usage (from the repository root, with `ns` on PATH):
#   sh scenarios/seeds/seed-004/ns2-case3.sh [path/to/tfrclab] > scenarios/seeds/seed-004/ns2-case3.toml
set -eu
TFRCLAB=${1:-target/release/tfrclab}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cat <<HEAD
# NS-2.35's own figures for seed 004's case 3 "fit" setup (tfrc-cbr.toml with flow A's
# app_rate at each rate), written by ns2-case3.sh; not paper values. Same format as paper.toml.
source = "NS-2.35 running \`tfrclab export-ns2 scenarios/seeds/seed-004/tfrc-cbr.toml --set flows.A.app_rate=RATE\`"

[[tables]]
id = "ns2-case3"
number = "-"
title = "Seed 004 case 3 (fit setup) in NS-2.35"
key = "rate_mbps"
columns = ["rate_mbps", "a_sent_bytes", "a_received_bytes", "a_loss_rate", "a_delay_s", "a_jitter_s", "b_sent_bytes", "b_received_bytes", "b_loss_rate", "b_delay_s", "b_jitter_s"]
printing = ["exact", "exact", "exact", "rounded", "rounded", "rounded", "exact", "exact", "rounded", "rounded", "rounded"]
rows = [
HEAD
for r in 1 2 3 4 5 6 7 8 9 10; do
  "$TFRCLAB" export-ns2 "$HERE/tfrc-cbr.toml" --set flows.A.app_rate=${r}Mb \
    -o "$WORK/case3.tcl" --trace-file case3.tr
  (cd "$WORK" && ns case3.tcl > /dev/null)
  awk -v rate="$r" '
    $5 == "tcpFriend" {
      fid = $8
      if ($1 == "+" && (($3 == 0 && fid == 0) || ($3 == 1 && fid == 1)) && !($12 in st)) {
        st[$12] = $2; sent[fid]++
      }
      if ($1 == "r" && (($4 == 8 && fid == 0) || ($4 == 9 && fid == 1)) && ($12 in st)) {
        d = $2 - st[$12]; n[fid]++; s[fid] += d
        if (!(fid in mn) || d < mn[fid]) mn[fid] = d
        if (d > mx[fid]) mx[fid] = d
      }
    }
    END {
      printf "  [\"%d\"", rate
      for (f = 0; f < 2; f++)
        printf ", \"%d\", \"%d\", \"%.6f\", \"%.6f\", \"%.6f\"", sent[f] * 1000, n[f] * 1000,
          (sent[f] - n[f]) / sent[f], s[f] / n[f], mx[f] - mn[f]
      printf "],\n"
    }' "$WORK/case3.tr"
  rm -f "$WORK/case3.tr"
done
echo "]"
