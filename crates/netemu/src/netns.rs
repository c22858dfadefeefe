//! Network namespaces held by descriptors, and what runs inside them: threads, commands,
//! tun devices, sysctls.
//!
//! Every namespace here is anonymous (no name under `/run/netns`): it lives while this process
//! holds its descriptor or a process runs inside it. Processes started inside get SIGKILL when
//! the thread that started them ends ([`sys::die_with_parent`]). So a run that is killed, even
//! with SIGKILL, leaves no namespace, device or process behind: the kernel removes them.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use crate::sys;

/// A network namespace.
#[derive(Debug)]
pub struct NetNs {
    name: String,
    fd: OwnedFd,
}

impl NetNs {
    /// A new, empty namespace (only a `lo` device, down). `name` is for messages.
    pub fn new(name: &str) -> io::Result<NetNs> {
        Ok(NetNs {
            name: name.to_string(),
            fd: sys::new_netns()?,
        })
    }

    /// Its name in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The namespace's inode number (what `/proc/PID/ns/net` links to as `net:[N]`), to check
    /// that it is gone after a run.
    pub fn inode(&self) -> io::Result<u64> {
        use std::os::unix::fs::MetadataExt;
        let path = format!("/proc/self/fd/{}", self.fd.as_raw_fd());
        Ok(std::fs::metadata(path)?.ino())
    }

    /// Run `f` on a thread inside the namespace (sockets it creates belong to it) and return
    /// its result.
    pub fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce() -> io::Result<R> + Send + 'static,
    ) -> io::Result<R> {
        let ns = self.fd.try_clone()?;
        std::thread::Builder::new()
            .name(format!("netns-{}", self.name))
            .spawn(move || {
                sys::enter_netns(ns.as_raw_fd())?;
                f()
            })?
            .join()
            .map_err(|_| io::Error::other("a namespace thread panicked"))?
    }

    /// Start a thread that lives inside the namespace.
    pub fn spawn<R: Send + 'static>(
        &self,
        thread_name: &str,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> io::Result<std::thread::JoinHandle<io::Result<R>>> {
        let ns = self.fd.try_clone()?;
        std::thread::Builder::new()
            .name(thread_name.to_string())
            .spawn(move || {
                sys::enter_netns(ns.as_raw_fd())?;
                Ok(f())
            })
    }

    /// A command that runs inside the namespace and is killed when the calling thread ends.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        let fd = self.fd.as_raw_fd();
        // SAFETY: the closure makes two system calls (setns, prctl) and allocates nothing;
        // `fd` stays open in the child until exec (it is close-on-exec).
        unsafe {
            c.pre_exec(move || {
                sys::enter_netns(fd)?;
                sys::die_with_parent()
            });
        }
        c
    }

    /// Run `ip -batch -` inside the namespace with `lines`; an error names the namespace,
    /// the command that failed and what `ip` said.
    pub fn ip_batch(&self, lines: &[String]) -> io::Result<()> {
        let mut child = self
            .command("ip")
            .args(["-batch", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot run `ip` (iproute2): {e}")))?;
        if let Some(mut i) = child.stdin.take() {
            i.write_all(lines.join("\n").as_bytes())?;
            i.write_all(b"\n")?;
        }
        let out = child.wait_with_output()?;
        if !out.status.success() {
            return Err(io::Error::other(format!(
                "namespace {}: `ip -batch` failed ({}): {}\ncommands:\n{}",
                self.name,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim(),
                lines.join("\n")
            )));
        }
        Ok(())
    }

    /// Set sysctls (`net.ipv4.ip_forward` → `/proc/sys/net/ipv4/ip_forward`) inside the
    /// namespace; every write is checked.
    pub fn sysctls(&self, settings: &[(&str, &str)]) -> io::Result<()> {
        let settings: Vec<(String, String)> = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let name = self.name.clone();
        self.run(move || {
            for (k, v) in &settings {
                let path = format!("/proc/sys/{}", k.replace('.', "/"));
                std::fs::write(&path, v).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("namespace {name}: cannot set {k} = {v} ({path}): {e}"),
                    )
                })?;
                let back = std::fs::read_to_string(&path)?;
                if back.trim() != v.trim() {
                    return Err(io::Error::other(format!(
                        "namespace {name}: {k} reads {} after writing {v}",
                        back.trim()
                    )));
                }
            }
            Ok(())
        })
    }

    /// Read a sysctl inside the namespace.
    pub fn sysctl(&self, key: &str) -> io::Result<String> {
        let path = format!("/proc/sys/{}", key.replace('.', "/"));
        self.run(move || Ok(std::fs::read_to_string(path)?.trim().to_string()))
    }

    /// Create a tun device `name` inside the namespace.
    pub fn open_tun(&self, name: &str) -> io::Result<OwnedFd> {
        let n = name.to_string();
        let ns = self.name.clone();
        self.run(move || {
            sys::open_tun(&n).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("namespace {ns}: cannot create tun device {n}: {e}"),
                )
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Needs root: a namespace's sysctls are its own, a tun device lives in it, and both go
    /// when the descriptor is dropped.
    #[test]
    fn namespaces_are_isolated_and_vanish() {
        // CI runs as root; elsewhere the test fails saying why rather than passing unrun.
        assert!(sys::is_root(), "needs root: network namespaces");
        let a = NetNs::new("a").unwrap();
        let b = NetNs::new("b").unwrap();
        a.sysctls(&[("net.ipv4.ip_forward", "1")]).unwrap();
        b.sysctls(&[("net.ipv4.ip_forward", "0")]).unwrap();
        assert_eq!(a.sysctl("net.ipv4.ip_forward").unwrap(), "1");
        assert_eq!(b.sysctl("net.ipv4.ip_forward").unwrap(), "0");
        let name = format!("t{}x", std::process::id());
        let tun = a.open_tun(&name).unwrap();
        a.ip_batch(&[format!("link set dev {name} up")]).unwrap();
        let out = a.command("ip").args(["-o", "link"]).output().unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains(&name));
        let out = b.command("ip").args(["-o", "link"]).output().unwrap();
        assert!(!String::from_utf8_lossy(&out.stdout).contains(&name));
        let err = a.ip_batch(&["route add 10.1.2.3/32 dev nosuchdev".into()]);
        assert!(err.unwrap_err().to_string().contains("nosuchdev"));
        let ino = a.inode().unwrap();
        drop(tun);
        drop(a);
        // Nothing refers to it any more: no process or descriptor shows its inode.
        let needle = format!("net:[{ino}]");
        let mut found = false;
        for p in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
            if std::fs::read_link(p.path()).is_ok_and(|l| l.to_string_lossy() == needle) {
                found = true;
            }
        }
        assert!(!found);
    }
}
