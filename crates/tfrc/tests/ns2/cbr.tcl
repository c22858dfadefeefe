# Usage: ns cbr.tcl <cbr kb/s> <bw Mb/s> <delay ms> <qlim> <seconds>
set ns [new Simulator]
set tf [open out.tr w]
$ns trace-all $tf
set n0 [$ns node]
set n1 [$ns node]
$ns duplex-link $n0 $n1 [lindex $argv 1]Mb [lindex $argv 2]ms DropTail
$ns queue-limit $n0 $n1 [lindex $argv 3]
set tfrc [new Agent/TFRC]
$tfrc set SndrType_ 1
set sink [new Agent/TFRCSink]
$ns attach-agent $n0 $tfrc
$ns attach-agent $n1 $sink
$ns connect $tfrc $sink
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ 1000
$cbr set rate_ [lindex $argv 0]kb
$cbr attach-agent $tfrc
$ns at 0.0 "$cbr start"
$ns at [lindex $argv 4] "finish"
proc finish {} { global ns tf; $ns flush-trace; close $tf; exit 0 }
$ns run
