# One FTP/TCP flow n0 -> n3 over n0 -10Mb/2ms- n1 -<bw>/<delay>- n2 -10Mb/2ms- n3, DropTail
# queues of 50 packets, NS-2 defaults otherwise (packetSize_ 1000).
# Usage: ns tcp_dumbbell.tcl <variant> <window> <duration> <loss> <bw> <delay> <sink> <trace>
#          [probe]
#   variant: TCP (NS-2's default Agent/TCP, Tahoe), Reno or Newreno.
#   loss: per-packet Bernoulli loss probability on the bottleneck n1->n2 (0: none), an
#     ErrorModel placed as link-lossmodel (after the propagation delay); or list:a,b,c to drop
#     the packets with those 0-based positions among those crossing it (ErrorModel/List).
#   bw, delay: the bottleneck n1-n2, e.g. 1.5Mb 20ms.
#   sink: TCPSink or TCPSink/DelAck.
#   trace: file name or "-" (trace-all).
#   probe: print the uniform draw NS-2's default RNG gives the agent's boot_time_
#     (tcpTick_ * u) when `$ns run` resets it, then exit.
set variant [lindex $argv 0]
set window [lindex $argv 1]
set duration [lindex $argv 2]
set loss [lindex $argv 3]
set bw [lindex $argv 4]
set delay [lindex $argv 5]
set sinktype [lindex $argv 6]
set tr [lindex $argv 7]
set probe [expr {[llength $argv] > 8}]
set ns [new Simulator]
if {!$probe} {
    # Before the links, which trace-all only covers when created after it.
    if {$tr == "-"} { set f stdout } else { set f [open $tr w] }
    $ns trace-all $f
}
for {set i 0} {$i < 4} {incr i} { set n($i) [$ns node] }
$ns duplex-link $n(0) $n(1) 10Mb 2ms DropTail
$ns duplex-link $n(1) $n(2) $bw $delay DropTail
$ns duplex-link $n(2) $n(3) 10Mb 2ms DropTail
$ns queue-limit $n(1) $n(2) 50
if {[string match list:* $loss]} {
    set em [new ErrorModel/List]
    $em droplist [split [string range $loss 5 end] ,]
    $em drop-target [new Agent/Null]
    $ns link-lossmodel $em $n(1) $n(2)
} elseif {$loss > 0} {
    set em [new ErrorModel]
    $em set rate_ $loss
    $em unit pkt
    $em ranvar [new RandomVariable/Uniform]
    $em drop-target [new Agent/Null]
    $ns link-lossmodel $em $n(1) $n(2)
}
if {$variant == "TCP"} {
    set tcp [new Agent/TCP]
} else {
    set tcp [new Agent/TCP/$variant]
}
$tcp set fid_ 1
$tcp set window_ $window
$ns attach-agent $n(0) $tcp
set sink [new Agent/$sinktype]
$ns attach-agent $n(3) $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$ns at 0.0 "$ftp start"
if {$probe} {
    global defaultRNG
    puts [$defaultRNG uniform 0 1]
    exit 0
}
proc finish {} {
    global f tr
    if {$tr != "-"} { close $f }
    exit 0
}
$ns at $duration "finish"
$ns run
