//! One module per subcommand.

pub mod bench;
pub mod equation;
pub mod export_ns2;

pub mod recv;
pub mod reproduce;
pub mod run;
pub mod send;
pub mod sweep;
pub mod validate;
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
