# Seed 004 case 1: two FTP/TCP flows (n0->n8, n1->n9) over the 10-node multi-bottleneck topology
# of docs/ns2-reference.md §8, 100 s, packetSize_ 1000, NS-2 defaults otherwise.
# Usage: ns tcp_seed004.tcl <window> <variant> <trace> [probe]
#   variant: TCP (NS-2's default Agent/TCP, Tahoe), Reno or Newreno.
#   trace: a file name or "-" for stdout; the first and last link of each flow are traced
#     (n0->n2, n1->n2, n7->n8, n7->n9, both directions).
#   probe: print the first uniform draws NS-2's default RNG would give when `$ns run` resets
#     the agents (each TCP draws its boot_time_ = tcpTick_ * u there), then exit.
set window [lindex $argv 0]
set variant [lindex $argv 1]
set tr [lindex $argv 2]
set probe [expr {[llength $argv] > 3}]
set ns [new Simulator]
for {set i 0} {$i < 10} {incr i} { set n($i) [$ns node] }
foreach {a b bw} {0 2 5Mb 1 2 5Mb 2 3 5Mb 3 4 4Mb 4 5 10Mb 5 6 2Mb 6 7 5Mb 7 8 5Mb 7 9 5Mb} {
    $ns duplex-link $n($a) $n($b) $bw 10ms DropTail
}
if {!$probe} {
    if {$tr == "-"} { set f stdout } else { set f [open $tr w] }
    foreach {a b} {0 2 1 2 7 8 7 9} {
        $ns trace-queue $n($a) $n($b) $f
        $ns trace-queue $n($b) $n($a) $f
    }
}
foreach {fid s d} {1 0 8 2 1 9} {
    if {$variant == "TCP"} {
        set tcp($fid) [new Agent/TCP]
    } else {
        set tcp($fid) [new Agent/TCP/$variant]
    }
    $tcp($fid) set fid_ $fid
    $tcp($fid) set window_ $window
    $tcp($fid) set packetSize_ 1000
    $ns attach-agent $n($s) $tcp($fid)
    set sink($fid) [new Agent/TCPSink]
    $ns attach-agent $n($d) $sink($fid)
    $ns connect $tcp($fid) $sink($fid)
    set ftp($fid) [new Application/FTP]
    $ftp($fid) attach-agent $tcp($fid)
    $ns at 0.0 "$ftp($fid) start"
    $ns at 100.0 "$ftp($fid) stop"
}
if {$probe} {
    global defaultRNG
    puts "[$defaultRNG uniform 0 1] [$defaultRNG uniform 0 1]"
    exit 0
}
proc finish {} {
    global f tr
    if {$tr != "-"} { close $f }
    exit 0
}
$ns at 100.0 "finish"
$ns run
