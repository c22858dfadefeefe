# A single bottleneck for queue and loss-model agreement tests:
#   n0 --10Mb, 1ms-- n1 --1Mb, 10ms, <queue>-- n2
# CBR flows from n0 to n2 (fid 1, 2, ...); trace-all to stdout.
# Usage: ns bottleneck.tcl <DropTail|RED> <limit> <loss_p> <duration_s> <flow> [<flow> ...]
#   flow = size:rate_mbps:random (random 0 or 1 = CBR random_)
#   loss_p > 0 adds a Bernoulli ErrorModel on n1->n2 after the delay (link-lossmodel).
set qtype [lindex $argv 0]
set limit [lindex $argv 1]
set lossp [lindex $argv 2]
set dur [lindex $argv 3]
set flows [lrange $argv 4 end]
set ns [new Simulator]
$ns trace-all stdout
set n0 [$ns node]
set n1 [$ns node]
set n2 [$ns node]
$ns duplex-link $n0 $n1 10Mb 1ms DropTail
$ns duplex-link $n1 $n2 1Mb 10ms $qtype
$ns queue-limit $n1 $n2 $limit
$ns queue-limit $n0 $n1 1000
if {$lossp > 0} {
    set em [new ErrorModel]
    $em set rate_ $lossp
    $em unit pkt
    $em ranvar [new RandomVariable/Uniform]
    $em drop-target [new Agent/Null]
    $ns link-lossmodel $em $n1 $n2
}
set fid 0
foreach spec $flows {
    incr fid
    foreach {size rate rnd} [split $spec :] break
    set udp($fid) [new Agent/UDP]
    $udp($fid) set fid_ $fid
    $ns attach-agent $n0 $udp($fid)
    set sink($fid) [new Agent/Null]
    $ns attach-agent $n2 $sink($fid)
    $ns connect $udp($fid) $sink($fid)
    set cbr($fid) [new Application/Traffic/CBR]
    $cbr($fid) set packetSize_ $size
    $cbr($fid) set rate_ ${rate}Mb
    $cbr($fid) set random_ $rnd
    $cbr($fid) attach-agent $udp($fid)
    $ns at 0.0 "$cbr($fid) start"
}
$ns at $dur "exit 0"
$ns run
