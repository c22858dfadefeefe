#!/usr/bin/env bash
# TFRC over real UDP on a Linux testbed (issue 8): three network namespaces
#
#   snd (10.200.1.1) --veth-- rtr --veth-- (10.200.2.2) rcv
#
# with a tbf bottleneck on the router's egress towards rcv (RATE, a LATENCY cap on the queue),
# so data crosses one router (hops 1). Cases, DURATION seconds each:
#   a) TFRC alone            b) TFRC + one TCP Reno flow (iperf3 -C reno)
#   c) TFRC + one TCP CUBIC  d) two TFRC flows
# Prints throughputs, the TFRC/TCP ratio, bottleneck utilisation and loss (from the qdisc's
# counters), checks the targets, and cleans up even when a step fails.
#
# usage: scripts/testbed.sh [--short] [--duration S] [--rate 10mbit] [--latency 100ms]
#                           [--json FILE] [--send-args "ARGS"] [--bin PATH] [--keep DIR]
# --send-args: extra `tfrclab send` flags, e.g. "--no-oscillation-damping".
# Needs root, iproute2 (ip, tc) and iperf3. Exit: 0 all targets met, 3 a target missed,
# 1 a step failed, 2 bad usage.
set -euo pipefail

DURATION=30
RATE=10mbit
LATENCY=100ms
JSON=""
SEND_ARGS=""
BIN="${TFRCLAB:-}"
KEEP=""

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --short) DURATION=8 ;;
    --duration) DURATION="${2:?--duration needs seconds}"; shift ;;
    --rate) RATE="${2:?--rate needs a tc rate}"; shift ;;
    --latency) LATENCY="${2:?--latency needs a tc time}"; shift ;;
    --json) JSON="${2:?--json needs a file}"; shift ;;
    --send-args) SEND_ARGS="${2-}"; shift ;;
    --bin) BIN="${2:?--bin needs a path}"; shift ;;
    --keep) KEEP="${2:?--keep needs a directory}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "testbed.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$DURATION" in ''|*[!0-9]*) echo "testbed.sh: --duration '$DURATION' is not a whole number of seconds" >&2; exit 2 ;; esac
if [ -z "$BIN" ]; then
  BIN="$(cd "$(dirname "$0")/.." && pwd)/target/release/tfrclab"
fi
[ -x "$BIN" ] || { echo "testbed.sh: tfrclab binary '$BIN' not found (build it, or pass --bin / TFRCLAB)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "testbed.sh: needs root (network namespaces)" >&2; exit 2; }
for t in ip tc iperf3 python3; do
  command -v "$t" >/dev/null || { echo "testbed.sh: '$t' is not installed" >&2; exit 2; }
done

ID=$$
S="tb${ID}s"; R="tb${ID}r"; D="tb${ID}d"
WORK="$(mktemp -d /tmp/testbed.XXXXXX)"
PIDS=()

cleanup() {
  local rc=$?
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null || true
  done
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] && wait "$p" 2>/dev/null || true
  done
  for ns in "$S" "$R" "$D"; do
    ip netns del "$ns" 2>/dev/null || true
  done
  if [ -n "$KEEP" ]; then mkdir -p "$KEEP" && cp -r "$WORK"/. "$KEEP"/ || true; fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

step() { echo "+ $*" >&2; }
in_ns() { local ns="$1"; shift; ip netns exec "$ns" "$@"; }

step "namespaces $S $R $D, bottleneck tbf $RATE latency $LATENCY on $R -> $D"
ip netns add "$S"; ip netns add "$R"; ip netns add "$D"
ip link add "s$ID" type veth peer name "rs$ID"
ip link add "d$ID" type veth peer name "rd$ID"
ip link set "s$ID" netns "$S"; ip link set "rs$ID" netns "$R"
ip link set "d$ID" netns "$D"; ip link set "rd$ID" netns "$R"
in_ns "$S" ip addr add 10.200.1.1/24 dev "s$ID"
in_ns "$R" ip addr add 10.200.1.254/24 dev "rs$ID"
in_ns "$R" ip addr add 10.200.2.254/24 dev "rd$ID"
in_ns "$D" ip addr add 10.200.2.2/24 dev "d$ID"
for ns in "$S" "$R" "$D"; do in_ns "$ns" ip link set lo up; done
in_ns "$S" ip link set "s$ID" up; in_ns "$R" ip link set "rs$ID" up
in_ns "$R" ip link set "rd$ID" up; in_ns "$D" ip link set "d$ID" up
in_ns "$S" ip route add default via 10.200.1.254
in_ns "$D" ip route add default via 10.200.2.254
in_ns "$R" sysctl -qw net.ipv4.ip_forward=1
# veth offloads would hand tbf 64 kB super-packets; the bottleneck must see real packets.
for pair in "$S s$ID" "$R rs$ID" "$R rd$ID" "$D d$ID"; do
  set -- $pair
  in_ns "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1 || true
done
in_ns "$R" tc qdisc add dev "rd$ID" root tbf rate "$RATE" burst 15k latency "$LATENCY"

RATE_BPS=$(python3 -c '
import re,sys
m=re.fullmatch(r"([0-9.]+)([kmg]?)(bit|bps)?", sys.argv[1].lower())
if not m: sys.exit(1)
v=float(m.group(1))*{"":1,"k":1e3,"m":1e6,"g":1e9}[m.group(2)]
print(v*8 if m.group(3)=="bps" else v)' "$RATE") || { echo "testbed.sh: --rate '$RATE' not understood (use e.g. 10mbit)" >&2; exit 2; }

qdisc_counters() { # sent_bytes sent_pkts dropped
  in_ns "$R" tc -s qdisc show dev "rd$ID" | python3 -c '
import re,sys
t=sys.stdin.read()
m=re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", t)
print(m.group(1), m.group(2), m.group(3))'
}

start_recv() { # name port -> pid in PIDS, output WORK/name.recv.json
  in_ns "$D" "$BIN" recv --listen "10.200.2.2:$2" --json --quiet --idle-timeout 5 \
    --name "$1" >"$WORK/$1.recv.json" 2>"$WORK/$1.recv.err" &
  PIDS+=($!)
}
start_send() { # name port
  # shellcheck disable=SC2086
  in_ns "$S" "$BIN" send --to "10.200.2.2:$2" --duration "$DURATION" --json --quiet \
    --name "$1" --log "$WORK/$1.log.jsonl" $SEND_ARGS >"$WORK/$1.send.json" 2>"$WORK/$1.send.err" &
  PIDS+=($!)
}
start_iperf() { # name cc
  in_ns "$D" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
  PIDS+=($!)
  sleep 0.3
  in_ns "$S" iperf3 -c 10.200.2.2 -p 5201 -C "$2" -t "$DURATION" -J >"$WORK/$1.iperf.json" 2>"$WORK/$1.iperf.err" &
  PIDS+=($!)
}
wait_all() {
  local ok=0
  for p in "${PIDS[@]}"; do
    wait "$p" || ok=1
  done
  PIDS=()
  return $ok
}

run_case() { # case-name flows...
  local name="$1"; shift
  step "case $name: $* ($DURATION s)"
  read -r b0 p0 d0 < <(qdisc_counters)
  local port=7000
  for f in "$@"; do
    case "$f" in
      tfrc*) start_recv "$name.$f" "$port"; port=$((port + 1)) ;;
    esac
  done
  sleep 0.3
  port=7000
  for f in "$@"; do
    case "$f" in
      tfrc*) start_send "$name.$f" "$port"; port=$((port + 1)) ;;
      reno|cubic) start_iperf "$name.$f" "$f" ;;
    esac
  done
  if ! wait_all; then
    echo "testbed.sh: case $name: a flow failed" >&2
    tail -n 5 "$WORK"/"$name".*.err >&2 || true
    exit 1
  fi
  read -r b1 p1 d1 < <(qdisc_counters)
  echo "$name $((b1 - b0)) $((p1 - p0)) $((d1 - d0))" >>"$WORK/qdisc.txt"
}

run_case a tfrc
run_case b tfrc reno
run_case c tfrc cubic
run_case d tfrc1 tfrc2

python3 - "$WORK" "$DURATION" "$RATE_BPS" "$JSON" <<'PY'
import glob, json, os, sys
work, dur, rate, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
q = {}
for line in open(os.path.join(work, "qdisc.txt")):
    n, b, p, d = line.split()
    q[n] = (int(b), int(p), int(d))
def tfrc(name):
    s = json.load(open(os.path.join(work, name + ".send.json")))
    f = s["flows"][0]
    f["hops"] = s["sender"].get("hops")
    f["nofeedback_expiries"] = s["sender"]["nofeedback_expiries"]
    f["rtt_s"] = s["sender"]["rtt_s"]
    f["p"] = s["sender"]["p"]
    return f
def tcp(name):
    j = json.load(open(os.path.join(work, name + ".iperf.json")))
    e = j["end"]
    return {"name": name, "kind": "tcp", "goodput_bps": e["sum_received"]["bits_per_second"],
            "retransmits": e["sum_sent"].get("retransmits"),
            "cc": e.get("sender_tcp_congestion")}
res = {"duration_s": dur, "bottleneck_bps": rate, "cases": {}}
for c, flows in [("a", ["tfrc"]), ("b", ["tfrc", "reno"]), ("c", ["tfrc", "cubic"]), ("d", ["tfrc1", "tfrc2"])]:
    fl = [tfrc(f"{c}.{f}") if f.startswith("tfrc") else tcp(f"{c}.{f}") for f in flows]
    b, p, d = q[c]
    case = {"flows": fl, "bottleneck_utilisation": b * 8 / (rate * dur),
            "bottleneck_loss": d / (p + d) if p + d else 0.0}
    tcps = [f for f in fl if f["kind"] == "tcp"]
    if tcps:
        case["tfrc_tcp_ratio"] = fl[0]["goodput_bps"] / tcps[0]["goodput_bps"] if tcps[0]["goodput_bps"] else None
    if c == "d":
        g = [f["goodput_bps"] for f in fl]
        case["jain"] = sum(g) ** 2 / (len(g) * sum(x * x for x in g)) if any(g) else None
    res["cases"][c] = case
a = res["cases"]["a"]
# TFRC alone: its own throughput (IP bytes) over the bottleneck rate, and its loss rate.
a["tfrc_utilisation"] = a["flows"][0]["throughput_bps"] / rate
targets = {
    "a: TFRC alone uses >= 85% of the bottleneck": a["tfrc_utilisation"] >= 0.85,
    "a: TFRC alone loses < 5%": a["flows"][0]["loss_rate"] < 0.05,
    "b: TFRC/TCP Reno in [0.5, 2]": res["cases"]["b"].get("tfrc_tcp_ratio") is not None
        and 0.5 <= res["cases"]["b"]["tfrc_tcp_ratio"] <= 2.0,
}
res["targets"] = targets
print(f"bottleneck {rate/1e6:g} Mb/s, {dur:g} s per case (throughput: IP bytes; goodput: payload)")
print(f"{'case':4} {'flow':10} {'kind':5} {'thr Mb/s':>9} {'good Mb/s':>9} {'loss':>7} {'RTT ms':>7} {'hops':>4}  notes")
for c, case in res["cases"].items():
    for f in case["flows"]:
        if f["kind"] == "tfrc":
            rtt = f"{f['rtt_s']*1e3:.1f}" if f.get("rtt_s") else "-"
            print(f"{c:4} {f['name']:10} tfrc  {f['throughput_bps']/1e6:9.3f} {f['goodput_bps']/1e6:9.3f} {f['loss_rate']:7.4f} {rtt:>7} {str(f.get('hops')):>4}  p={f['p']:.5f} nofeedback={f['nofeedback_expiries']}")
        else:
            print(f"{c:4} {f['name']:10} tcp   {'':9} {f['goodput_bps']/1e6:9.3f} {'':7} {'':7} {'':4}  {f['cc']} retransmits={f['retransmits']}")
    extra = ""
    if "tfrc_tcp_ratio" in case and case["tfrc_tcp_ratio"] is not None:
        extra += f"  TFRC/TCP goodput ratio {case['tfrc_tcp_ratio']:.2f}"
    if case.get("jain") is not None:
        extra += f"  Jain {case['jain']:.3f}"
    print(f"{c:4} bottleneck utilisation {case['bottleneck_utilisation']:.3f}, loss {case['bottleneck_loss']:.4f}{extra}")
print(f"a    TFRC utilisation {a['tfrc_utilisation']:.3f}")
for k, v in targets.items():
    print(f"TARGET {'PASS' if v else 'MISS'}  {k}")
if out:
    json.dump(res, open(out, "w"), indent=2)
sys.exit(0 if all(targets.values()) else 3)
PY
