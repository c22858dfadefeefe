# One FTP flow over NS-2.35's Agent/TCP/Linux running the kernel's CUBIC module
# (`select_ca cubic`, timestamps on) to an Agent/TCPSink/Sack1 sink echoing timestamps as
# RFC 1323 says, on n0 -10Mb/2ms- n1 -<bw>/<delay>- n2 -10Mb/2ms- n3 with DropTail 50.
# Usage: ns tcp_cubic.tcl <window> <duration> <bw> <delay> <cwnd> <trace>
#   window: window_ (the cap on cwnd), duration: seconds.
#   loss: 0, or list:a,b,c to drop the packets with those 0-based positions among those
#     crossing the bottleneck n1->n2 (ErrorModel/List as link-lossmodel, after the delay).
#   cwnd: file for "time cwnd_ ssthresh_" every 10 ms, or "-" for none.
#   trace: file name for trace-all.
set window [lindex $argv 0]
set duration [lindex $argv 1]
set bw [lindex $argv 2]
set delay [lindex $argv 3]
set qlim [lindex $argv 4]
set loss [lindex $argv 5]
set cwout [lindex $argv 6]
set tr [lindex $argv 7]
set ns [new Simulator]
set f [open $tr w]
$ns trace-all $f
for {set i 0} {$i < 4} {incr i} { set n($i) [$ns node] }
$ns duplex-link $n(0) $n(1) 10Mb 2ms DropTail
$ns duplex-link $n(1) $n(2) $bw $delay DropTail
$ns duplex-link $n(2) $n(3) 10Mb 2ms DropTail
$ns queue-limit $n(1) $n(2) $qlim
if {[string match list:* $loss]} {
    set em [new ErrorModel/List]
    $em droplist [split [string range $loss 5 end] ,]
    $em drop-target [new Agent/Null]
    $ns link-lossmodel $em $n(1) $n(2)
}
set tcp [new Agent/TCP/Linux]
$tcp set timestamps_ true
$tcp set fid_ 1
$tcp set window_ $window
$ns attach-agent $n(0) $tcp
set sink [new Agent/TCPSink/Sack1]
$sink set ts_echo_rfc1323_ true
$ns attach-agent $n(3) $sink
$ns connect $tcp $sink
$ns at 0 "$tcp select_ca cubic"
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$ns at 0.0 "$ftp start"
if {$cwout != "-"} {
    set cwf [open $cwout w]
    proc sample {} {
        global ns tcp cwf
        puts $cwf "[$ns now] [$tcp set cwnd_] [$tcp set ssthresh_]"
        $ns at [expr {[$ns now] + 0.01}] "sample"
    }
    $ns at 0.0 "sample"
}
proc finish {} {
    global f cwout cwf
    close $f
    if {$cwout != "-"} { close $cwf }
    exit 0
}
$ns at $duration "finish"
$ns run
