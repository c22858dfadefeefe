set ns [new Simulator]
set tf [open out.tr w]
$ns trace-all $tf
set n0 [$ns node]
set n1 [$ns node]
$ns duplex-link $n0 $n1 100Mb [lindex $argv 2]ms DropTail
$ns queue-limit $n0 $n1 10000
set em [new ErrorModel/Periodic]
$em set period_ [lindex $argv 0]
$em set offset_ 0
$em unit pkt
$ns lossmodel $em $n0 $n1
set tfrc [new Agent/TFRC]
set sink [new Agent/TFRCSink]
$ns attach-agent $n0 $tfrc
$ns attach-agent $n1 $sink
$ns connect $tfrc $sink
$ns at 0.0 "$tfrc start"
$ns at [lindex $argv 1] "finish"
proc finish {} { global ns tf; $ns flush-trace; close $tf; exit 0 }
$ns run
