#!/usr/bin/env bash
# TFRC over real UDP on a Linux testbed (issue 8): three network namespaces
#
#   snd (10.200.1.1) --veth-- rtr --veth-- (10.200.2.2) rcv
#
# with a tbf bottleneck on the router's egress towards rcv (RATE, a LATENCY cap on the queue,
# a BURST-byte bucket), or with --bottleneck sender on the sender's own veth (what an operator
# who shapes a server's uplink has: the sender's host drops and refuses datagrams itself),
# and a user-space delay line in the router (DELAY ms each way; there is
# no netem here), so data cross one router (hops 1). Cases, DURATION seconds each:
#   a) TFRC alone            b) TFRC + one TCP Reno flow (iperf3 -C reno)
#   c) TFRC + one TCP CUBIC  d) two TFRC flows (one receiver serves both)
# All flows of a case start together. Prints throughputs, the TFRC/TCP ratio, bottleneck
# utilisation and loss (from the qdisc's counters, also sampled every 100 ms), checks the
# targets, and cleans up (flows, delay line, namespaces) even when a step fails.
#
# usage: scripts/testbed.sh [--short] [--duration S] [--rate 10mbit] [--latency 100ms]
#          [--burst BYTES] [--delay MS] [--segment-size B] [--cases abcd] [--id ID]
#          [--json FILE] [--send-args "ARGS"] [--bin PATH] [--keep DIR]
#          [--bottleneck router|sender]
# --short: 10-s cases. --burst: tbf bucket (default 3028 B: two 1514-B frames; 20000 B with
#   --bottleneck sender, issue 16's shaped uplink). --bottleneck: where the tbf is (default
#   router). --delay:
#   one-way propagation delay (default 10 ms; 0: none). --segment-size: TFRC's s (default
#   1424 B, so its IP packets are 1500 B like TCP's). --cases: which cases, in order; a case may
#   repeat ("aabb": a, a2, b, b2). --id: namespaces are tb<ID>s/r/d (default: the PID).
#   --send-args: extra `tfrclab send` flags, e.g. "--header-rtt latest". docs/real-network.md
#   explains every default.
# Needs root, iproute2 (ip, tc), iperf3 and python3. Exit: 0 all targets met, 3 a target
# missed, 1 a step failed, 2 bad usage.
set -euo pipefail

DURATION=30
RATE=10mbit
LATENCY=100ms
BURST=""
BOTTLENECK=router
DELAY=10
SEGMENT=1424
CASES=abcd
ID=$$
JSON=""
SEND_ARGS=""
BIN="${TFRCLAB:-}"
KEEP=""

usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --short) DURATION=10 ;;
    --duration) DURATION="${2:?--duration needs seconds}"; shift ;;
    --rate) RATE="${2:?--rate needs a tc rate}"; shift ;;
    --latency) LATENCY="${2:?--latency needs a tc time}"; shift ;;
    --burst) BURST="${2:?--burst needs bytes}"; shift ;;
    --bottleneck) BOTTLENECK="${2:?--bottleneck needs router or sender}"; shift ;;
    --delay) DELAY="${2:?--delay needs milliseconds}"; shift ;;
    --segment-size) SEGMENT="${2:?--segment-size needs bytes}"; shift ;;
    --cases) CASES="${2:?--cases needs letters from abcd}"; shift ;;
    --id) ID="${2:?--id needs an identifier}"; shift ;;
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
case "$BOTTLENECK" in router|sender) ;; *) echo "testbed.sh: --bottleneck '$BOTTLENECK' must be router or sender" >&2; exit 2 ;; esac
if [ -z "$BURST" ]; then
  if [ "$BOTTLENECK" = sender ]; then BURST=20000; else BURST=3028; fi
fi
case "$BURST" in ''|*[!0-9]*) echo "testbed.sh: --burst '$BURST' is not a number of bytes" >&2; exit 2 ;; esac
case "$SEGMENT" in ''|*[!0-9]*) echo "testbed.sh: --segment-size '$SEGMENT' is not a number of bytes" >&2; exit 2 ;; esac
case "$DELAY" in ''|*[!0-9]*) echo "testbed.sh: --delay '$DELAY' is not a whole number of milliseconds" >&2; exit 2 ;; esac
case "$CASES" in ''|*[!abcd]*) echo "testbed.sh: --cases '$CASES' must be letters from abcd" >&2; exit 2 ;; esac
# Interface names are at most 15 bytes: "rs" + ID.
case "$ID" in ''|*[!0-9A-Za-z]*) echo "testbed.sh: --id '$ID' must be letters and digits" >&2; exit 2 ;; esac
[ ${#ID} -le 12 ] || { echo "testbed.sh: --id '$ID' is longer than 12 characters" >&2; exit 2; }
if [ -z "$BIN" ]; then
  BIN="${CARGO_TARGET_DIR:-$(cd "$(dirname "$0")/.." && pwd)/target}/release/tfrclab"
fi
[ -x "$BIN" ] || { echo "testbed.sh: tfrclab binary '$BIN' not found (build it, or pass --bin / TFRCLAB)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "testbed.sh: needs root (network namespaces)" >&2; exit 2; }
for t in ip tc iperf3 python3; do
  command -v "$t" >/dev/null || { echo "testbed.sh: '$t' is not installed" >&2; exit 2; }
done

S="tb${ID}s"; R="tb${ID}r"; D="tb${ID}d"
for ns in "$S" "$R" "$D"; do
  if ip netns list | awk '{print $1}' | grep -qx "$ns"; then
    echo "testbed.sh: namespace $ns exists already (another run with --id $ID?)" >&2; exit 2
  fi
done
WORK="$(mktemp -d /tmp/testbed.XXXXXX)"
PIDS=()
SAMPLER=""
DELAYLINE=""

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null || true
  [ -n "$DELAYLINE" ] && kill "$DELAYLINE" 2>/dev/null || true
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null || true
  done
  # Anything still running inside our namespaces was started by this script.
  for ns in "$S" "$R" "$D"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
  done
  for p in "${PIDS[@]:-}" $SAMPLER $DELAYLINE; do
    [ -n "$p" ] && wait "$p" 2>/dev/null || true
  done
  for ns in "$S" "$R" "$D"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
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

# The bottleneck qdisc: namespace and device.
if [ "$BOTTLENECK" = sender ]; then QNS="$S"; QDEV="s$ID"; else QNS="$R"; QDEV="rd$ID"; fi
step "namespaces $S $R $D, bottleneck tbf $RATE burst $BURST latency $LATENCY on $QNS $QDEV"
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
# The bucket holds BURST bytes: two full-size packets (TFRC at the default s: 1424 + 36 + 12 + 28 B; TCP:
# 1500 B). A real 10 Mb/s link serialises every packet; a bucket of many packets lets a
# burst through at veth speed, so that receive rates measured over one short RTT read
# several times the bottleneck (docs/real-network.md, "tbf burst").
in_ns "$QNS" tc qdisc add dev "$QDEV" root tbf rate "$RATE" burst "$BURST" latency "$LATENCY"

# Propagation delay (there is no netem here): every packet the router forwards, in both
# directions, first goes through a tun device to a user-space delay line that holds it DELAY ms
# (FIFO, so no reordering) and hands it back to the router, which forwards it to its
# destination (data: into the tbf). The delay line runs with SCHED_FIFO priority so that the
# machine's load does not add to the delay; it restores the TTL it cost, so data still cross
# one hop.
if [ "$DELAY" -gt 0 ]; then
  step "delay line: $DELAY ms each way (RTT $((2 * DELAY)) ms plus queueing)"
  cat >"$WORK/delayline.py" <<'DL'
import collections, fcntl, os, select, struct, sys, time
name, delay = sys.argv[1], float(sys.argv[2]) / 1000.0
TUNSETIFF, IFF_TUN, IFF_NO_PI = 0x400454CA, 0x0001, 0x1000
fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
except OSError:
    pass
q = collections.deque()
clock = time.monotonic
def restore_ttl(p):
    # Forwarding into the tun cost one TTL; the delay line is a wire, not a hop (RFC 1624
    # incremental checksum update).
    if len(p) < 20 or p[0] >> 4 != 4:
        return p
    b = bytearray(p)
    old = (b[8] << 8) | b[9]
    b[8] = min(255, b[8] + 1)
    c = (~((b[10] << 8) | b[11]) & 0xFFFF) + (~old & 0xFFFF) + ((b[8] << 8) | b[9])
    c = (c & 0xFFFF) + (c >> 16)
    c = (c & 0xFFFF) + (c >> 16)
    b[10], b[11] = (~c & 0xFFFF) >> 8, ~c & 0xFF
    return bytes(b)
print("ready", flush=True)
while True:
    now = clock()
    while q and q[0][0] <= now:
        try:
            os.write(fd, q.popleft()[1])
        except OSError:
            pass
    timeout = max(0.0, q[0][0] - clock()) if q else None
    if select.select([fd], [], [], timeout)[0]:
        t = clock()
        while True:
            try:
                p = os.read(fd, 65536)
            except BlockingIOError:
                break
            q.append((t + delay, restore_ttl(p)))
DL
  in_ns "$R" ip tuntap add dev "tl$ID" mode tun
  in_ns "$R" ip link set "tl$ID" up
  for c in all default "tl$ID" "rs$ID" "rd$ID"; do in_ns "$R" sysctl -qw "net.ipv4.conf.$c.rp_filter=0"; done
  in_ns "$R" ip route add default dev "tl$ID" table 100
  in_ns "$R" ip rule add iif "rs$ID" lookup 100
  in_ns "$R" ip rule add iif "rd$ID" lookup 100
  ip netns exec "$R" python3 "$WORK/delayline.py" "tl$ID" "$DELAY" >"$WORK/delayline.out" 2>"$WORK/delayline.err" &
  DELAYLINE=$!
  for _ in $(seq 50); do grep -q ready "$WORK/delayline.out" 2>/dev/null && break; sleep 0.1; done
  grep -q ready "$WORK/delayline.out" || { echo "testbed.sh: the delay line did not start: $(cat "$WORK/delayline.err")" >&2; exit 1; }
fi

RATE_BPS=$(python3 -c '
import re,sys
m=re.fullmatch(r"([0-9.]+)([kmg]?)(bit|bps)?", sys.argv[1].lower())
if not m: sys.exit(1)
v=float(m.group(1))*{"":1,"k":1e3,"m":1e6,"g":1e9}[m.group(2)]
print(v*8 if m.group(3)=="bps" else v)' "$RATE") || { echo "testbed.sh: --rate '$RATE' not understood (use e.g. 10mbit)" >&2; exit 2; }

qdisc_counters() { # sent_bytes sent_pkts dropped
  in_ns "$QNS" tc -s qdisc show dev "$QDEV" | python3 -c '
import re,sys
t=sys.stdin.read()
m=re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", t)
print(m.group(1), m.group(2), m.group(3))'
}

# The bottleneck's counters every 100 ms (milliseconds since the case started, then tc's
# output): where in time the losses happen.
start_sampler() { # name
  local out="$WORK/$1.qdisc.tsv"
  (
    t0=$(date +%s%N)
    while :; do
      l=$(ip netns exec "$QNS" tc -s qdisc show dev "$QDEV" 2>/dev/null | tr '\n' ' ') || exit 0
      echo "$(( ($(date +%s%N) - t0) / 1000000 )) $l" >>"$out"
      sleep 0.1
    done
  ) &
  SAMPLER=$!
}
stop_sampler() {
  [ -n "$SAMPLER" ] && { kill "$SAMPLER" 2>/dev/null || true; wait "$SAMPLER" 2>/dev/null || true; }
  SAMPLER=""
}

# Every flow's ends (TFRC sender and receiver, iperf3 client and server) run at the same raised
# priority, so that other work on the machine (builds) does not starve one flow's process more
# than another's: the testbed compares congestion controls, not CPU shares. A TFRC sender paces
# in user space and loses the send times it is descheduled for; TCP is paced by the kernel.
NICE=-10
# Background flows are started with `ip netns exec` directly (it execs the program), so that
# $! is the flow itself and `kill` reaches it.
start_recv() { # name port sessions -> pid in PIDS, output WORK/name.recv.json
  # One receiver serves every TFRC flow of a case (issue 16: concurrent sessions).
  ip netns exec "$D" nice -n "$NICE" "$BIN" recv --listen "10.200.2.2:$2" --json --quiet --idle-timeout 5 \
    --sessions "$3" --name "$1" >"$WORK/$1.recv.json" 2>"$WORK/$1.recv.err" &
  PIDS+=($!)
}
start_send() { # name port
  # shellcheck disable=SC2086
  ip netns exec "$S" nice -n "$NICE" "$BIN" send --to "10.200.2.2:$2" --duration "$DURATION" --json --quiet \
    --segment-size "$SEGMENT" --name "$1" --log "$WORK/$1.log.jsonl" $SEND_ARGS >"$WORK/$1.send.json" 2>"$WORK/$1.send.err" &
  PIDS+=($!)
}
start_iperf_server() { # name
  ip netns exec "$D" nice -n "$NICE" iperf3 -s -1 -p 5201 -J >"$WORK/$1.iperfs.json" 2>/dev/null &
  PIDS+=($!)
}
start_iperf_client() { # name cc
  ip netns exec "$S" nice -n "$NICE" iperf3 -c 10.200.2.2 -p 5201 -C "$2" -t "$DURATION" -J >"$WORK/$1.iperf.json" 2>"$WORK/$1.iperf.err" &
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

run_case() { # instance-name flows...
  local name="$1"; shift
  step "case $name: $* ($DURATION s)"
  read -r b0 p0 d0 < <(qdisc_counters)
  # Receiving ends first; then every flow starts at the same moment, so that no flow finds the
  # path already full when it starts.
  local ntfrc=0
  for f in "$@"; do
    case "$f" in
      tfrc*) ntfrc=$((ntfrc + 1)) ;;
      reno|cubic) start_iperf_server "$name.$f" ;;
    esac
  done
  [ "$ntfrc" -gt 0 ] && start_recv "$name.recv" 7000 "$ntfrc"
  sleep 0.3
  start_sampler "$name"
  for f in "$@"; do
    case "$f" in
      tfrc*) start_send "$name.$f" 7000 ;;
      reno|cubic) start_iperf_client "$name.$f" "$f" ;;
    esac
  done
  if ! wait_all; then
    echo "testbed.sh: case $name: a flow failed" >&2
    tail -n 5 "$WORK"/"$name".*.err >&2 || true
    exit 1
  fi
  stop_sampler
  read -r b1 p1 d1 < <(qdisc_counters)
  echo "$name $((b1 - b0)) $((p1 - p0)) $((d1 - d0))" >>"$WORK/qdisc.txt"
}

# Instances: the first run of case a is "a", a second "a2", and so on.
INSTANCES=""
for ((i = 0; i < ${#CASES}; i++)); do
  c="${CASES:i:1}"
  n=$(( $(printf '%s' "${CASES:0:i}" | tr -cd "$c" | wc -c) + 1 ))
  inst="$c"; [ "$n" -gt 1 ] && inst="$c$n"
  case "$c" in
    a) run_case "$inst" tfrc ;;
    b) run_case "$inst" tfrc reno ;;
    c) run_case "$inst" tfrc cubic ;;
    d) run_case "$inst" tfrc1 tfrc2 ;;
  esac
  INSTANCES="$INSTANCES $inst"
done

python3 - "$WORK" "$DURATION" "$RATE_BPS" "$JSON" "$INSTANCES" "$BURST" "$LATENCY" "$SEND_ARGS" "$DELAY" "$BOTTLENECK" <<'PY'
import json, os, re, sys
work, dur, rate, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
instances, burst, latency, send_args = sys.argv[5].split(), int(sys.argv[6]), sys.argv[7], sys.argv[8]
delay_ms, bottleneck = int(sys.argv[9]), sys.argv[10]
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
    f["send_errors"] = s["sender"]["send_errors"]
    f["send_blocked"] = s["sender"].get("send_blocked", 0)
    f["local_drops"] = s["sender"].get("local_drops", 0)
    return f
def tcp(name):
    j = json.load(open(os.path.join(work, name + ".iperf.json")))
    e = j["end"]
    return {"name": name, "kind": "tcp", "goodput_bps": e["sum_received"]["bits_per_second"],
            "retransmits": e["sum_sent"].get("retransmits"),
            "cc": e.get("sender_tcp_congestion")}
# The settled share: each flow's goodput over [STEADY_FROM, end] of the case, after the two
# start-ups have collided and TFRC's loss history has forgotten the collision (about 10 s).
STEADY_FROM = min(10.0, dur / 3.0)
def steady(inst, tfrc_flow, tcp_flow):
    try:
        log = [json.loads(l) for l in open(os.path.join(work, f"{inst}.{tfrc_flow}.log.jsonl"))]
        srv = json.load(open(os.path.join(work, f"{inst}.{tcp_flow}.iperfs.json")))
        sent = json.load(open(os.path.join(work, f"{inst}.{tfrc_flow}.send.json")))
    except (OSError, ValueError):
        return None
    def sent_at(t):
        b = 0
        for l in log:
            if l["t_s"] <= t:
                b = l["payload_bytes_sent"]
        return b
    end = max((l["t_s"] for l in log), default=0.0)
    if end <= STEADY_FROM:
        return None
    # TFRC: payload sent in the window, less its loss rate over the whole case (the start-up's
    # losses included, so this counts TFRC slightly short).
    loss = sent["flows"][0]["loss_rate"]
    t_bytes = (sent_at(end) - sent_at(STEADY_FROM)) * (1.0 - loss)
    # TCP: what the iperf3 server received in its one-second intervals within the window.
    iv = [i["sum"] for i in srv.get("intervals", [])]
    r_bytes = sum(i["bytes"] for i in iv if i["start"] >= STEADY_FROM - 0.05 and i["end"] <= end + 0.05)
    r_span = sum(i["seconds"] for i in iv if i["start"] >= STEADY_FROM - 0.05 and i["end"] <= end + 0.05)
    if r_span <= 0 or r_bytes <= 0:
        return None
    t_rate = t_bytes * 8 / (end - STEADY_FROM)
    r_rate = r_bytes * 8 / r_span
    return {"from_s": STEADY_FROM, "tfrc_goodput_bps": t_rate, "tcp_goodput_bps": r_rate,
            "tfrc_tcp_ratio": t_rate / r_rate}
def timeline(inst):
    # Bottleneck drops in the first 2 s of the case and after them (from the 100-ms samples).
    rows = []
    try:
        for line in open(os.path.join(work, inst + ".qdisc.tsv")):
            t, _, rest = line.partition(" ")
            m = re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", rest)
            if m:
                rows.append((int(t) / 1000, int(m.group(2)), int(m.group(3))))
    except OSError:
        return None
    if len(rows) < 2:
        return None
    t0, p0, d0 = rows[0]
    mid = next((r for r in rows if r[0] >= t0 + 2.0), rows[-1])
    t1, p1, d1 = rows[-1]
    def rate(a, b):
        n = (b[1] - a[1]) + (b[2] - a[2])
        return (b[2] - a[2]) / n if n else 0.0
    return {"drops_first_2s": mid[2] - d0, "drops_after_2s": d1 - mid[2],
            "loss_first_2s": rate(rows[0], mid), "loss_after_2s": rate(mid, rows[-1])}
FLOWS = {"a": ["tfrc"], "b": ["tfrc", "reno"], "c": ["tfrc", "cubic"], "d": ["tfrc1", "tfrc2"]}
try:
    load = open("/proc/loadavg").read().split()[:3]
except OSError:
    load = None
res = {"duration_s": dur, "bottleneck": bottleneck, "bottleneck_bps": rate, "tbf_burst_bytes": burst, "delay_ms": delay_ms,
       "tbf_latency": latency, "send_args": send_args, "load_average": load, "cases": {}}
for inst in instances:
    c = inst[0]
    fl = [tfrc(f"{inst}.{f}") if f.startswith("tfrc") else tcp(f"{inst}.{f}") for f in FLOWS[c]]
    b, p, d = q[inst]
    case = {"case": c, "flows": fl, "bottleneck_utilisation": b * 8 / (rate * dur),
            "bottleneck_loss": d / (p + d) if p + d else 0.0, "timeline": timeline(inst)}
    tcps = [f for f in fl if f["kind"] == "tcp"]
    if tcps:
        case["tfrc_tcp_ratio"] = fl[0]["goodput_bps"] / tcps[0]["goodput_bps"] if tcps[0]["goodput_bps"] else None
        case["steady"] = steady(inst, FLOWS[c][0], FLOWS[c][1])
    if c == "a":
        # TFRC alone: its own throughput (IP bytes) over the bottleneck rate.
        case["tfrc_utilisation"] = fl[0]["throughput_bps"] / rate
    if c == "d":
        g = [f["goodput_bps"] for f in fl]
        case["jain"] = sum(g) ** 2 / (len(g) * sum(x * x for x in g)) if any(g) else None
    res["cases"][inst] = case
# Issue 8's targets. When a case ran more than once, its runs are pooled (sums of bytes,
# packets and goodputs): a single short case is dominated by how the start-ups collide.
targets = {}
pooled = {}
runs_a = [c for c in res["cases"].values() if c["case"] == "a"]
if runs_a:
    fa = [c["flows"][0] for c in runs_a]
    util = sum(f["throughput_bps"] for f in fa) / len(fa) / rate
    sent = sum(f["sent_packets"] for f in fa)
    loss = sum(f["dropped_packets"] for f in fa) / sent if sent else 1.0
    pooled["a"] = {"runs": len(fa), "tfrc_utilisation": util, "tfrc_loss": loss}
    n = f" ({len(fa)} runs pooled)" if len(fa) > 1 else ""
    targets[f"a: TFRC alone uses >= 85% of the bottleneck{n}"] = util >= 0.85
    targets[f"a: TFRC alone loses < 5%{n}"] = loss < 0.05
runs_b = [c for c in res["cases"].values() if c["case"] == "b"]
if runs_b:
    t = sum(c["flows"][0]["goodput_bps"] for c in runs_b)
    r = sum(c["flows"][1]["goodput_bps"] for c in runs_b)
    ratio = t / r if r else None
    pooled["b"] = {"runs": len(runs_b), "tfrc_tcp_ratio": ratio}
    # The target is the settled share (see STEADY_FROM) when every run has it.
    settled = all(c.get("steady") for c in runs_b)
    if settled:
        t = sum(c["steady"]["tfrc_goodput_bps"] for c in runs_b)
        r = sum(c["steady"]["tcp_goodput_bps"] for c in runs_b)
        ratio = t / r if r else None
        pooled["b"]["steady_tfrc_tcp_ratio"] = ratio
    n = f" ({len(runs_b)} runs pooled)" if len(runs_b) > 1 else ""
    w = f", from {STEADY_FROM:g} s" if settled else ""
    targets[f"b: TFRC/TCP Reno in [0.5, 2]{w}{n}"] = ratio is not None and 0.5 <= ratio <= 2.0
res["pooled"] = pooled
res["targets"] = targets
print(f"bottleneck {rate/1e6:g} Mb/s on the {bottleneck} (tbf burst {burst} B, latency {latency}), delay {delay_ms} ms each way, {dur:g} s per case "
      f"(throughput: IP bytes; goodput: payload); load average {' '.join(load or ['?'])}")
print(f"{'case':4} {'flow':10} {'kind':5} {'thr Mb/s':>9} {'good Mb/s':>9} {'loss':>7} {'RTT ms':>7} {'hops':>4}  notes")
for c, case in res["cases"].items():
    for f in case["flows"]:
        if f["kind"] == "tfrc":
            rtt = f"{f['rtt_s']*1e3:.1f}" if f.get("rtt_s") else "-"
            print(f"{c:4} {f['name']:10} tfrc  {f['throughput_bps']/1e6:9.3f} {f['goodput_bps']/1e6:9.3f} {f['loss_rate']:7.4f} {rtt:>7} {str(f.get('hops')):>4}  p={f['p']:.5f} nofeedback={f['nofeedback_expiries']} blocked={f['send_blocked']} local_drops={f['local_drops']}")
        else:
            print(f"{c:4} {f['name']:10} tcp   {'':9} {f['goodput_bps']/1e6:9.3f} {'':7} {'':7} {'':4}  {f['cc']} retransmits={f['retransmits']}")
    extra = ""
    if case.get("tfrc_utilisation") is not None:
        extra += f"  TFRC utilisation {case['tfrc_utilisation']:.3f}"
    if case.get("tfrc_tcp_ratio") is not None:
        extra += f"  TFRC/TCP goodput ratio {case['tfrc_tcp_ratio']:.2f}"
    if case.get("steady"):
        extra += f" (from {case['steady']['from_s']:g} s: {case['steady']['tfrc_tcp_ratio']:.2f})"
    if case.get("jain") is not None:
        extra += f"  Jain {case['jain']:.3f}"
    tl = case.get("timeline")
    if tl:
        extra += f"  drops first 2 s {tl['drops_first_2s']} ({tl['loss_first_2s']:.4f}), after {tl['drops_after_2s']} ({tl['loss_after_2s']:.4f})"
    print(f"{c:4} bottleneck utilisation {case['bottleneck_utilisation']:.3f}, loss {case['bottleneck_loss']:.4f}{extra}")
if pooled.get("a", {}).get("runs", 1) > 1:
    p = pooled["a"]
    print(f"a    pooled over {p['runs']} runs: TFRC utilisation {p['tfrc_utilisation']:.3f}, loss {p['tfrc_loss']:.4f}")
if pooled.get("b", {}).get("runs", 1) > 1 and pooled["b"]["tfrc_tcp_ratio"] is not None:
    print(f"b    pooled over {pooled['b']['runs']} runs: TFRC/TCP goodput ratio {pooled['b']['tfrc_tcp_ratio']:.2f}")
for k, v in targets.items():
    print(f"TARGET {'PASS' if v else 'MISS'}  {k}")
if out:
    json.dump(res, open(out, "w"), indent=2)
sys.exit(0 if all(targets.values()) else 3)
PY
