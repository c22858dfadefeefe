//! The agents a flow can use, as a closed enum dispatching the [`Agent`] trait by `match`.
//!
//! To add an agent: a variant here, a `From` impl, and one arm in `dispatch!` (the interface
//! itself, with an example, is documented in [`crate::agent`]).

pub mod linux_sink;
pub mod media;
pub mod onoff;
pub(crate) mod sacker;
mod seq_ring;
pub mod tcp;
pub mod tcp_sink;
pub mod tfrc;
pub mod udp;

pub use linux_sink::{LinuxSink, LinuxSinkConfig};
pub use media::{MediaReceiver, MediaSender};
pub use onoff::{OnOffConfig, OnOffTcp};
pub use tcp::cubic::{CubicConfig, CubicProfile, CubicSender};
pub use tcp::linux::{LinuxCc, LinuxTcpConfig, LinuxTcpSender};
pub use tcp::{TcpConfig, TcpSender, TcpVariant};
pub use tcp_sink::{TcpSink, TcpSinkConfig};
pub use tfrc::{OnOff, TfrcApp, TfrcReceiver, TfrcSender};
pub use udp::{CbrClock, CbrConfig, CbrSource, NullSink};

use crate::agent::{Agent, AgentCtx, AppCounters, TimerId};
use crate::packet::Packet;

/// Every agent type the simulator can run.
#[derive(Clone, Debug)]
pub enum AnyAgent {
    /// UDP with an NS-2 `Application/Traffic/CBR` source.
    Cbr(CbrSource),
    /// NS-2 `Agent/Null`: absorbs packets.
    Null(NullSink),
    /// NS-2's one-way TCP sender (`Agent/TCP`, `/Reno`, `/Newreno`, `/Sack1`) with an FTP source
    /// (boxed: it is several times larger than the other agents).
    TcpSender(Box<TcpSender>),
    /// NS-2 `Agent/TCPSink` (or `/DelAck`, `/Sack1`, `/Sack1/DelAck`).
    TcpSink(TcpSink),
    /// CUBIC on NS-2's `Agent/TCP/Linux` sender (boxed, as the other TCP sender).
    CubicSender(Box<CubicSender>),
    /// TCP as Linux runs it (`profile = "linux"`; boxed, as the other TCP senders).
    LinuxSender(Box<LinuxTcpSender>),
    /// The Linux receiver paired with it (boxed: its SACK and out-of-order state).
    LinuxSink(Box<LinuxSink>),
    /// A TFRC sender driving the `tfrc` core (boxed: the core's state is large).
    TfrcSender(Box<TfrcSender>),
    /// A TFRC receiver driving the `tfrc` core.
    TfrcReceiver(Box<TfrcReceiver>),
    /// A video application over a media congestion controller ([`media`]).
    MediaSender(Box<MediaSender>),
    /// The media flow's receiver: frame reassembly and the controller's feedback.
    MediaReceiver(Box<MediaReceiver>),
    /// A TCP sender driven by an on/off source ([`onoff`]).
    OnOffTcp(Box<OnOffTcp>),
}

impl From<MediaSender> for AnyAgent {
    fn from(a: MediaSender) -> Self {
        AnyAgent::MediaSender(Box::new(a))
    }
}

impl From<MediaReceiver> for AnyAgent {
    fn from(a: MediaReceiver) -> Self {
        AnyAgent::MediaReceiver(Box::new(a))
    }
}

impl From<OnOffTcp> for AnyAgent {
    fn from(a: OnOffTcp) -> Self {
        AnyAgent::OnOffTcp(Box::new(a))
    }
}

impl From<TfrcSender> for AnyAgent {
    fn from(a: TfrcSender) -> Self {
        AnyAgent::TfrcSender(Box::new(a))
    }
}

impl From<TfrcReceiver> for AnyAgent {
    fn from(a: TfrcReceiver) -> Self {
        AnyAgent::TfrcReceiver(Box::new(a))
    }
}

impl From<CbrSource> for AnyAgent {
    fn from(a: CbrSource) -> Self {
        AnyAgent::Cbr(a)
    }
}

impl From<NullSink> for AnyAgent {
    fn from(a: NullSink) -> Self {
        AnyAgent::Null(a)
    }
}

impl From<TcpSender> for AnyAgent {
    fn from(a: TcpSender) -> Self {
        AnyAgent::TcpSender(Box::new(a))
    }
}

impl From<TcpSink> for AnyAgent {
    fn from(a: TcpSink) -> Self {
        AnyAgent::TcpSink(a)
    }
}

impl From<CubicSender> for AnyAgent {
    fn from(a: CubicSender) -> Self {
        AnyAgent::CubicSender(Box::new(a))
    }
}

impl From<LinuxTcpSender> for AnyAgent {
    fn from(a: LinuxTcpSender) -> Self {
        AnyAgent::LinuxSender(Box::new(a))
    }
}

impl From<LinuxSink> for AnyAgent {
    fn from(a: LinuxSink) -> Self {
        AnyAgent::LinuxSink(Box::new(a))
    }
}

macro_rules! dispatch {
    ($self:expr, $a:ident => $e:expr) => {
        match $self {
            AnyAgent::Cbr($a) => $e,
            AnyAgent::Null($a) => $e,
            AnyAgent::TcpSender($a) => $e,
            AnyAgent::TfrcSender($a) => $e,
            AnyAgent::TfrcReceiver($a) => $e,
            AnyAgent::TcpSink($a) => $e,
            AnyAgent::CubicSender($a) => $e,
            AnyAgent::LinuxSender($a) => $e,
            AnyAgent::LinuxSink($a) => $e,
            AnyAgent::MediaSender($a) => $e,
            AnyAgent::MediaReceiver($a) => $e,
            AnyAgent::OnOffTcp($a) => $e,
        }
    };
}

impl Agent for AnyAgent {
    #[inline]
    fn on_start(&mut self, ctx: &mut AgentCtx<'_>) {
        dispatch!(self, a => a.on_start(ctx))
    }
    #[inline]
    fn on_stop(&mut self, ctx: &mut AgentCtx<'_>) {
        dispatch!(self, a => a.on_stop(ctx))
    }
    // Always inlined: the match goes into the simulator's delivery, one call fewer per packet.
    #[inline(always)]
    fn on_packet(&mut self, pkt: &Packet, ctx: &mut AgentCtx<'_>) {
        dispatch!(self, a => a.on_packet(pkt, ctx))
    }
    #[inline]
    fn on_timer(&mut self, timer: TimerId, ctx: &mut AgentCtx<'_>) {
        dispatch!(self, a => a.on_timer(timer, ctx))
    }
    fn timers(&self) -> usize {
        dispatch!(self, a => a.timers())
    }
    fn app_counters(&self) -> AppCounters {
        dispatch!(self, a => a.app_counters())
    }
    fn sample_names(&self) -> &'static [&'static str] {
        dispatch!(self, a => a.sample_names())
    }
    fn sample(&self, out: &mut Vec<f64>) {
        dispatch!(self, a => a.sample(out))
    }
}
