//! One module per subcommand.

pub mod bench;
pub mod campaign;
pub mod equation;
pub mod export_ns2;
pub mod keygen;
pub mod recv;
pub mod reproduce;
pub mod run;
pub mod send;
pub mod sweep;
pub mod validate;
pub mod validate_real;
pub mod variants;

/// Clap value parser of an RSA modulus size in bits (`bench --bits`, `recv --rsa-bits`): a
/// whole number within the range `tfrc_protect` can generate keys for, checked here so that a
/// bad value is a usage error rather than a key generation failure later.
pub(crate) fn rsa_modulus_bits(v: &str) -> Result<usize, String> {
    let b: usize = v
        .trim()
        .parse()
        .map_err(|_| format!("'{v}' is not a whole number of bits"))?;
    let (lo, hi) = (
        tfrc_protect::MIN_MODULUS_BITS,
        tfrc_protect::MAX_MODULUS_BITS,
    );
    if !(lo..=hi).contains(&b) {
        return Err(format!("{b} is outside {lo}..={hi}"));
    }
    Ok(b)
}

/// A public key given on the command line: 64 hex digits, or a file holding them (a key file
/// from `tfrclab keygen`, or its `.pub`).
pub(crate) fn public_key_arg(flag: &str, v: &str) -> Result<[u8; 32], String> {
    let p = std::path::Path::new(v);
    if p.is_file() {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{flag} {v}: {e}"))?;
        return tfrc_protect::noise::parse_public_key(&text)
            .map_err(|e| format!("{flag} {v}: {e}"));
    }
    tfrc_protect::noise::parse_hex_key(v).map_err(|e| {
        format!("{flag} {v}: not a file, and not a public key: {e} (expected 64 hex digits or a key file)")
    })
}

/// A private key file written by `tfrclab keygen`.
pub(crate) fn key_file_arg(
    flag: &str,
    p: &std::path::Path,
) -> Result<tfrc_protect::StaticKeypair, String> {
    let text = std::fs::read_to_string(p).map_err(|e| format!("{flag} {}: {e}", p.display()))?;
    tfrc_protect::StaticKeypair::from_key_file(&text)
        .map_err(|e| format!("{flag} {}: {e}", p.display()))
}

/// `send`/`recv --pcap FILE`: `lab`'s pcap writer fed by `tfrc_udp`'s capture hook (neither
/// crate knows the other; docs/wireshark.md).
pub(crate) struct Pcap(lab::pcap::DatagramPcap);

impl tfrc_udp::capture::CaptureSink for Pcap {
    fn datagram(&mut self, d: &tfrc_udp::capture::Captured<'_>) {
        self.0
            .write(d.realtime_ns, d.src, d.dst, d.ttl, d.ecn, d.datagram);
    }
}

type SharedPcap = std::sync::Arc<std::sync::Mutex<Pcap>>;

/// Create `--pcap FILE`'s file, or say why not.
pub(crate) fn pcap_arg(path: Option<&std::path::Path>) -> Result<Option<SharedPcap>, String> {
    path.map(|p| lab::pcap::DatagramPcap::create(p).map(|w| SharedPcap::new(Pcap(w).into())))
        .transpose()
        .map_err(|e| format!("--pcap: {e}"))
}

/// Flush `--pcap`'s file once the session is over.
pub(crate) fn pcap_finish(pcap: Option<SharedPcap>) -> anyhow::Result<()> {
    if let Some(p) = pcap {
        let mut p = p.lock().unwrap_or_else(|e| e.into_inner());
        p.0.finish().map_err(|e| anyhow::anyhow!("--pcap: {e}"))?;
    }
    Ok(())
}

/// Which termination signal arrived, if any.
pub(crate) struct Signals {
    int: std::sync::Arc<std::sync::atomic::AtomicBool>,
    term: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Raised by either.
    any: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Signals {
    /// Catch SIGINT and SIGTERM from now on: they set flags instead of killing the process.
    pub(crate) fn catch() -> std::io::Result<Signals> {
        Signals::register(false)
    }

    /// [`Signals::catch`], but a second signal ends the process at once (128 + its number).
    pub(crate) fn catch_once() -> std::io::Result<Signals> {
        Signals::register(true)
    }

    fn register(second_exits: bool) -> std::io::Result<Signals> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let s = Signals {
            int: Default::default(),
            term: Default::default(),
            any: Default::default(),
        };
        for (sig, flag) in [(SIGINT, &s.int), (SIGTERM, &s.term)] {
            // Actions run in the order registered: the exit sees `any` as it was before.
            if second_exits {
                signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, s.any.clone())?;
            }
            signal_hook::flag::register(sig, flag.clone())?;
            signal_hook::flag::register(sig, s.any.clone())?;
        }
        Ok(s)
    }

    /// Raised once either signal arrived.
    pub(crate) fn raised(&self) -> &std::sync::atomic::AtomicBool {
        &self.any
    }

    /// `Ctrl-C (SIGINT)` or `SIGTERM`: what arrived.
    pub(crate) fn name(&self) -> &'static str {
        if self.int.load(std::sync::atomic::Ordering::SeqCst) {
            "Ctrl-C (SIGINT)"
        } else {
            "SIGTERM"
        }
    }

    /// The exit code of a process ended by the signal that arrived (128 + its number).
    pub(crate) fn exit_code(&self) -> Option<u8> {
        use std::sync::atomic::Ordering::SeqCst;
        if self.int.load(SeqCst) {
            Some(128 + signal_hook::consts::SIGINT as u8)
        } else if self.term.load(SeqCst) {
            Some(128 + signal_hook::consts::SIGTERM as u8)
        } else {
            None
        }
    }
}
