//! `tfrclab keygen`: a static X25519 key pair for protected sessions (Noise IK,
//! `docs/security.md`). The private key file goes to the receiver (`recv --key`) or to a sender
//! that a receiver's allow-list names (`send --key`); the public key is what the other end
//! pins (`send --peer-key`) or allows (`recv --allow`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tfrc_protect::StaticKeypair;

use super::send::bad_input;

/// Arguments of `tfrclab keygen`.
#[derive(Parser, Debug)]
pub struct Args {
    /// Write the key pair to FILE (readable by its owner only) and the public key to FILE.pub.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Replace existing files.
    #[arg(long)]
    force: bool,
}

fn write_new(path: &std::path::Path, text: &str, mode: u32, force: bool) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).mode(mode);
    if force {
        o.create(true).truncate(true);
    } else {
        o.create_new(true);
    }
    let mut f = o.open(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

/// Run the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let kp = StaticKeypair::generate()?;
    let mut pub_path = args.out.clone().into_os_string();
    pub_path.push(".pub");
    let pub_path = PathBuf::from(pub_path);
    for (p, text, mode) in [
        (&args.out, kp.to_key_file(), 0o600),
        (
            &pub_path,
            format!("public {}\n", tfrc_protect::noise::hex(kp.public())),
            0o644,
        ),
    ] {
        if let Err(e) = write_new(p, &text, mode, args.force) {
            let hint = if e.kind() == std::io::ErrorKind::AlreadyExists {
                " (give --force to replace it)"
            } else {
                ""
            };
            return Ok(bad_input(&format!("--out {}: {e}{hint}", p.display())));
        }
    }
    println!("{}", tfrc_protect::noise::hex(kp.public()));
    Ok(ExitCode::SUCCESS)
}
