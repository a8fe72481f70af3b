//! The new mount API's file system context (Linux: `struct fs_context`,
//! `fs/fsopen.c`, `fs/fs_context.c`): fsopen makes one for a file system
//! type, fsconfig gives it its options one at a time and then creates the
//! file system, and fsmount hands out its root as a detached mount, which
//! move_mount attaches. The same two types as mount(2): tmpfs and proc.
//!
//! A parameter refused is EINVAL, and its message, as Linux words it, is
//! kept for read(2) on the context's descriptor (Linux: `logfc`).
//!
//! Where we simplify: only the parameters these file systems take here
//! are known (tmpfs's `size` and `huge`, proc's `hidepid`, `gid` and
//! `subset`, and `source`); Linux's generic superblock flags (`ro`,
//! `sync`, ...) are unknown parameters, and fsmount keeps no mount
//! attributes.

use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

use crate::errno::{Errno, KResult};
use crate::fs::device::Device;
use crate::fs::procfs::{self, ProcOptions};
use crate::fs::tmpfs;
use crate::fs::vfs::Inode;
use crate::sync::SpinLock;

/// A parameter's value as fsconfig gives it (Linux: `enum fs_value_type`).
pub enum Value {
    /// FSCONFIG_SET_FLAG: a key alone.
    Flag,
    /// FSCONFIG_SET_STRING.
    String(String),
    /// FSCONFIG_SET_BINARY, FSCONFIG_SET_PATH(_EMPTY), FSCONFIG_SET_FD:
    /// none of the parameters here takes one.
    Other,
}

/// How far the context has come (Linux: `enum fs_context_phase`).
enum Phase {
    /// Taking parameters: tmpfs's as `key=value` text, or proc's parsed.
    Params(Vec<String>, ProcOptions),
    /// Created (FSCONFIG_CMD_CREATE): the root and the options
    /// /proc/mounts will show.
    AwaitingMount(Arc<Inode>, String),
    /// fsmount made its mount.
    Mounted,
}

/// One context, behind the descriptor fsopen returns.
pub struct FsContext {
    /// The file system type, `tmpfs` or `proc`.
    fstype: &'static str,
    /// Parameters, then the file system.
    phase: SpinLock<Phase>,
    /// The `source` parameter, shown in /proc/mounts (default `none`).
    source: SpinLock<Option<String>>,
    /// Messages about refused parameters, oldest first, for read(2)
    /// (Linux: `fc_log`, which keeps the last `LOG_SLOTS`).
    log: SpinLock<VecDeque<String>>,
}

/// How many messages a context keeps (Linux: `fc_log.buffer`'s size).
const LOG_SLOTS: usize = 8;

/// A file system type fsopen knows; ENODEV for any other (Linux:
/// `get_fs_type`).
pub fn fs_type(name: &str) -> KResult<&'static str> {
    match name {
        "tmpfs" => Ok("tmpfs"),
        "proc" => Ok("proc"),
        _ => Err(Errno::ENODEV),
    }
}

/// A new /proc instance with `options`: its root, and the options
/// /proc/mounts shows.
fn make_proc(options: ProcOptions) -> (Arc<Inode>, String) {
    let shown = String::from(options.show().trim_start_matches(','));
    (procfs::new_instance(options), shown)
}

/// A new tmpfs with mount(2)'s option text: its root and that text.
fn make_tmpfs(options: &str) -> KResult<(Arc<Inode>, String)> {
    Ok((tmpfs::new_mount(options)?, String::from(options)))
}

/// mount(2)'s new file system: type `name`, options `data` as
/// comma-separated text. Its type, root and the options /proc/mounts
/// shows; ENODEV for an unknown type, EINVAL for a bad option.
pub fn new_fs(name: &str, data: &str) -> KResult<(&'static str, Arc<Inode>, String)> {
    let fstype = fs_type(name)?;
    let (root, shown) = match fstype {
        "proc" => make_proc(ProcOptions::parse(data)?),
        _ => make_tmpfs(data)?,
    };
    Ok((fstype, root, shown))
}

impl FsContext {
    /// A context for a new file system of type `fstype` (Linux:
    /// `fs_context_for_mount`).
    pub fn new(fstype: &'static str) -> Arc<FsContext> {
        Arc::new(FsContext {
            fstype,
            phase: SpinLock::new(Phase::Params(Vec::new(), ProcOptions::default())),
            source: SpinLock::new(None),
            log: SpinLock::new(VecDeque::new()),
        })
    }

    /// Logs `message` for read(2) and returns EINVAL (Linux: `invalf`).
    fn refuse(&self, message: String) -> Errno {
        let mut log = self.log.lock();
        if log.len() == LOG_SLOTS {
            log.pop_front();
        }
        log.push_back(format!("e {message}\n"));
        Errno::EINVAL
    }

    /// FSCONFIG_SET_*: one parameter (Linux: `vfs_parse_fs_param`).
    /// `source` takes one string; the type's own parameters take strings.
    /// EINVAL for anything else, EBUSY once the file system is created.
    pub fn set_param(&self, key: &str, value: Value) -> KResult<()> {
        let mut phase = self.phase.lock();
        let Phase::Params(text, proc) = &mut *phase else {
            return Err(Errno::EBUSY);
        };
        let value = match value {
            Value::String(v) => Some(v),
            Value::Flag | Value::Other => None,
        };
        if key == "source" {
            let mut source = self.source.lock();
            return match value {
                None => Err(self.refuse(String::from("Non-string source"))),
                Some(_) if source.is_some() => Err(self.refuse(String::from("Multiple sources"))),
                Some(v) => {
                    *source = Some(v);
                    Ok(())
                }
            };
        }
        match self.fstype {
            "proc" => proc
                .set(key, value.as_deref())
                .map_err(|message| self.refuse(message)),
            _ => {
                if !matches!(key, "size" | "huge" | "nr_inodes") {
                    return Err(self.refuse(format!("tmpfs: Unknown parameter '{key}'")));
                }
                let option = format!("{key}={}", value.unwrap_or_default());
                tmpfs::parse_options(&option)
                    .map_err(|_| self.refuse(format!("tmpfs: Bad value for '{key}'")))?;
                text.push(option);
                Ok(())
            }
        }
    }

    /// FSCONFIG_CMD_CREATE (and _EXCL: these types never share a
    /// superblock): makes the file system (Linux: `vfs_get_tree`). EBUSY
    /// if it was made already.
    pub fn create(&self) -> KResult<()> {
        let mut phase = self.phase.lock();
        let Phase::Params(text, proc) = &*phase else {
            return Err(Errno::EBUSY);
        };
        let (root, shown) = match self.fstype {
            "proc" => make_proc(*proc),
            _ => make_tmpfs(&text.join(","))?,
        };
        *phase = Phase::AwaitingMount(root, shown);
        Ok(())
    }

    /// fsmount's part (Linux: `vfs_create_mount`): the root, now a
    /// detached mount. EINVAL before the file system is made, EBUSY after
    /// a first fsmount.
    pub fn mount(&self) -> KResult<Arc<Inode>> {
        let mut phase = self.phase.lock();
        match core::mem::replace(&mut *phase, Phase::Mounted) {
            Phase::AwaitingMount(root, shown) => {
                let mut detached = DETACHED.lock();
                // Forget those whose descriptor was closed unattached.
                detached.retain(|d| d.root.strong_count() > 0);
                let source = self.source.lock().take();
                detached.push(Detached {
                    root: Arc::downgrade(&root),
                    fstype: self.fstype,
                    source: source.unwrap_or_else(|| String::from("none")),
                    options: shown,
                });
                Ok(root)
            }
            Phase::Params(text, proc) => {
                *phase = Phase::Params(text, proc);
                Err(Errno::EINVAL)
            }
            Phase::Mounted => Err(Errno::EBUSY),
        }
    }
}

/// A mount fsmount made that is not attached yet (Linux: a mount with no
/// parent in an anonymous mount namespace).
struct Detached {
    /// Its root; the fsmount descriptor holds it.
    root: Weak<Inode>,
    /// Its type.
    fstype: &'static str,
    /// The `source` given, or `none`.
    source: String,
    /// The options /proc/mounts will show.
    options: String,
}

/// The detached mounts.
static DETACHED: SpinLock<Vec<Detached>> = SpinLock::new(Vec::new());

/// Attaches the detached mount whose root is `root` with `mount`, which
/// is given its type, source and options; EINVAL if `root` is no detached mount's
/// (Linux: move_mount of something that is not a mount's root). It stays
/// detached if `mount` fails.
pub fn attach(
    root: &Arc<Inode>,
    mount: impl FnOnce(&'static str, &str, &str) -> KResult<()>,
) -> KResult<()> {
    let d = {
        let mut detached = DETACHED.lock();
        let at = detached
            .iter()
            .position(|d| d.root.as_ptr() == Arc::as_ptr(root))
            .ok_or(Errno::EINVAL)?;
        detached.remove(at)
    };
    mount(d.fstype, &d.source, &d.options).inspect_err(|_| DETACHED.lock().push(d))
}

impl Device for FsContext {
    /// The oldest message (Linux: `fscontext_read`): ENODATA if there is
    /// none, EMSGSIZE, keeping it, if it does not fit in `buf`.
    fn read(&self, buf: &mut [u8], _nonblock: bool) -> KResult<usize> {
        let mut log = self.log.lock();
        let message = log.front().ok_or(Errno::ENODATA)?;
        let n = message.len();
        if n > buf.len() {
            return Err(Errno::EMSGSIZE);
        }
        buf[..n].copy_from_slice(message.as_bytes());
        log.pop_front();
        Ok(n)
    }

    /// Linux's context files have no `write`.
    fn write(&self, _data: &[u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::EINVAL)
    }
}
