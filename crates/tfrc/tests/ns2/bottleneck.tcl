# Usage: ns bottleneck.tcl <bw Mb/s> <delay ms> <queue limit> <seconds>
set ns [new Simulator]
set tf [open out.tr w]
$ns trace-all $tf
set n0 [$ns node]
set n1 [$ns node]
$ns duplex-link $n0 $n1 [lindex $argv 0]Mb [lindex $argv 1]ms DropTail
$ns queue-limit $n0 $n1 [lindex $argv 2]
set tfrc [new Agent/TFRC]
set sink [new Agent/TFRCSink]
$ns attach-agent $n0 $tfrc
$ns attach-agent $n1 $sink
$ns connect $tfrc $sink
$ns at 0.0 "$tfrc start"
$ns at [lindex $argv 3] "finish"
proc finish {} { global ns tf; $ns flush-trace; close $tf; exit 0 }
$ns run
