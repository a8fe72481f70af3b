//! POSIX message queues (Linux: `ipc/mqueue.c`): named queues of
//! messages, each with a priority, that processes send to and receive
//! from through a descriptor mq_open gives. The highest priority message
//! is received first, and messages of one priority in the order sent. A
//! full queue makes senders wait, an empty one receivers; a process may
//! ask (mq_notify) for a signal when a message arrives on an empty queue.
//!
//! Where we simplify: the names live in one table, not in an `mqueue`
//! file system one can mount and list (Linux's /dev/mqueue); a queue's
//! descriptor therefore has no text to read (Linux shows `QSIZE:...`),
//! and read(2) on it is EINVAL. Every process runs as root, which passes
//! every permission check; SIGEV_THREAD notification, which glibc builds
//! on a netlink socket, is not offered (faultline has no netlink).

use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::arch::timer;
use crate::errno::{Errno, KResult};
use crate::fs::device::Device;
use crate::fs::poll::{PollQueue, PollWaiter, POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM};
use crate::fs::procfs::sysctl::{
    MQ_MSGSIZE_DEFAULT, MQ_MSGSIZE_MAX, MQ_MSG_DEFAULT, MQ_MSG_MAX, MQ_QUEUES_MAX,
};
use crate::fs::vfs::permission::{self, Owner, MAY_READ, MAY_WRITE};
use crate::fs::vfs::{
    File, Inode, InodeKind, NAME_MAX, O_ACCMODE, O_CREAT, O_EXCL, O_RDONLY, O_WRONLY, S_IFDIR,
    S_IFREG,
};
use crate::sync::SpinLock;
use crate::task::cred::CAP_SYS_RESOURCE;
use crate::task::current_cred;
use crate::task::process::Process;
use crate::task::signal::queue_signal;
use crate::task::signal_abi::{SigInfo, SIGRTMAX};
use uapi::signal::SI_MESGQ;
pub use uapi::signal::{SIGEV_NONE, SIGEV_SIGNAL, SIGEV_THREAD};

/// Priorities run from 0 to `MQ_PRIO_MAX - 1` (`include/linux/mqueue.h`).
pub const MQ_PRIO_MAX: u32 = 32768;
/// The most messages a queue may hold, for a caller with
/// CAP_SYS_RESOURCE (Linux: `HARD_MSGMAX`); others get `fs.mqueue.msg_max`.
const HARD_MSGMAX: i64 = 65536;
/// The largest message, for a caller with CAP_SYS_RESOURCE (Linux:
/// `HARD_MSGSIZEMAX`); others get `fs.mqueue.msgsize_max`.
const HARD_MSGSIZEMAX: i64 = 16 << 20;
/// What Linux charges per message slot besides its text: a `struct
/// msg_msg` on arm64, and a priority tree node for each priority the
/// queue could hold (both 48 bytes), so that RLIMIT_MSGQUEUE runs out
/// where it does on Linux.
const MSG_OVERHEAD: u64 = 48;

pub use uapi::mqueue::MqAttr;

/// Who asked to be told of the next message, and how (Linux:
/// `mqueue_inode_info.notify_owner` and `.notify`).
struct Notification {
    /// The registered process (Linux names it by its thread-group pid).
    owner: Weak<Process>,
    /// The signal to send; None for SIGEV_NONE, or for signal 0.
    signal: Option<(u32, u64)>,
}

/// What the queue's lock protects.
struct State {
    /// The messages by priority; the highest is received first.
    msgs: BTreeMap<u32, VecDeque<Vec<u8>>>,
    /// How many messages `msgs` holds (Linux: `attr.mq_curmsgs`).
    count: usize,
    /// Receivers asleep on an empty queue; a message sent while one waits
    /// goes to it, and raises no notification (Linux's pipelined send).
    receivers: usize,
    /// The registered notification, if any.
    notify: Option<Notification>,
}

/// One message queue (Linux: `struct mqueue_inode_info`).
pub struct MsgQueue {
    /// The most messages it holds.
    maxmsg: usize,
    /// The largest message.
    msgsize: usize,
    /// The user charged for it against RLIMIT_MSGQUEUE, and how much.
    charged: (u32, u64),
    /// Messages and notification.
    state: SpinLock<State>,
    /// Senders and receivers waiting, and pollers (Linux: `e_wait_q` and
    /// the `wait_q` of the file).
    wait: PollQueue,
}

/// The queues by name (Linux: the dentries of the mqueue mount's root).
static NAMES: SpinLock<BTreeMap<String, Arc<Inode>>> = SpinLock::new(BTreeMap::new());
/// Queues that exist, named or unlinked and still open (Linux:
/// `ipc_ns->mq_queues_count`).
static QUEUES: AtomicU32 = AtomicU32::new(0);
/// Bytes each user's queues are charged (Linux: `user_struct.mq_bytes`).
static USER_BYTES: SpinLock<BTreeMap<u32, u64>> = SpinLock::new(BTreeMap::new());

impl Drop for MsgQueue {
    /// The last descriptor of an unlinked queue is gone: uncharge it
    /// (Linux: `mqueue_evict_inode`).
    fn drop(&mut self) {
        QUEUES.fetch_sub(1, Ordering::Relaxed);
        let (uid, bytes) = self.charged;
        if let Some(b) = USER_BYTES.lock().get_mut(&uid) {
            *b -= bytes;
        }
    }
}

/// A name as mq_open and mq_unlink take it, glibc having removed its
/// leading slash: ENOENT for an empty one (Linux: `getname`), EACCES
/// for `.`, `..` or one holding a slash, ENAMETOOLONG past NAME_MAX
/// (Linux: `lookup_one_len` in the mqueue root).
fn check_name(name: &str) -> KResult<()> {
    if name.is_empty() {
        return Err(Errno::ENOENT);
    }
    if name == "." || name == ".." || name.contains('/') {
        return Err(Errno::EACCES);
    }
    if name.len() > NAME_MAX {
        return Err(Errno::ENAMETOOLONG);
    }
    Ok(())
}

/// Can a queue take `attr`'s size (Linux: `mq_attr_ok`)? EINVAL for
/// sizes of 0 or below, or above the limits; EOVERFLOW if the bytes
/// overflow. Returns the bytes charged to the user.
fn attr_ok(attr: &MqAttr, privileged: bool) -> KResult<u64> {
    if attr.maxmsg <= 0 || attr.msgsize <= 0 {
        return Err(Errno::EINVAL);
    }
    let (msg_max, msgsize_max) = if privileged {
        (HARD_MSGMAX, HARD_MSGSIZEMAX)
    } else {
        (
            MQ_MSG_MAX.load(Ordering::Relaxed) as i64,
            MQ_MSGSIZE_MAX.load(Ordering::Relaxed) as i64,
        )
    };
    if attr.maxmsg > msg_max || attr.msgsize > msgsize_max {
        return Err(Errno::EINVAL);
    }
    let (maxmsg, msgsize) = (attr.maxmsg as u64, attr.msgsize as u64);
    let tree = maxmsg * MSG_OVERHEAD + maxmsg.min(MQ_PRIO_MAX as u64) * MSG_OVERHEAD;
    maxmsg
        .checked_mul(msgsize)
        .and_then(|text| text.checked_add(tree))
        .ok_or(Errno::EOVERFLOW)
}

/// The caller's process.
fn me() -> KResult<Arc<Process>> {
    crate::task::current_process().ok_or(Errno::EINVAL)
}

/// A new queue sized by `attr` (or the `fs.mqueue` defaults), charged
/// to the caller's real user (Linux: `mqueue_get_inode`): ENOSPC past
/// `fs.mqueue.queues_max` without CAP_SYS_RESOURCE, EMFILE past the
/// caller's RLIMIT_MSGQUEUE.
fn new_queue(attr: Option<MqAttr>, mode: u32) -> KResult<Arc<Inode>> {
    let p = me()?;
    let cred = p.cred.lock().clone();
    let privileged = cred.capable(CAP_SYS_RESOURCE);
    let attr = attr.unwrap_or(MqAttr {
        maxmsg: MQ_MSG_DEFAULT
            .load(Ordering::Relaxed)
            .min(MQ_MSG_MAX.load(Ordering::Relaxed)) as i64,
        msgsize: MQ_MSGSIZE_DEFAULT
            .load(Ordering::Relaxed)
            .min(MQ_MSGSIZE_MAX.load(Ordering::Relaxed)) as i64,
        ..MqAttr::default()
    });
    let bytes = attr_ok(&attr, privileged)?;
    let queues_max = MQ_QUEUES_MAX.load(Ordering::Relaxed) as i32;
    if QUEUES.load(Ordering::Relaxed) as i64 >= queues_max as i64 && !privileged {
        return Err(Errno::ENOSPC);
    }
    let limit = p.msgqueue_limit();
    {
        let mut users = USER_BYTES.lock();
        let charged = users.entry(cred.uid).or_insert(0);
        if charged.saturating_add(bytes) > limit {
            return Err(Errno::EMFILE);
        }
        *charged += bytes;
    }
    QUEUES.fetch_add(1, Ordering::Relaxed);
    let queue = Arc::new(MsgQueue {
        maxmsg: attr.maxmsg as usize,
        msgsize: attr.msgsize as usize,
        charged: (cred.uid, bytes),
        state: SpinLock::new(State {
            msgs: BTreeMap::new(),
            count: 0,
            receivers: 0,
            notify: None,
        }),
        wait: PollQueue::new(),
    });
    let umask = p.umask.load(Ordering::Relaxed);
    let inode = Inode::new(S_IFREG | (mode & 0o777 & !umask), InodeKind::Device(queue));
    inode.set_owner(Some(cred.euid), Some(cred.egid));
    Ok(inode)
}

/// mq_open (Linux: `do_mq_open`): the queue `name`, made with `mode` and
/// `attr` under O_CREAT if it does not exist, opened as `oflag` says.
/// EINVAL for the access mode 3; EEXIST under O_CREAT | O_EXCL for a
/// name taken; ENOENT without O_CREAT for one that is not; EACCES for an
/// existing queue whose mode refuses the access asked (Linux:
/// `prepare_open`'s `inode_permission`).
pub fn mq_open(name: &str, oflag: u32, mode: u32, attr: Option<MqAttr>) -> KResult<Arc<File>> {
    check_name(name)?;
    if oflag & O_ACCMODE == O_ACCMODE {
        return Err(Errno::EINVAL);
    }
    let inode = {
        let mut names = NAMES.lock();
        match names.get(name) {
            Some(_) if oflag & (O_CREAT | O_EXCL) == O_CREAT | O_EXCL => return Err(Errno::EEXIST),
            Some(inode) => {
                let want = match oflag & O_ACCMODE {
                    O_RDONLY => MAY_READ,
                    O_WRONLY => MAY_WRITE,
                    _ => MAY_READ | MAY_WRITE,
                };
                inode.permission(want)?;
                inode.clone()
            }
            None if oflag & O_CREAT == 0 => return Err(Errno::ENOENT),
            None => {
                let inode = new_queue(attr, mode)?;
                names.insert(String::from(name), inode.clone());
                inode
            }
        }
    };
    File::new(inode, oflag & !(O_CREAT | O_EXCL))
}

/// mq_unlink (Linux: `SYSCALL_DEFINE1(mq_unlink)`): forgets the name; the
/// queue lives on until its last descriptor is closed. ENOENT if absent;
/// EPERM for a queue of another user's, as the names live in a sticky
/// directory (Linux: the mqueue root is mode 01777, so `may_delete`'s
/// `check_sticky` applies).
pub fn mq_unlink(name: &str) -> KResult<()> {
    check_name(name)?;
    let mut names = NAMES.lock();
    let inode = names.get(name).ok_or(Errno::ENOENT)?;
    let sticky_root = Owner {
        mode: S_IFDIR | 0o1777,
        uid: 0,
        gid: 0,
    };
    permission::may_delete_sticky(&current_cred(), sticky_root, inode.owner())?;
    names.remove(name);
    Ok(())
}

/// The message queue behind an open file; EBADF for any other file
/// (Linux compares `f_op` with `mqueue_file_operations`).
pub fn queue_of(file: &File) -> KResult<Arc<MsgQueue>> {
    file.device::<MsgQueue>().ok_or(Errno::EBADF)
}

impl MsgQueue {
    /// The attributes, with `flags` as the descriptor's O_NONBLOCK.
    pub fn attr(&self, flags: i64) -> MqAttr {
        MqAttr {
            flags,
            maxmsg: self.maxmsg as i64,
            msgsize: self.msgsize as i64,
            curmsgs: self.state.lock().count as i64,
            reserved: [0; 4],
        }
    }

    /// Sleeps until `ready()` holds: ETIMEDOUT at the counter value
    /// `deadline`, ERESTARTSYS on a signal (Linux: `wq_sleep`).
    fn wait_until(&self, ready: impl Fn(&State) -> bool, deadline: Option<u64>) -> KResult<()> {
        loop {
            let w = PollWaiter::for_current();
            self.wait.add(&w);
            if ready(&self.state.lock()) {
                return Ok(());
            }
            if crate::task::signal::signal_pending() {
                return Err(Errno::ERESTARTSYS);
            }
            let deadline = deadline.unwrap_or(u64::MAX);
            if timer::counter() >= deadline {
                return Err(Errno::ETIMEDOUT);
            }
            crate::task::sleep_until(deadline, || {
                w.woken() || crate::task::signal::signal_pending() || ready(&self.state.lock())
            });
        }
    }

    /// mq_timedsend after the checks of the descriptor (Linux:
    /// `do_mq_timedsend`): EMSGSIZE for a message over the queue's size;
    /// a full queue is EAGAIN under `nonblock`, else a wait until
    /// `deadline`. The sender's pid and real uid go in a notification.
    pub fn send(
        &self,
        msg: Vec<u8>,
        prio: u32,
        nonblock: bool,
        deadline: Option<u64>,
    ) -> KResult<()> {
        if msg.len() > self.msgsize {
            return Err(Errno::EMSGSIZE);
        }
        loop {
            {
                let mut s = self.state.lock();
                if s.count < self.maxmsg {
                    let was_empty = s.count == 0;
                    s.msgs.entry(prio).or_default().push_back(msg);
                    s.count += 1;
                    let notify = if was_empty && s.receivers == 0 {
                        s.notify.take()
                    } else {
                        None
                    };
                    drop(s);
                    self.wait.wake();
                    if let Some(n) = notify {
                        notify_owner(n);
                    }
                    return Ok(());
                }
            }
            if nonblock {
                return Err(Errno::EAGAIN);
            }
            self.wait_until(|s| s.count < self.maxmsg, deadline)?;
        }
    }

    /// mq_timedreceive after the checks of the descriptor (Linux:
    /// `do_mq_timedreceive`): the oldest message of the highest priority
    /// and that priority. EMSGSIZE for a buffer under the queue's message
    /// size; an empty queue is EAGAIN under `nonblock`, else a wait until
    /// `deadline`.
    pub fn receive(
        &self,
        len: usize,
        nonblock: bool,
        deadline: Option<u64>,
    ) -> KResult<(Vec<u8>, u32)> {
        if len < self.msgsize {
            return Err(Errno::EMSGSIZE);
        }
        loop {
            {
                let mut s = self.state.lock();
                if let Some(mut entry) = s.msgs.last_entry() {
                    let prio = *entry.key();
                    let msg = entry
                        .get_mut()
                        .pop_front()
                        .expect("no empty priority lists");
                    if entry.get().is_empty() {
                        entry.remove();
                    }
                    s.count -= 1;
                    drop(s);
                    self.wait.wake();
                    return Ok((msg, prio));
                }
                if nonblock {
                    return Err(Errno::EAGAIN);
                }
                s.receivers += 1;
            }
            let waited = self.wait_until(|s| s.count > 0, deadline);
            self.state.lock().receivers -= 1;
            waited?;
        }
    }

    /// mq_notify (Linux: `do_mq_notify`): registers the caller for
    /// `signal` (a signal and its value; None: SIGEV_NONE), or with
    /// `None` as the request removes its registration. EBUSY if any
    /// process, the caller too, is registered already.
    pub fn notify(&self, request: Option<Option<(u32, u64)>>) -> KResult<()> {
        let p = me()?;
        let mut s = self.state.lock();
        let owner = s.notify.as_ref().map(|n| n.owner.as_ptr());
        match request {
            None => {
                if owner == Some(Arc::as_ptr(&p)) {
                    s.notify = None;
                }
            }
            Some(_) if owner.is_some() => return Err(Errno::EBUSY),
            Some(signal) => {
                s.notify = Some(Notification {
                    owner: Arc::downgrade(&p),
                    signal: signal.filter(|&(sig, _)| sig != 0),
                });
            }
        }
        Ok(())
    }
}

/// Sends a registered notification, which is spent by it (Linux:
/// `__do_notify`): the signal with `si_code` SI_MESGQ, the sender's pid
/// and real uid, and the registered value.
fn notify_owner(n: Notification) {
    let (Some(owner), Some((sig, value))) = (n.owner.upgrade(), n.signal) else {
        return;
    };
    let Ok(sender) = me() else { return };
    let uid = sender.cred.lock().uid;
    let info = SigInfo {
        signo: sig,
        code: SI_MESGQ,
        fields: crate::task::signal_abi::SigFields::Rt {
            pid: sender.pid as i32,
            uid,
            value,
        },
    };
    queue_signal(&owner, sig, info);
}

/// Is `sig` a signal mq_notify may name (Linux: `valid_signal`; 0 is
/// allowed, and then nothing is sent)?
pub fn valid_signal(sig: u32) -> bool {
    sig <= SIGRTMAX
}

impl Device for MsgQueue {
    /// No text to show here (see the module comment).
    fn read(&self, _buf: &mut [u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::EINVAL)
    }

    /// Messages go through mq_timedsend only (Linux's mqueue files have
    /// no `write`).
    fn write(&self, _data: &[u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::EINVAL)
    }

    /// The owner's registration goes with its descriptor (Linux:
    /// `mqueue_flush_file`).
    fn released(&self, _flags: u32) {
        let _ = self.notify(None);
    }

    /// Linux: `mqueue_poll_file`.
    fn poll(&self, _flags: u32) -> u32 {
        let count = self.state.lock().count;
        let mut mask = 0;
        if count > 0 {
            mask |= POLLIN | POLLRDNORM;
        }
        if count < self.maxmsg {
            mask |= POLLOUT | POLLWRNORM;
        }
        mask
    }

    fn poll_wait(&self, w: &Arc<PollWaiter>) -> Option<u64> {
        self.wait.add(w);
        None
    }
}
