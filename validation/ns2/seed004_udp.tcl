# Seed 004 case 2: two UDP CBR flows (210-byte packets) over the 10-node multi-bottleneck
# topology of docs/ns2-reference.md §8, 100 s, both starting at 0.
# Usage: ns seed004_udp.tcl <rate_mbps> [trace] [all|some] [duration_s]
#   trace: a file name, or "-" for stdout. Only the first link (n0->n2, n1->n2) and the last
#   link (n7->n8, n7->n9) of each flow are traced, which is all the metrics need; with "all",
#   every link is (trace-all). duration_s defaults to 100.
set rate [lindex $argv 0]
set tr [lindex $argv 1]
set all [lindex $argv 2]
set dur [lindex $argv 3]
if {$dur == ""} { set dur 100.0 }
set ns [new Simulator]
if {$tr != "" && $all == "all"} {
    if {$tr == "-"} { set f stdout } else { set f [open $tr w] }
    $ns trace-all $f
}
for {set i 0} {$i < 10} {incr i} { set n($i) [$ns node] }
foreach {a b bw} {0 2 5Mb 1 2 5Mb 2 3 5Mb 3 4 4Mb 4 5 10Mb 5 6 2Mb 6 7 5Mb 7 8 5Mb 7 9 5Mb} {
    $ns duplex-link $n($a) $n($b) $bw 10ms DropTail
}
if {$tr != "" && $all != "all"} {
    if {$tr == "-"} { set f stdout } else { set f [open $tr w] }
    foreach {a b} {0 2 1 2 7 8 7 9} { $ns trace-queue $n($a) $n($b) $f }
}
foreach {fid s d} {1 0 8 2 1 9} {
    set udp($fid) [new Agent/UDP]
    $udp($fid) set fid_ $fid
    $ns attach-agent $n($s) $udp($fid)
    set sink($fid) [new Agent/Null]
    $ns attach-agent $n($d) $sink($fid)
    $ns connect $udp($fid) $sink($fid)
    set cbr($fid) [new Application/Traffic/CBR]
    $cbr($fid) set packetSize_ 210
    $cbr($fid) set rate_ ${rate}Mb
    $cbr($fid) attach-agent $udp($fid)
    $ns at 0.0 "$cbr($fid) start"
    $ns at $dur "$cbr($fid) stop"
}
proc finish {} {
    global f tr
    if {$tr != "" && $tr != "-"} { close $f }
    exit 0
}
$ns at $dur "finish"
$ns run
