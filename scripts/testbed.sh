#!/usr/bin/env bash
# The namespace testbed, now a thin wrapper over `tfrclab validate --real` (docs/real-network.md,
# "Real validation"): TFRC alone, against Reno, against CUBIC, and two TFRC flows, over links
# emulated by netemu (the simulator's own queue code on real packets), each held against the
# simulation. Every set-up step is checked by tfrclab itself; nothing here can fail silently.
#
# usage: scripts/testbed.sh [--reps N] [--duration S] [--out DIR] [--bin PATH] [-- MORE ARGS]
#   --reps: real runs per case (default 3); --duration: seconds per run (default the
#   scenarios' 30); --out: output folder (default out/testbed); --bin: the tfrclab binary
#   (default $TFRCLAB, else target/release/tfrclab). Needs root. Exit: tfrclab's (0 compared,
#   1 a run failed, 2 bad input or a machine that cannot run it).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
REPS=3
DURATION=""
OUT=out/testbed
BIN="${TFRCLAB:-${CARGO_TARGET_DIR:-$ROOT/target}/release/tfrclab}"
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) REPS="${2:?--reps needs a number}"; shift ;;
    --duration) DURATION="${2:?--duration needs seconds}"; shift ;;
    --out) OUT="${2:?--out needs a folder}"; shift ;;
    --bin) BIN="${2:?--bin needs a path}"; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "testbed.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$BIN" ] || { echo "testbed.sh: tfrclab binary '$BIN' not found (cargo build --release -p tfrclab, or --bin)" >&2; exit 2; }
SET=()
[ -n "$DURATION" ] && SET=(--set "duration=${DURATION}s")
R="$ROOT/validation/real"
exec "$BIN" validate --real --reps "$REPS" --out "$OUT" "${SET[@]}" "${EXTRA[@]}" \
  "$R/tfrc-alone.toml" "$R/tfrc-reno-20ms.toml" "$R/tfrc-cubic.toml" "$R/two-tfrc.toml"
