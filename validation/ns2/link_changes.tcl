# Links that change during a run: one 1000-byte CBR flow (400 kb/s) over a 1 Mb/s, 100 ms
# link whose delay, bandwidth and queue limit are set while packets wait and propagate.
# netsim's crates/netsim/tests/link_changes.rs builds the same run; the trace-all output
# (on stdout) must be byte-identical.
# Usage: ns link_changes.tcl
set ns [new Simulator]
$ns trace-all stdout
set n0 [$ns node]
set n1 [$ns node]
$ns duplex-link $n0 $n1 1Mb 100ms DropTail
set udp [new Agent/UDP]
$ns attach-agent $n0 $udp
set null [new Agent/Null]
$ns attach-agent $n1 $null
$ns connect $udp $null
set cbr [new Application/Traffic/CBR]
$cbr attach-agent $udp
$cbr set packetSize_ 1000
$cbr set rate_ 400Kb
set l [$ns link $n0 $n1]
proc finish {} { global ns; $ns flush-trace; exit 0 }
$ns at 0.0 "$cbr start"
# A shorter delay while packets propagate: later packets overtake them.
$ns at 0.2 "[$l link] set delay_ 0.001"
# A tenth of the capacity: the queue fills; the packet on the wire keeps its rate.
$ns at 0.3 "[$l link] set bandwidth_ 100000"
# A smaller queue: waiting packets stay, arrivals are dropped until it drains below 5.
$ns at 0.5 "[$l queue] set limit_ 5"
# Capacity and delay back up: the queue drains.
$ns at 0.9 "[$l link] set bandwidth_ 2000000"
$ns at 0.9 "[$l link] set delay_ 0.05"
$ns at 1.5 "finish"
$ns run
