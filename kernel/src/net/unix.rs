//! AF_UNIX sockets (Linux: `net/unix/af_unix.c`): SOCK_STREAM, SOCK_DGRAM
//! and SOCK_SEQPACKET between processes of this machine, named by a path
//! (a socket inode in the filesystem), by an abstract name (leading NUL),
//! or not at all; file descriptors passed with SCM_RIGHTS.
//!
//! Every socket keeps a receive queue of packets: a datagram or seqpacket
//! message is one packet, read whole (the rest dropped, MSG_TRUNC); a
//! stream reads across packets. A sender puts its data straight on the
//! peer's queue and waits while that holds its send buffer's worth.
//!
//! Where we simplify: no credentials passing (SO_PASSCRED, SCM_CREDENTIALS),
//! no garbage collection of sockets passed over themselves in flight (they
//! stay until the machine stops), no MSG_OOB; opening a socket inode gives
//! a file whose reads and writes fail with ENXIO (Linux refuses the open).

use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::errno::{Errno, KResult};
use crate::fs::device::{Device, FIONREAD};
use crate::fs::poll::{
    PollQueue, PollWaiter, POLLHUP, POLLIN, POLLOUT, POLLRDHUP, POLLRDNORM, POLLWRBAND, POLLWRNORM,
};
use crate::fs::vfs::permission::{MAY_EXEC, MAY_WRITE};
use crate::fs::vfs::{self, File, Inode, InodeKind};
use crate::mm::heap;
use crate::sync::SpinLock;
pub use uapi::socket::{
    AF_UNIX, MSG_CTRUNC, MSG_DONTWAIT, MSG_NOSIGNAL, MSG_PEEK, MSG_TRUNC, MSG_WAITALL, SOCK_DGRAM,
    SOCK_RAW, SOCK_SEQPACKET, SOCK_STREAM, SO_ACCEPTCONN, SO_DOMAIN, SO_ERROR, SO_KEEPALIVE,
    SO_PASSCRED, SO_PEERCRED, SO_PROTOCOL, SO_RCVBUF, SO_REUSEADDR, SO_SNDBUF, SO_TYPE,
};
pub use uapi::stat::S_IFSOCK;

/// `sk_shutdown` bits.
const RCV_SHUTDOWN: u8 = 1;
/// SEND_SHUTDOWN: this end sends no more; the peer reads end of stream.
const SEND_SHUTDOWN: u8 = 2;
/// SHUTDOWN_MASK: both directions shut (shutdown(SHUT_RDWR), or closed).
const SHUTDOWN_MASK: u8 = 3;

/// The default and largest send and receive buffers (Linux:
/// `net.core.wmem_default` and `wmem_max`, 212992 on Debian), and the
/// smallest (`SOCK_MIN_SNDBUF`, `SOCK_MIN_RCVBUF` on 64-bit).
pub const SK_BUF_DEFAULT: usize = 212992;
/// `net.core.wmem_max`/`rmem_max`: the most SO_SNDBUF or SO_RCVBUF takes, in
/// bytes, before setsockopt doubles it.
const SK_BUF_MAX: usize = 212992;
/// `SOCK_MIN_SNDBUF`: the smallest send buffer setsockopt leaves, in bytes.
const SOCK_MIN_SNDBUF: usize = 4608;
/// `SOCK_MIN_RCVBUF`: the smallest receive buffer setsockopt leaves, in
/// bytes.
const SOCK_MIN_RCVBUF: usize = 2304;
/// Datagrams queued to a socket not connected back to the sender before
/// senders wait (Linux: `net.unix.max_dgram_qlen`).
const MAX_DGRAM_QLEN: usize = 10;
/// What Linux charges a socket for a packet of `len` bytes against its send
/// buffer (`skb->truesize`): the `struct sk_buff` (256 bytes on arm64) and
/// the head `kmalloc`, rounded up to its cache size, holding the data
/// (64-byte aligned) and a `struct skb_shared_info` (320 bytes); the data
/// past the largest head goes in page fragments, whole pages (a message's
/// head may be an order-2 allocation, `SKB_MAX_ALLOC`, a stream's one page,
/// `SKB_MAX_HEAD`: `unix_dgram_sendmsg`, `unix_stream_sendmsg`). A 1-byte
/// packet costs 768 bytes, so a sender of many tiny packets runs out of
/// send buffer as on Linux (278 of them in 212992 bytes), long before
/// kernel memory does.
fn truesize(len: usize, stream: bool) -> usize {
    const SKB: usize = 256;
    const SHINFO: usize = 320;
    const PAGE: usize = 4096;
    let max_head = if stream { PAGE } else { 4 * PAGE } - SHINFO;
    let (head, frags) = if len > max_head {
        let paged = (len - max_head).next_multiple_of(PAGE).min(len);
        (len - paged, paged.next_multiple_of(PAGE))
    } else {
        (len, 0)
    };
    let head = head.next_multiple_of(64) + SHINFO;
    // kmalloc's caches from 512 bytes are powers of two, as are the page
    // allocations past 8K.
    head.next_power_of_two().max(512) + SKB + frags
}

/// Most bytes one stream receive gathers, so a huge MSG_WAITALL cannot
/// size a kernel buffer: it returns short, as after a signal.
const STREAM_RECV_MAX: usize = 1 << 20;

/// The kind of socket.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SockType {
    /// SOCK_STREAM: a byte stream; reads cross packet boundaries.
    Stream,
    /// SOCK_DGRAM (and SOCK_RAW): connectionless messages, each read whole.
    Dgram,
    /// SOCK_SEQPACKET: connected like a stream, but each message is read
    /// whole.
    SeqPacket,
}

impl SockType {
    /// The type for socket(2)'s `type` (SOCK_NONBLOCK and SOCK_CLOEXEC
    /// already masked off): ESOCKTNOSUPPORT for a type below SOCK_MAX that
    /// AF_UNIX lacks, EINVAL for any other number.
    pub fn from_linux(ty: i32) -> KResult<SockType> {
        match ty {
            SOCK_STREAM => Ok(SockType::Stream),
            SOCK_DGRAM | SOCK_RAW => Ok(SockType::Dgram),
            SOCK_SEQPACKET => Ok(SockType::SeqPacket),
            // Linux: types below SOCK_MAX that AF_UNIX lacks (SOCK_RDM...).
            0..=10 => Err(Errno::ESOCKTNOSUPPORT),
            _ => Err(Errno::EINVAL),
        }
    }

    /// The SOCK_* number, as SO_TYPE reports it.
    pub fn to_linux(self) -> i32 {
        match self {
            SockType::Stream => SOCK_STREAM,
            SockType::Dgram => SOCK_DGRAM,
            SockType::SeqPacket => SOCK_SEQPACKET,
        }
    }

    /// Whether this is a connection type (stream or seqpacket): one that
    /// listens, accepts, and whose shutdown reaches the peer.
    fn connection(self) -> bool {
        self != SockType::Dgram
    }
}

/// A socket's name (Linux: `struct unix_address`).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub enum UnixAddr {
    /// No name: never bound (Linux: a NULL `unix_sock.addr`); getsockname
    /// gives the family alone.
    #[default]
    Unnamed,
    /// A filesystem path, where bind made a socket inode (`S_IFSOCK`).
    Path(String),
    /// The bytes after the leading NUL.
    Abstract(Vec<u8>),
}

/// `offsetof(struct sockaddr_un, sun_path)` and the whole struct's size.
const SUN_PATH_OFFSET: usize = 2;
/// `sizeof(struct sockaddr_un)`: the family and 108 bytes of `sun_path`.
pub const SOCKADDR_UN_SIZE: usize = 110;

impl UnixAddr {
    /// Parses a `struct sockaddr_un` of `bytes.len()` bytes (Linux:
    /// `unix_validate_addr`, `unix_mkname_bsd`); a bare family is Unnamed
    /// (bind autobinds it).
    pub fn parse(bytes: &[u8]) -> KResult<UnixAddr> {
        if bytes.len() < SUN_PATH_OFFSET || bytes.len() > SOCKADDR_UN_SIZE {
            return Err(Errno::EINVAL);
        }
        if u16::from_ne_bytes([bytes[0], bytes[1]]) != AF_UNIX as u16 {
            return Err(Errno::EINVAL);
        }
        let path = &bytes[SUN_PATH_OFFSET..];
        match path.first() {
            None => Ok(UnixAddr::Unnamed),
            Some(0) => Ok(UnixAddr::Abstract(path[1..].to_vec())),
            Some(_) => {
                let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
                let s = core::str::from_utf8(&path[..end]).map_err(|_| Errno::EINVAL)?;
                Ok(UnixAddr::Path(String::from(s)))
            }
        }
    }

    /// The `struct sockaddr_un` getsockname and friends return: the family
    /// alone for no name, the path with its NUL, or NUL and the abstract
    /// name (Linux: `unix_getname`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = (AF_UNIX as u16).to_ne_bytes().to_vec();
        match self {
            UnixAddr::Unnamed => {}
            UnixAddr::Path(p) => {
                out.extend_from_slice(p.as_bytes());
                out.push(0);
            }
            UnixAddr::Abstract(n) => {
                out.push(0);
                out.extend_from_slice(n);
            }
        }
        out
    }
}

/// One message or piece of a stream on a receive queue (Linux: an skb
/// with its `unix_skb_parms`).
struct Packet {
    /// The message, or this piece of a stream, as the sender wrote it.
    data: Vec<u8>,
    /// Bytes of a stream packet already read.
    off: usize,
    /// The sender's name when it sent, for recvfrom's address.
    from: UnixAddr,
    /// Files passed with SCM_RIGHTS (Linux: `UNIXCB(skb).fp`); a stream hands
    /// them to the read that takes this packet's first bytes.
    fds: Vec<Arc<File>>,
}

/// Where a connection socket is in its life (Linux: `sk_state`). A datagram
/// socket stays `Unconnected`; its connect only sets `peer`.
enum Phase {
    /// Neither listening nor connected (Linux: `TCP_CLOSE`).
    Unconnected,
    /// listen(2) was called (Linux: `TCP_LISTEN`): connects queue here.
    Listening {
        /// connect waits while more than this many connections are pending
        /// (Linux: `sk_max_ack_backlog`); listen's argument, at most 4096.
        backlog: usize,
        /// Server-side sockets of connections not yet accepted, oldest first
        /// (Linux keeps them as skbs on the listener's receive queue).
        pending: VecDeque<Arc<UnixSocket>>,
    },
    /// Joined to `peer` (Linux: `TCP_ESTABLISHED`), by connect, accept or
    /// socketpair.
    Connected,
}

/// A socket's changing state, all under `UnixSocket::state`.
struct SockState {
    /// Unconnected, listening or connected.
    phase: Phase,
    /// The name bind or autobind gave it (Linux: `unix_sock.addr`); a socket
    /// from accept carries its listener's name.
    addr: UnixAddr,
    /// A stream's other end, or a datagram socket's default destination.
    peer: Option<Arc<UnixSocket>>,
    /// Received packets, oldest first (Linux: `sk_receive_queue`).
    rx: VecDeque<Packet>,
    /// Unread bytes on `rx`.
    rx_bytes: usize,
    /// What the packets on `rx` cost (`truesize`), charged against their
    /// sender's send buffer (Linux: the senders' `sk_wmem_alloc`).
    rx_charge: usize,
    /// `RCV_SHUTDOWN` and `SEND_SHUTDOWN` bits: the directions closed by
    /// shutdown(2), by the peer's shutdown or by close (Linux:
    /// `sk_shutdown`).
    shutdown: u8,
    /// Closed: its last file is gone.
    dead: bool,
    /// Send buffer in bytes (SO_SNDBUF, Linux: `sk_sndbuf`): a sender
    /// waits while what it queued at the peer costs this much
    /// (`rx_charge`), and a stream sender also while the peer holds this
    /// many unread bytes.
    sndbuf: usize,
    /// Receive buffer in bytes (SO_RCVBUF, Linux: `sk_rcvbuf`), which
    /// AF_UNIX only reports, as on Linux.
    rcvbuf: usize,
    /// SO_PEERCRED's pid: the other end's process when it connected.
    peer_pid: u32,
    /// The process that called listen, for its clients' SO_PEERCRED.
    listen_pid: u32,
}

/// One AF_UNIX socket (Linux: `struct unix_sock`).
pub struct UnixSocket {
    /// Stream, datagram or seqpacket, fixed at creation (Linux: `sk_type`).
    pub ty: SockType,
    /// All the socket's changing state, under one lock (Linux:
    /// `unix_state_lock`).
    state: SpinLock<SockState>,
    /// Readers, writers, acceptors, connecting callers and pollers.
    wait: PollQueue,
    /// This socket's own `Arc`, weakly, so a method on `&self` can hand the
    /// socket out (as a peer, or as what a bound name refers to).
    me: Weak<UnixSocket>,
}

/// What a receive returns.
pub struct Received {
    /// The bytes read: at most the length asked for.
    pub data: Vec<u8>,
    /// The message's whole length (more than `data` when truncated).
    pub len: usize,
    /// The sender's name, for recvfrom; `Unnamed` if it had none.
    pub from: UnixAddr,
    /// Files passed with SCM_RIGHTS, for the caller to install as
    /// descriptors.
    pub fds: Vec<Arc<File>>,
    /// The message was longer than asked for and its tail is gone (MSG_TRUNC
    /// in `msg_flags`).
    pub truncated: bool,
}

/// Abstract names in use (Linux: the `unix_socket_table` hash of them).
static ABSTRACT: SpinLock<BTreeMap<Vec<u8>, Weak<UnixSocket>>> = SpinLock::new(BTreeMap::new());
/// The next autobind name, five hex digits as Linux's.
static AUTOBIND: AtomicU32 = AtomicU32::new(0);

/// What a bound path's inode holds: the socket listening there, weakly,
/// so the name stays after the socket closes and connects are refused.
pub struct UnixNode {
    /// The socket bound to this path; dead once that socket is closed, and
    /// connect then fails with ECONNREFUSED.
    sock: Weak<UnixSocket>,
}

impl Device for UnixNode {
    fn read(&self, _buf: &mut [u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::ENXIO)
    }
    fn write(&self, _data: &[u8], _nonblock: bool) -> KResult<usize> {
        Err(Errno::ENXIO)
    }
}

/// The calling process's pid, for SO_PEERCRED; 0 from a kernel thread.
fn current_pid() -> u32 {
    crate::task::current_process().map_or(0, |p| p.pid)
}

impl UnixSocket {
    /// An unbound, unconnected socket of type `ty` with default buffer sizes
    /// (Linux: `unix_create1`).
    pub fn new(ty: SockType) -> Arc<UnixSocket> {
        Arc::new_cyclic(|me| UnixSocket {
            ty,
            state: SpinLock::new(SockState {
                phase: Phase::Unconnected,
                addr: UnixAddr::Unnamed,
                peer: None,
                rx: VecDeque::new(),
                rx_bytes: 0,
                rx_charge: 0,
                shutdown: 0,
                dead: false,
                sndbuf: SK_BUF_DEFAULT,
                rcvbuf: SK_BUF_DEFAULT,
                peer_pid: 0,
                listen_pid: 0,
            }),
            wait: PollQueue::new(),
            me: me.clone(),
        })
    }

    /// This socket's own `Arc`, upgraded from `me`.
    fn arc(&self) -> Arc<UnixSocket> {
        self.me.upgrade().expect("a socket in use is alive")
    }

    /// socketpair(2): two sockets connected to each other (Linux:
    /// `unix_socketpair`).
    pub fn pair(ty: SockType) -> (Arc<UnixSocket>, Arc<UnixSocket>) {
        let (a, b) = (Self::new(ty), Self::new(ty));
        let pid = current_pid();
        for (x, y) in [(&a, &b), (&b, &a)] {
            let mut st = x.state.lock();
            st.peer = Some(y.clone());
            st.phase = Phase::Connected;
            st.peer_pid = pid;
        }
        (a, b)
    }

    /// The socket open as `f`, if it is one.
    pub fn of_file(f: &File) -> Option<Arc<UnixSocket>> {
        f.device::<UnixSocket>()
    }

    /// The socket named `addr`, for connect and sendto (Linux:
    /// `unix_find_other`): ENOENT for a missing path, ECONNREFUSED for a
    /// name nobody is bound to now, EPROTOTYPE for another socket type.
    fn find(&self, cwd: &Arc<Inode>, addr: &UnixAddr) -> KResult<Arc<UnixSocket>> {
        let other = match addr {
            UnixAddr::Unnamed => return Err(Errno::EINVAL),
            UnixAddr::Path(p) => {
                let inode = vfs::lookup(cwd, p, true)?;
                // Linux: `unix_find_bsd`, write permission on the socket.
                inode.permission(MAY_WRITE)?;
                let node = match &inode.kind {
                    InodeKind::Device(d) if inode.mode() & vfs::S_IFMT == S_IFSOCK => d
                        .as_any()
                        .downcast_ref::<UnixNode>()
                        .map(|n| n.sock.clone()),
                    _ => None,
                };
                node.and_then(|w| w.upgrade())
            }
            UnixAddr::Abstract(n) => ABSTRACT.lock().get(n).and_then(Weak::upgrade),
        };
        let other = other.ok_or(Errno::ECONNREFUSED)?;
        if other.ty != self.ty {
            return Err(Errno::EPROTOTYPE);
        }
        Ok(other)
    }

    /// bind(2) (Linux: `unix_bind`): a path makes a socket inode (EADDRINUSE
    /// if the name exists), an abstract name goes in the table, a bare
    /// family picks an abstract name (autobind). EINVAL if already bound.
    pub fn bind(&self, cwd: &Arc<Inode>, addr: UnixAddr, umask: u32) -> KResult<()> {
        let bound = || self.state.lock().addr != UnixAddr::Unnamed;
        match &addr {
            UnixAddr::Path(p) => {
                // Linux looks the path up first: a taken name is
                // EADDRINUSE even for a socket already bound.
                let (dir, name) = vfs::lookup_parent(cwd, p)?;
                let d = dir.dir()?;
                if name == "." || name == ".." || d.lookup(name).is_some() {
                    return Err(Errno::EADDRINUSE);
                }
                if d.sb.is_none() {
                    return Err(Errno::EACCES);
                }
                if bound() {
                    return Err(Errno::EINVAL);
                }
                // Linux: `vfs_mknod` -> `may_create`.
                dir.permission(MAY_WRITE | MAY_EXEC)?;
                let node = Arc::new(UnixNode {
                    sock: self.me.clone(),
                });
                let inode = Inode::new(S_IFSOCK | (0o777 & !umask), InodeKind::Device(node));
                inode.init_owner(Some(&dir));
                d.link(&dir, name, inode).map_err(|e| match e {
                    Errno::EEXIST => Errno::EADDRINUSE,
                    e => e,
                })?;
            }
            UnixAddr::Abstract(_) | UnixAddr::Unnamed if bound() => return Err(Errno::EINVAL),
            UnixAddr::Unnamed => return self.autobind(),
            UnixAddr::Abstract(n) => {
                let mut table = ABSTRACT.lock();
                if table.get(n).is_some_and(|w| w.strong_count() > 0) {
                    return Err(Errno::EADDRINUSE);
                }
                table.insert(n.clone(), self.me.clone());
            }
        }
        self.state.lock().addr = addr;
        Ok(())
    }

    /// A free abstract name of five hex digits (Linux: `unix_autobind`).
    fn autobind(&self) -> KResult<()> {
        let mut table = ABSTRACT.lock();
        for _ in 0..0x100000 {
            let n = AUTOBIND.fetch_add(1, Ordering::Relaxed) & 0xfffff;
            let name = alloc::format!("{:05x}", n).into_bytes();
            if table.get(&name).is_none_or(|w| w.strong_count() == 0) {
                table.insert(name.clone(), self.me.clone());
                drop(table);
                self.state.lock().addr = UnixAddr::Abstract(name);
                return Ok(());
            }
        }
        Err(Errno::ENOSPC)
    }

    /// listen(2): EINVAL unbound, connected or not a connection socket
    /// (Linux: `unix_listen`); a second listen changes the backlog.
    pub fn listen(&self, backlog: i32) -> KResult<()> {
        if !self.ty.connection() {
            return Err(Errno::EOPNOTSUPP);
        }
        let mut st = self.state.lock();
        if st.addr == UnixAddr::Unnamed {
            return Err(Errno::EINVAL);
        }
        // Linux: a negative backlog is the maximum (somaxconn, 4096).
        let backlog = if backlog < 0 {
            4096
        } else {
            backlog.min(4096) as usize
        };
        match &mut st.phase {
            Phase::Connected => return Err(Errno::EINVAL),
            Phase::Listening { backlog: b, .. } => *b = backlog,
            Phase::Unconnected => {
                st.phase = Phase::Listening {
                    backlog,
                    pending: VecDeque::new(),
                }
            }
        }
        st.listen_pid = current_pid();
        drop(st);
        self.wait.wake();
        Ok(())
    }

    /// connect(2) (Linux: `unix_stream_connect`, `unix_dgram_connect`): a
    /// stream or seqpacket socket queues a new server-side socket on the
    /// listener and is connected at once; a datagram socket sets its
    /// default destination.
    pub fn connect(&self, cwd: &Arc<Inode>, addr: &UnixAddr, nonblock: bool) -> KResult<()> {
        let other = self.find(cwd, addr)?;
        if !self.ty.connection() {
            self.state.lock().peer = Some(other);
            return Ok(());
        }
        match self.state.lock().phase {
            Phase::Connected => return Err(Errno::EISCONN),
            Phase::Listening { .. } => return Err(Errno::EINVAL),
            Phase::Unconnected => {}
        }
        loop {
            let queued = {
                let mut guard = other.state.lock();
                let ost = &mut *guard;
                if ost.dead {
                    return Err(Errno::ECONNREFUSED);
                }
                let addr = ost.addr.clone();
                let listen_pid = ost.listen_pid;
                let Phase::Listening { backlog, pending } = &mut ost.phase else {
                    return Err(Errno::ECONNREFUSED);
                };
                // Linux: `unix_recvq_full`, more than the backlog waiting.
                (pending.len() <= *backlog).then(|| {
                    let server = UnixSocket::new(self.ty);
                    {
                        let mut sst = server.state.lock();
                        sst.phase = Phase::Connected;
                        sst.peer = Some(self.arc());
                        sst.addr = addr;
                        sst.peer_pid = current_pid();
                    }
                    pending.push_back(server.clone());
                    (server, listen_pid)
                })
            };
            if let Some((server, listen_pid)) = queued {
                {
                    let mut st = self.state.lock();
                    st.phase = Phase::Connected;
                    st.peer = Some(server);
                    st.peer_pid = listen_pid;
                }
                other.wait.wake_key(POLLIN);
                return Ok(());
            }
            if nonblock {
                return Err(Errno::EAGAIN);
            }
            other.wait.wait_event(|| {
                let st = other.state.lock();
                match &st.phase {
                    Phase::Listening { backlog, pending } => st.dead || pending.len() <= *backlog,
                    _ => true,
                }
            })?;
        }
    }

    /// accept(2): the next queued connection (Linux: `unix_accept`);
    /// EINVAL if not listening.
    pub fn accept(&self, nonblock: bool) -> KResult<Arc<UnixSocket>> {
        loop {
            {
                let mut st = self.state.lock();
                let Phase::Listening { pending, .. } = &mut st.phase else {
                    return Err(Errno::EINVAL);
                };
                if let Some(s) = pending.pop_front() {
                    drop(st);
                    // A connect waiting for room in the backlog.
                    self.wait.wake();
                    return Ok(s);
                }
            }
            if nonblock {
                return Err(Errno::EAGAIN);
            }
            self.wait.wait_event(|| match &self.state.lock().phase {
                Phase::Listening { pending, .. } => !pending.is_empty(),
                _ => true,
            })?;
        }
    }

    /// The socket's own name, for getsockname(2) (Linux: `unix_getname`).
    pub fn name(&self) -> UnixAddr {
        self.state.lock().addr.clone()
    }

    /// The peer's name; ENOTCONN without one (Linux: `unix_getname` peer).
    pub fn peer_name(&self) -> KResult<UnixAddr> {
        let peer = self.state.lock().peer.clone().ok_or(Errno::ENOTCONN)?;
        let name = peer.name();
        Ok(name)
    }

    /// shutdown(2): stops this end's receiving and/or sending and the
    /// matching half of the peer's (Linux: `unix_shutdown`).
    pub fn shutdown(&self, how: i32) -> KResult<()> {
        let mode = match how {
            0 => RCV_SHUTDOWN,
            1 => SEND_SHUTDOWN,
            2 => SHUTDOWN_MASK,
            _ => return Err(Errno::EINVAL),
        };
        let peer = {
            let mut st = self.state.lock();
            st.shutdown |= mode;
            st.peer.clone()
        };
        if let Some(peer) = peer.filter(|_| self.ty.connection()) {
            let mut peer_mode = 0;
            if mode & RCV_SHUTDOWN != 0 {
                peer_mode |= SEND_SHUTDOWN;
            }
            if mode & SEND_SHUTDOWN != 0 {
                peer_mode |= RCV_SHUTDOWN;
            }
            peer.state.lock().shutdown |= peer_mode;
            peer.wait.wake();
        }
        self.wait.wake();
        Ok(())
    }

    /// Sends `len` bytes that `fill(offset, buf)` copies in, to `to` (an
    /// address and the directory a path starts from) or the peer, with
    /// `fds` for SCM_RIGHTS (Linux: `unix_stream_sendmsg`,
    /// `unix_dgram_sendmsg`, `unix_seqpacket_sendmsg`). EPIPE (and SIGPIPE
    /// unless MSG_NOSIGNAL) once the stream cannot carry data any more.
    pub fn send(
        &self,
        fill: &mut dyn FnMut(usize, &mut [u8]) -> KResult<()>,
        len: usize,
        to: Option<(UnixAddr, Arc<Inode>)>,
        fds: Vec<Arc<File>>,
        flags: u32,
        nonblock: bool,
    ) -> KResult<usize> {
        let nonblock = nonblock || flags & MSG_DONTWAIT != 0;
        match self.ty {
            SockType::Stream => {
                if to.is_some() {
                    return Err(if matches!(self.state.lock().phase, Phase::Connected) {
                        Errno::EISCONN
                    } else {
                        Errno::EOPNOTSUPP
                    });
                }
                self.send_stream(fill, len, fds, flags, nonblock)
            }
            // Linux ignores a seqpacket send's address.
            SockType::SeqPacket => self.send_packet(None, fill, len, fds, flags, nonblock),
            SockType::Dgram => {
                let dest = match to {
                    Some((a, cwd)) => Some(self.find(&cwd, &a)?),
                    None => None,
                };
                self.send_packet(dest, fill, len, fds, flags, nonblock)
            }
        }
    }

    /// EPIPE for a stream that can send no more, with SIGPIPE unless
    /// MSG_NOSIGNAL (Linux: `pipe_err` in `unix_stream_sendmsg`).
    fn epipe(flags: u32) -> Errno {
        if flags & MSG_NOSIGNAL == 0 {
            crate::task::signal::send_to_current(crate::task::signal_abi::SIGPIPE);
        }
        Errno::EPIPE
    }

    /// The peer a connection socket sends to, or its error.
    fn stream_peer(&self, flags: u32) -> KResult<Arc<UnixSocket>> {
        let st = self.state.lock();
        if st.shutdown & SEND_SHUTDOWN != 0 {
            drop(st);
            return Err(Self::epipe(flags));
        }
        match (&st.phase, &st.peer) {
            (Phase::Connected, Some(p)) => Ok(p.clone()),
            _ => Err(Errno::ENOTCONN),
        }
    }

    /// A stream send: the data goes onto the peer's queue in packets as large
    /// as the room left there (`sndbuf` less its unread bytes), waiting for
    /// room unless `nonblock`; the descriptors ride on the first packet.
    /// Short if an error or signal comes after some bytes went (Linux:
    /// `unix_stream_sendmsg`).
    fn send_stream(
        &self,
        fill: &mut dyn FnMut(usize, &mut [u8]) -> KResult<()>,
        len: usize,
        mut fds: Vec<Arc<File>>,
        flags: u32,
        nonblock: bool,
    ) -> KResult<usize> {
        let mut done = 0;
        let (sndbuf, from) = {
            let st = self.state.lock();
            (st.sndbuf, st.addr.clone())
        };
        loop {
            let peer = match self.stream_peer(flags) {
                Ok(p) => p,
                Err(e) if done == 0 => return Err(e),
                Err(_) => return Ok(done),
            };
            let room = {
                let pst = peer.state.lock();
                if pst.dead || pst.shutdown & RCV_SHUTDOWN != 0 {
                    drop(pst);
                    let e = Self::epipe(flags);
                    return if done == 0 { Err(e) } else { Ok(done) };
                }
                if pst.rx_charge >= sndbuf {
                    0
                } else {
                    sndbuf.saturating_sub(pst.rx_bytes)
                }
            };
            if room == 0 {
                if nonblock {
                    return if done == 0 {
                        Err(Errno::EAGAIN)
                    } else {
                        Ok(done)
                    };
                }
                let waited = self.wait.wait_event(|| {
                    let pst = peer.state.lock();
                    pst.dead
                        || pst.shutdown & RCV_SHUTDOWN != 0
                        || (pst.rx_bytes < sndbuf && pst.rx_charge < sndbuf)
                });
                if let Err(e) = waited {
                    return if done == 0 { Err(e) } else { Ok(done) };
                }
                continue;
            }
            let n = room.min(len - done);
            let mut data = match heap::try_zeroed(n) {
                Ok(data) => data,
                Err(e) => return if done == 0 { Err(e) } else { Ok(done) },
            };
            if let Err(e) = fill(done, &mut data) {
                return if done == 0 { Err(e) } else { Ok(done) };
            }
            peer.queue(Packet {
                data,
                off: 0,
                from: from.clone(),
                fds: core::mem::take(&mut fds),
            });
            done += n;
            if done == len {
                return Ok(done);
            }
        }
    }

    /// A datagram or seqpacket send: one message, whole, to `dest` or else
    /// the peer. EMSGSIZE if it could never fit the send buffer; waits while
    /// the receiver's queue is full, or fails with EAGAIN if `nonblock`
    /// (Linux: `unix_dgram_sendmsg`).
    fn send_packet(
        &self,
        dest: Option<Arc<UnixSocket>>,
        fill: &mut dyn FnMut(usize, &mut [u8]) -> KResult<()>,
        len: usize,
        fds: Vec<Arc<File>>,
        flags: u32,
        nonblock: bool,
    ) -> KResult<usize> {
        let (sndbuf, from) = {
            let st = self.state.lock();
            (st.sndbuf, st.addr.clone())
        };
        if len > sndbuf.saturating_sub(32) {
            return Err(Errno::EMSGSIZE);
        }
        let dest = match dest {
            Some(d) => d,
            None if self.ty == SockType::SeqPacket => self.stream_peer(flags)?,
            None => self.state.lock().peer.clone().ok_or(Errno::ENOTCONN)?,
        };
        let mut data = heap::try_zeroed(len)?;
        fill(0, &mut data)?;
        let me = self.arc();
        loop {
            {
                let dst = dest.state.lock();
                if dst.dead {
                    drop(dst);
                    return Err(if self.ty == SockType::SeqPacket {
                        Self::epipe(flags)
                    } else {
                        Errno::ECONNREFUSED
                    });
                }
                let mutual = dst.peer.as_ref().is_some_and(|p| Arc::ptr_eq(p, &me));
                if self.ty == SockType::Dgram && dst.peer.is_some() && !mutual {
                    // Linux: `unix_may_send`, the receiver talks to another.
                    return Err(Errno::EPERM);
                }
                if self.ty == SockType::SeqPacket && dst.shutdown & RCV_SHUTDOWN != 0 {
                    drop(dst);
                    return Err(Self::epipe(flags));
                }
                let full = dst.rx_charge >= sndbuf || (!mutual && dst.rx.len() > MAX_DGRAM_QLEN);
                if !full {
                    drop(dst);
                    dest.queue(Packet {
                        data,
                        off: 0,
                        from,
                        fds,
                    });
                    return Ok(len);
                }
            }
            if nonblock {
                return Err(Errno::EAGAIN);
            }
            // The receiver's reads wake its own queue's writers too.
            dest.wait.wait_event(|| {
                let dst = dest.state.lock();
                dst.dead || (dst.rx_charge < sndbuf && dst.rx.len() <= MAX_DGRAM_QLEN)
            })?;
        }
    }

    /// Puts a packet on this socket's receive queue and wakes its readers.
    fn queue(&self, p: Packet) {
        {
            let mut st = self.state.lock();
            st.rx_bytes += p.data.len();
            st.rx_charge += truesize(p.data.len(), self.ty == SockType::Stream);
            st.rx.push_back(p);
        }
        self.wait.wake_key(POLLIN);
    }

    /// Receives up to `len` bytes (Linux: `unix_stream_recvmsg`,
    /// `unix_dgram_recvmsg`): 0 at end of stream, EAGAIN or a wait with
    /// nothing queued.
    pub fn recv(&self, len: usize, flags: u32, nonblock: bool) -> KResult<Received> {
        let nonblock = nonblock || flags & MSG_DONTWAIT != 0;
        if self.ty.connection() {
            let st = self.state.lock();
            if !matches!(st.phase, Phase::Connected) && st.rx.is_empty() {
                // Linux: EINVAL for a stream that is not connected,
                // ENOTCONN for a seqpacket socket.
                return Err(if self.ty == SockType::Stream {
                    Errno::EINVAL
                } else {
                    Errno::ENOTCONN
                });
            }
        }
        let mut out = Received {
            data: Vec::new(),
            len: 0,
            from: UnixAddr::Unnamed,
            fds: Vec::new(),
            truncated: false,
        };
        let want = len.min(STREAM_RECV_MAX);
        loop {
            let got = if self.ty == SockType::Stream {
                self.take_stream(&mut out, want, flags)
            } else {
                self.take_packet(&mut out, len, flags)
            };
            let (eof, peer) = {
                let st = self.state.lock();
                (st.shutdown & RCV_SHUTDOWN != 0, st.peer.clone())
            };
            if got {
                // Room freed for the peer's writers.
                if flags & MSG_PEEK == 0 {
                    if let Some(p) = peer {
                        p.wait.wake_key(POLLOUT);
                    }
                    self.wait.wake_key(POLLOUT);
                }
                let more = self.ty == SockType::Stream
                    && flags & MSG_WAITALL != 0
                    && flags & MSG_PEEK == 0
                    && out.data.len() < want
                    && !eof;
                if !more {
                    return Ok(out);
                }
            } else if eof || want == 0 {
                return Ok(out);
            }
            if nonblock {
                return if out.data.is_empty() {
                    Err(Errno::EAGAIN)
                } else {
                    Ok(out)
                };
            }
            let waited = self.wait.wait_event(|| {
                let st = self.state.lock();
                !st.rx.is_empty() || st.shutdown & RCV_SHUTDOWN != 0
            });
            if let Err(e) = waited {
                return if out.data.is_empty() { Err(e) } else { Ok(out) };
            }
        }
    }

    /// Moves stream bytes into `out` up to `want`; stops before a packet
    /// carrying descriptors once some bytes are taken, so they arrive
    /// with their own data. True if anything was taken.
    fn take_stream(&self, out: &mut Received, want: usize, flags: u32) -> bool {
        let mut st = self.state.lock();
        let st = &mut *st;
        let mut taken = 0;
        let mut idx = 0;
        while out.data.len() < want && idx < st.rx.len() {
            let p = &mut st.rx[idx];
            if !p.fds.is_empty() && (!out.data.is_empty() || !out.fds.is_empty()) {
                break;
            }
            let n = (want - out.data.len()).min(p.data.len() - p.off);
            // No memory for more: what was taken is the read.
            if out.data.try_reserve(n).is_err() {
                break;
            }
            if out.data.is_empty() {
                out.from = p.from.clone();
            }
            out.data.extend_from_slice(&p.data[p.off..p.off + n]);
            if flags & MSG_PEEK != 0 {
                out.fds.extend(p.fds.iter().cloned());
                idx += 1;
                if n < p.data.len() - p.off {
                    break;
                }
                continue;
            }
            out.fds.append(&mut p.fds);
            p.off += n;
            taken += n;
            if p.off == p.data.len() {
                let charge = truesize(p.data.len(), self.ty == SockType::Stream);
                st.rx.pop_front();
                st.rx_charge -= charge;
            } else {
                break;
            }
        }
        st.rx_bytes -= taken;
        out.len = out.data.len();
        !out.data.is_empty() || !out.fds.is_empty()
    }

    /// Takes one whole message (MSG_TRUNC if it is longer than `len`).
    fn take_packet(&self, out: &mut Received, len: usize, flags: u32) -> bool {
        let mut st = self.state.lock();
        let p = if flags & MSG_PEEK != 0 {
            match st.rx.front() {
                Some(p) => Packet {
                    data: p.data.clone(),
                    off: 0,
                    from: p.from.clone(),
                    fds: p.fds.clone(),
                },
                None => return false,
            }
        } else {
            match st.rx.pop_front() {
                Some(p) => {
                    st.rx_bytes -= p.data.len();
                    st.rx_charge -= truesize(p.data.len(), self.ty == SockType::Stream);
                    p
                }
                None => return false,
            }
        };
        drop(st);
        out.len = p.data.len();
        out.truncated = p.data.len() > len;
        let mut data = p.data;
        data.truncate(len);
        out.data = data;
        out.from = p.from;
        out.fds = p.fds;
        true
    }

    /// Bytes a read would see now (FIONREAD: all queued for a stream, the
    /// next message for the others, as Linux's `unix_inq_len`).
    fn inq_len(&self) -> usize {
        let st = self.state.lock();
        match self.ty {
            SockType::Stream | SockType::SeqPacket => st.rx_bytes,
            SockType::Dgram => st.rx.front().map_or(0, |p| p.data.len()),
        }
    }

    /// getsockopt(SOL_SOCKET, ...) values (Linux: `sk_getsockopt`), as the
    /// bytes to copy out.
    pub fn getsockopt(&self, name: i32) -> KResult<Vec<u8>> {
        let st = self.state.lock();
        let int = |v: i32| v.to_ne_bytes().to_vec();
        Ok(match name {
            SO_TYPE => int(self.ty.to_linux()),
            SO_ERROR => int(0),
            SO_SNDBUF => int(st.sndbuf as i32),
            SO_RCVBUF => int(st.rcvbuf as i32),
            SO_ACCEPTCONN => int(matches!(st.phase, Phase::Listening { .. }) as i32),
            SO_DOMAIN => int(AF_UNIX),
            SO_PROTOCOL => int(0),
            SO_PEERCRED => {
                let mut b = Vec::with_capacity(12);
                b.extend_from_slice(&st.peer_pid.to_ne_bytes());
                b.extend_from_slice(&[0u8; 8]);
                b
            }
            SO_REUSEADDR | SO_KEEPALIVE | SO_PASSCRED => int(0),
            _ => return Err(Errno::ENOPROTOOPT),
        })
    }

    /// setsockopt(SOL_SOCKET, ...) (Linux: `sk_setsockopt`): buffer sizes
    /// are doubled, capped and floored as there.
    pub fn setsockopt(&self, name: i32, val: i32) -> KResult<()> {
        let mut st = self.state.lock();
        let size = (val.max(0) as usize).min(SK_BUF_MAX) * 2;
        match name {
            SO_SNDBUF => st.sndbuf = size.max(SOCK_MIN_SNDBUF),
            SO_RCVBUF => st.rcvbuf = size.max(SOCK_MIN_RCVBUF),
            SO_REUSEADDR | SO_KEEPALIVE | SO_PASSCRED => {}
            _ => return Err(Errno::ENOPROTOOPT),
        }
        drop(st);
        // More room may mean writable.
        self.wait.wake();
        Ok(())
    }
}

impl Device for UnixSocket {
    /// read(2): a receive with no flags.
    fn read(&self, buf: &mut [u8], nonblock: bool) -> KResult<usize> {
        let r = self.recv(buf.len(), 0, nonblock)?;
        buf[..r.data.len()].copy_from_slice(&r.data);
        // Descriptors sent with the bytes are dropped, as Linux does for a
        // read without room for control messages.
        Ok(r.data.len())
    }

    /// write(2): a send with no flags (SIGPIPE on a broken stream).
    fn write(&self, data: &[u8], nonblock: bool) -> KResult<usize> {
        let mut fill = |off: usize, buf: &mut [u8]| {
            buf.copy_from_slice(&data[off..off + buf.len()]);
            Ok(())
        };
        self.send(&mut fill, data.len(), None, Vec::new(), 0, nonblock)
    }

    fn ioctl(&self, cmd: u32, arg: usize) -> KResult<i64> {
        match cmd {
            FIONREAD => crate::mm::uaccess::write_user(arg, &(self.inq_len() as i32)).map(|_| 0),
            _ => Err(Errno::ENOTTY),
        }
    }

    /// The last file of the socket is gone (Linux: `unix_release_sock`):
    /// the peer sees end of stream and EPIPE, queued connections and
    /// messages are dropped, an abstract name is freed.
    fn released(&self, _flags: u32) {
        let (peer, rx, pending, addr) = {
            let mut st = self.state.lock();
            st.dead = true;
            st.shutdown = SHUTDOWN_MASK;
            st.rx_bytes = 0;
            st.rx_charge = 0;
            let pending = match core::mem::replace(&mut st.phase, Phase::Unconnected) {
                Phase::Listening { pending, .. } => pending,
                _ => VecDeque::new(),
            };
            (
                st.peer.take(),
                core::mem::take(&mut st.rx),
                pending,
                st.addr.clone(),
            )
        };
        if let Some(peer) = peer {
            if self.ty.connection() {
                peer.state.lock().shutdown = SHUTDOWN_MASK;
            }
            peer.wait.wake();
        }
        if let UnixAddr::Abstract(n) = addr {
            let mut table = ABSTRACT.lock();
            if table
                .get(&n)
                .is_some_and(|w| core::ptr::eq(w.as_ptr(), self as *const _))
            {
                table.remove(&n);
            }
        }
        // Connections never accepted close as if accepted and closed.
        for s in pending {
            s.released(vfs::O_RDWR);
        }
        drop(rx);
        self.wait.wake();
    }

    /// Linux: `unix_poll` (streams, seqpacket) and `unix_dgram_poll`.
    fn poll(&self, _flags: u32) -> u32 {
        let st = self.state.lock();
        let mut mask = 0;
        if st.shutdown == SHUTDOWN_MASK {
            mask |= POLLHUP;
        }
        if st.shutdown & RCV_SHUTDOWN != 0 {
            mask |= POLLRDHUP | POLLIN | POLLRDNORM;
        }
        let readable = match &st.phase {
            Phase::Listening { pending, .. } => !pending.is_empty(),
            _ => !st.rx.is_empty(),
        };
        if readable {
            mask |= POLLIN | POLLRDNORM;
        }
        if self.ty.connection() && matches!(st.phase, Phase::Unconnected) {
            mask |= POLLHUP;
        }
        if matches!(st.phase, Phase::Listening { .. }) {
            return mask;
        }
        let (sndbuf, peer) = (st.sndbuf, st.peer.clone());
        drop(st);
        let writable = match peer {
            Some(p) => {
                let pst = p.state.lock();
                pst.dead || (pst.rx_bytes < sndbuf && pst.rx_charge < sndbuf)
            }
            None => true,
        };
        if writable {
            mask |= POLLOUT | POLLWRNORM | POLLWRBAND;
        }
        mask
    }

    fn poll_wait(&self, w: &Arc<PollWaiter>) -> Option<u64> {
        self.wait.add(w);
        None
    }
}
