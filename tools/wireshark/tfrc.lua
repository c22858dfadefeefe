-- Wireshark / tshark dissector for tfrclab's TFRC wire format, version 2
-- (docs/wire-format.md): data packets (36-byte header, then the payload) and feedback
-- packets (44 bytes), over UDP.
--
-- Install: copy this one file into Wireshark's personal plugins folder
-- (Help > About Wireshark > Folders > Personal Lua Plugins, e.g. ~/.local/lib/wireshark/plugins/),
-- or load it for one run: tshark -X lua_script:tools/wireshark/tfrc.lua -r FILE.pcap
--
-- Which datagrams are TFRC: UDP port 5348 (what `tfrclab run --pcap` gives TFRC flows; the
-- preference "tfrc.port" changes it), and any other UDP datagram that looks like one
-- (heuristic: version 2, type 1 with at least 36 bytes or type 2 with exactly 44, reserved
-- flag bits zero). Datagrams of `tfrclab send`/`recv` start with the transport's 12-byte frame
-- header (magic 0xC5, kind, session id); its DATA and FEEDBACK bodies are dissected the same way.
--
-- Field names (for filters and `tshark -T fields -e`): tfrc.version, tfrc.type, tfrc.flags,
-- tfrc.urgent, tfrc.initial_ttl, tfrc.round, tfrc.seq, tfrc.timestamp_ns, tfrc.rtt_us,
-- tfrc.t_rto_us, tfrc.segment_size, tfrc.payload_len; feedback: tfrc.hops_present, tfrc.hops,
-- tfrc.t_delay_us, tfrc.t_recvdata_ns, tfrc.highest_seq, tfrc.x_recv, tfrc.p,
-- tfrc.link_errors; frame: tfrc.frame.kind, tfrc.frame.session.

local tfrc = Proto("tfrc", "TFRC (tfrclab wire format v2)")

local types = { [1] = "data", [2] = "feedback" }
local kinds = {
  [1] = "HELLO", [2] = "HELLO_ACK", [3] = "KEY", [4] = "KEY_ACK", [5] = "DATA",
  [6] = "FEEDBACK", [7] = "FIN", [8] = "FIN_ACK", [9] = "RETRY",
}

local f = tfrc.fields
f.version = ProtoField.uint8("tfrc.version", "Version", base.DEC)
f.type = ProtoField.uint8("tfrc.type", "Type", base.DEC, types)
f.flags = ProtoField.uint8("tfrc.flags", "Flags", base.HEX)
f.urgent = ProtoField.bool("tfrc.urgent", "Urgent", 8, nil, 0x01)
f.initial_ttl = ProtoField.uint8("tfrc.initial_ttl", "Initial TTL", base.DEC)
f.round = ProtoField.uint32("tfrc.round", "Feedback round", base.DEC)
f.seq = ProtoField.uint64("tfrc.seq", "Sequence number", base.DEC)
f.timestamp = ProtoField.uint64("tfrc.timestamp_ns", "Timestamp (ns)", base.DEC)
f.rtt = ProtoField.uint32("tfrc.rtt_us", "RTT estimate R (us)", base.DEC)
f.t_rto = ProtoField.uint32("tfrc.t_rto_us", "t_RTO (us)", base.DEC)
f.segment_size = ProtoField.uint32("tfrc.segment_size", "Segment size s (bytes)", base.DEC)
f.payload_len = ProtoField.uint32("tfrc.payload_len", "Payload length", base.DEC)
f.hops_present = ProtoField.bool("tfrc.hops_present", "Hops present", 8, nil, 0x01)
f.hops = ProtoField.uint8("tfrc.hops", "Hops", base.DEC)
f.t_delay = ProtoField.uint32("tfrc.t_delay_us", "t_delay (us)", base.DEC)
f.t_recvdata = ProtoField.uint64("tfrc.t_recvdata_ns", "t_recvdata (ns)", base.DEC)
f.highest_seq = ProtoField.uint64("tfrc.highest_seq", "Highest sequence number", base.DEC)
f.x_recv = ProtoField.double("tfrc.x_recv", "X_recv (bytes/s)")
f.p = ProtoField.double("tfrc.p", "Loss event rate p")
f.link_errors = ProtoField.uint32("tfrc.link_errors", "Link errors", base.DEC)
f.frame_kind = ProtoField.uint8("tfrc.frame.kind", "Frame kind", base.DEC, kinds)
f.frame_session = ProtoField.uint64("tfrc.frame.session", "Session id", base.HEX)

local DATA_LEN, FEEDBACK_LEN, FRAME_LEN = 36, 44, 12

tfrc.prefs.port = Pref.uint("UDP port", 5348, "TFRC datagrams on this UDP port (0: heuristic only)")

-- Is tvb[off..] a TFRC packet of the core's wire format?
local function looks_like(tvb, off)
  local n = tvb:len() - off
  if n < 2 or tvb(off, 1):uint() ~= 2 then return false end
  local t = tvb(off + 1, 1):uint()
  if t == 1 then return n >= DATA_LEN and bit.band(tvb(off + 2, 1):uint(), 0xfe) == 0 end
  if t == 2 then return n == FEEDBACK_LEN and bit.band(tvb(off + 2, 1):uint(), 0xfe) == 0 end
  return false
end

-- The core's packet at tvb[off..]; returns a one-line summary.
local function dissect_packet(tvb, off, tree)
  local t = tvb(off + 1, 1):uint()
  tree:add(f.version, tvb(off, 1))
  tree:add(f.type, tvb(off + 1, 1))
  if t == 1 then
    local flags = tree:add(f.flags, tvb(off + 2, 1))
    flags:add(f.urgent, tvb(off + 2, 1))
    tree:add(f.initial_ttl, tvb(off + 3, 1))
    tree:add(f.round, tvb(off + 4, 4))
    tree:add(f.seq, tvb(off + 8, 8))
    tree:add(f.timestamp, tvb(off + 16, 8))
    tree:add(f.rtt, tvb(off + 24, 4))
    tree:add(f.t_rto, tvb(off + 28, 4))
    tree:add(f.segment_size, tvb(off + 32, 4))
    local payload = tvb:reported_len() - off - DATA_LEN
    tree:add(f.payload_len, payload):set_generated()
    return string.format("Data seq=%s R=%dus s=%d", tvb(off + 8, 8):uint64(),
      tvb(off + 24, 4):uint(), tvb(off + 32, 4):uint())
  end
  local flags = tree:add(f.flags, tvb(off + 2, 1))
  flags:add(f.hops_present, tvb(off + 2, 1))
  tree:add(f.hops, tvb(off + 3, 1))
  tree:add(f.t_delay, tvb(off + 4, 4))
  tree:add(f.t_recvdata, tvb(off + 8, 8))
  tree:add(f.highest_seq, tvb(off + 16, 8))
  tree:add(f.x_recv, tvb(off + 24, 8))
  tree:add(f.p, tvb(off + 32, 8))
  tree:add(f.link_errors, tvb(off + 40, 4))
  return string.format("Feedback seq=%s X_recv=%.6g B/s p=%.6g", tvb(off + 16, 8):uint64(),
    tvb(off + 24, 8):float(), tvb(off + 32, 8):float())
end

-- tfrc-udp's frame: magic 0xC5, kind, two zero bytes, session id, body.
local function looks_like_frame(tvb)
  return tvb:len() >= FRAME_LEN and tvb(0, 1):uint() == 0xC5 and tvb(2, 2):uint() == 0
    and kinds[tvb(1, 1):uint()] ~= nil
end

local function dissect(tvb, pinfo, tree)
  local root = tree:add(tfrc, tvb())
  pinfo.cols.protocol = "TFRC"
  local off = 0
  if looks_like_frame(tvb) then
    root:add(f.frame_kind, tvb(1, 1))
    root:add(f.frame_session, tvb(4, 8))
    off = FRAME_LEN
    local kind = kinds[tvb(1, 1):uint()]
    if not looks_like(tvb, off) then
      pinfo.cols.info = kind
      return tvb:len()
    end
  end
  pinfo.cols.info = dissect_packet(tvb, off, root)
  return tvb:len()
end

function tfrc.dissector(tvb, pinfo, tree)
  if not (looks_like(tvb, 0) or looks_like_frame(tvb)) then return 0 end
  return dissect(tvb, pinfo, tree)
end

local function heuristic(tvb, pinfo, tree)
  if not looks_like(tvb, 0) and not looks_like_frame(tvb) then return false end
  dissect(tvb, pinfo, tree)
  return true
end

local port = 0
function tfrc.prefs_changed()
  local udp = DissectorTable.get("udp.port")
  if port ~= 0 then udp:remove(port, tfrc) end
  port = tfrc.prefs.port
  if port ~= 0 then udp:add(port, tfrc) end
end

DissectorTable.get("udp.port"):add(5348, tfrc)
port = 5348
tfrc:register_heuristic("udp", heuristic)
