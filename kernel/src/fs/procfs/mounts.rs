//! The mount table as text (Linux: `fs/proc_namespace.c`):
//! `/proc/mounts` and `/proc/PID/mounts` in fstab's format (`show_vfsmnt`),
//! `/proc/PID/mountinfo` with each mount's ID, its parent's, its device
//! number and both kinds of options (`show_mountinfo`). df, findmnt and
//! libmount read them.
//!
//! Where we simplify: one mount namespace, so every process shows the
//! same table; every mount is private (no `shared:N` propagation fields)
//! and shows its file system's root (`/`).

use alloc::string::String;
use core::fmt::Write;

use crate::fs::vfs::{self, MountInfo};
use uapi::stat::{dev_major, dev_minor};

/// Space, tab, newline and backslash in a path or source, as `\ooo`, so
/// each line splits on spaces (Linux: `mangle`).
fn mangle(out: &mut String, text: &str) {
    for c in text.chars() {
        if matches!(c, ' ' | '\t' | '\n' | '\\') {
            let _ = write!(out, "\\{:03o}", c as u32);
        } else {
            out.push(c);
        }
    }
}

/// The per-mount flags: the initramfs's root has no `relatime`, as Linux
/// shows it.
fn mount_flags(m: &MountInfo) -> &'static str {
    if m.fstype == "rootfs" {
        "rw"
    } else {
        "rw,relatime"
    }
}

/// `/proc/mounts`: source, mount point, type, options, `0 0`.
pub fn mounts() -> String {
    let mut s = String::new();
    for m in vfs::mounts() {
        mangle(&mut s, &m.source);
        s.push(' ');
        mangle(&mut s, &m.path);
        let sep = if m.options.is_empty() { "" } else { "," };
        let _ = writeln!(s, " {} {}{sep}{} 0 0", m.fstype, mount_flags(&m), m.options);
    }
    s
}

/// The mount a mount point lies in: the latest before it whose path is
/// a directory above it; the root's is itself.
fn parent_id(all: &[MountInfo], at: usize) -> u64 {
    let path = &all[at].path;
    let inside = |p: &str| p == "/" || path.strip_prefix(p).is_some_and(|r| r.starts_with('/'));
    all[..at]
        .iter()
        .rev()
        .find(|m| m.path != *path && inside(&m.path))
        .map_or(all[at].id, |m| m.id)
}

/// `/proc/PID/mountinfo`: `ID PARENT MAJOR:MINOR ROOT MOUNT_POINT
/// MOUNT_OPTIONS - TYPE SOURCE SUPER_OPTIONS` per mount.
pub fn mountinfo() -> String {
    let all = vfs::mounts();
    let mut s = String::new();
    for (at, m) in all.iter().enumerate() {
        let (major, minor) = (dev_major(m.dev), dev_minor(m.dev));
        let _ = write!(s, "{} {} {major}:{minor} / ", m.id, parent_id(&all, at));
        mangle(&mut s, &m.path);
        let _ = write!(s, " {} - {} ", mount_flags(m), m.fstype);
        mangle(&mut s, &m.source);
        let sep = if m.options.is_empty() { "" } else { "," };
        let _ = writeln!(s, " rw{sep}{}", m.options);
    }
    s
}
