//! Socket system calls (Linux: `net/socket.c`, `net/core/sock.c`,
//! `net/core/scm.c`), for AF_UNIX sockets (`net/unix.rs`); other families
//! are EAFNOSUPPORT.

use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::fs::{file, install, me, O_CLOEXEC};
use super::SysResult;
use crate::errno::{Errno, KResult};
use crate::fs::vfs::{File, Inode, InodeKind, O_NONBLOCK, O_RDWR};
use crate::mm::heap;
use crate::mm::uaccess::{copy_from_user, copy_to_user, read_user, write_user};
use crate::net::unix::{
    SockType, UnixAddr, UnixSocket, AF_UNIX, MSG_CTRUNC, MSG_TRUNC, SOCKADDR_UN_SIZE, S_IFSOCK,
};
use uapi::socket::{MSG_CMSG_CLOEXEC, SCM_RIGHTS, SOL_SOCKET};

/// socket(2) type flags (the same bits as O_NONBLOCK and O_CLOEXEC).
const SOCK_NONBLOCK: u32 = O_NONBLOCK;
/// SOCK_CLOEXEC: the new descriptor gets FD_CLOEXEC (as O_CLOEXEC).
const SOCK_CLOEXEC: u32 = O_CLOEXEC;
/// The bits of socket(2)'s `type` that hold the type (SOCK_STREAM,
/// SOCK_DGRAM, SOCK_SEQPACKET, ...); the rest are flags.
const SOCK_TYPE_MASK: u32 = 0xf;
/// Address families there are numbers for (Linux: `NPROTO`).
const NPROTO: i32 = 46;
/// Most descriptors one SCM_RIGHTS message carries (Linux: `SCM_MAX_FD`).
const SCM_MAX_FD: usize = 253;
/// Largest control buffer sendmsg takes (Linux: `net.core.optmem_max`).
const OPTMEM_MAX: usize = 20480;
/// `struct sockaddr_storage`'s size: the most bytes of address copied in.
const SOCKADDR_STORAGE: usize = 128;
/// `struct msghdr` on arm64 and the offsets of its fields.
const MSGHDR_SIZE: usize = 56;

/// The type and flags of socket(2)'s `type` (Linux: `__sys_socket_create`
/// and `__sock_create`'s checks, then `unix_create`'s).
fn check_socket_args(domain: i32, ty: i32, protocol: i32) -> KResult<(SockType, u32)> {
    let flags = ty as u32 & !SOCK_TYPE_MASK;
    if flags & !(SOCK_NONBLOCK | SOCK_CLOEXEC) != 0 {
        return Err(Errno::EINVAL);
    }
    if !(0..NPROTO).contains(&domain) {
        return Err(Errno::EAFNOSUPPORT);
    }
    let base = (ty as u32 & SOCK_TYPE_MASK) as i32;
    if base > 10 {
        return Err(Errno::EINVAL);
    }
    if domain != AF_UNIX {
        return Err(Errno::EAFNOSUPPORT);
    }
    if protocol != 0 && protocol != AF_UNIX {
        return Err(Errno::EPROTONOSUPPORT);
    }
    Ok((SockType::from_linux(base)?, flags))
}

/// An open file for a socket (Linux: `sock_alloc_file`, in sockfs).
fn socket_file(sock: Arc<UnixSocket>, flags: u32) -> KResult<Arc<File>> {
    let inode = Inode::new(S_IFSOCK | 0o777, InodeKind::Device(sock));
    inode.init_owner(None);
    File::new(inode, O_RDWR | (flags & O_NONBLOCK))
}

/// The socket behind `fd` and whether its file is O_NONBLOCK: EBADF,
/// or ENOTSOCK for another kind of file.
fn socket_of(fd: i32) -> KResult<(Arc<UnixSocket>, bool)> {
    let f = file(fd)?;
    let sock = UnixSocket::of_file(&f).ok_or(Errno::ENOTSOCK)?;
    Ok((sock, f.flags() & O_NONBLOCK != 0))
}

/// An address from user memory (Linux: `move_addr_to_kernel`, then
/// `unix_validate_addr`).
fn addr_in(uaddr: usize, len: u32) -> KResult<UnixAddr> {
    let len = len as i32;
    if len < 0 || len as usize > SOCKADDR_STORAGE {
        return Err(Errno::EINVAL);
    }
    let mut bytes = vec![0u8; len as usize];
    copy_from_user(&mut bytes, uaddr)?;
    if bytes.len() > SOCKADDR_UN_SIZE {
        return Err(Errno::EINVAL);
    }
    UnixAddr::parse(&bytes)
}

/// Copies an address out with its length (Linux: `move_addr_to_user`):
/// as much as fits in `*ulen`, which then says the whole length.
fn addr_out(uaddr: usize, ulen: usize, bytes: &[u8]) -> KResult<()> {
    if uaddr == 0 {
        return Ok(());
    }
    let len: i32 = read_user(ulen)?;
    if len < 0 {
        return Err(Errno::EINVAL);
    }
    let n = (len as usize).min(bytes.len());
    copy_to_user(uaddr, &bytes[..n])?;
    write_user(ulen, &(bytes.len() as i32))
}

/// A message's source as recvfrom and recvmsg report it: nothing for an
/// unnamed sender (Linux: `unix_copy_addr` leaves `msg_namelen` 0).
fn source_bytes(a: &UnixAddr) -> Vec<u8> {
    match a {
        UnixAddr::Unnamed => Vec::new(),
        a => a.to_bytes(),
    }
}

/// socket(2): a new AF_UNIX socket of type `ty` (with SOCK_NONBLOCK and
/// SOCK_CLOEXEC), at a new descriptor (Linux: `__sys_socket`).
pub fn socket(domain: i32, ty: i32, protocol: i32) -> SysResult {
    let (ty, flags) = check_socket_args(domain, ty, protocol)?;
    let f = socket_file(UnixSocket::new(ty), flags)?;
    install(f, flags & SOCK_CLOEXEC != 0)
}

/// socketpair(2): two AF_UNIX sockets connected to each other; their
/// descriptors are stored as two ints at `usv`.
pub fn socketpair(domain: i32, ty: i32, protocol: i32, usv: usize) -> SysResult {
    let (ty, flags) = check_socket_args(domain, ty, protocol)?;
    let (a, b) = UnixSocket::pair(ty);
    let (fa, fb) = (socket_file(a, flags)?, socket_file(b, flags)?);
    let cloexec = flags & SOCK_CLOEXEC != 0;
    let p = me()?;
    let x = install(fa, cloexec)? as usize;
    let y = match install(fb, cloexec) {
        Ok(fd) => fd as usize,
        Err(e) => {
            let _ = p.files.lock().close(x);
            return Err(e);
        }
    };
    if let Err(e) = write_user(usv, &[x as i32, y as i32]) {
        let mut files = p.files.lock();
        let _ = files.close(x);
        let _ = files.close(y);
        return Err(e);
    }
    Ok(0)
}

/// bind(2): give the socket at `fd` the address at `uaddr`; a path name
/// creates a socket file there, with the umask applied.
pub fn bind(fd: i32, uaddr: usize, len: u32) -> SysResult {
    let (sock, _) = socket_of(fd)?;
    let addr = addr_in(uaddr, len)?;
    let p = me()?;
    let cwd = p.cwd.lock().clone();
    sock.bind(&cwd, addr, p.umask.load(Ordering::Relaxed))
        .map(|_| 0)
}

/// listen(2): make the socket at `fd` accept connections, with at most
/// `backlog` waiting.
pub fn listen(fd: i32, backlog: i32) -> SysResult {
    socket_of(fd)?.0.listen(backlog).map(|_| 0)
}

/// connect(2): connect the socket at `fd` to the address at `uaddr`; for
/// a datagram socket, set the destination of sends that name none.
pub fn connect(fd: i32, uaddr: usize, len: u32) -> SysResult {
    let (sock, nonblock) = socket_of(fd)?;
    let addr = addr_in(uaddr, len)?;
    let cwd = me()?.cwd.lock().clone();
    sock.connect(&cwd, &addr, nonblock).map(|_| 0)
}

/// accept4(2) (and accept, flags 0): the new socket's file takes
/// SOCK_NONBLOCK and SOCK_CLOEXEC from `flags`, not from the listener.
pub fn accept4(fd: i32, uaddr: usize, ulen: usize, flags: u32) -> SysResult {
    if flags & !(SOCK_NONBLOCK | SOCK_CLOEXEC) != 0 {
        return Err(Errno::EINVAL);
    }
    let (sock, nonblock) = socket_of(fd)?;
    if sock.ty == SockType::Dgram {
        return Err(Errno::EOPNOTSUPP);
    }
    let new = sock.accept(nonblock)?;
    let peer = new.peer_name().unwrap_or_default();
    let f = socket_file(new, flags)?;
    let newfd = install(f, flags & SOCK_CLOEXEC != 0)?;
    if let Err(e) = addr_out(uaddr, ulen, &peer.to_bytes()) {
        let _ = me()?.files.lock().close(newfd as usize);
        return Err(e);
    }
    Ok(newfd)
}

/// getsockname(2): the socket's own address, into `uaddr`, with its
/// length at `ulen`.
pub fn getsockname(fd: i32, uaddr: usize, ulen: usize) -> SysResult {
    let (sock, _) = socket_of(fd)?;
    addr_out(uaddr, ulen, &sock.name().to_bytes()).map(|_| 0)
}

/// getpeername(2): the address of the socket's peer, into `uaddr`, with
/// its length at `ulen`; ENOTCONN if it has none.
pub fn getpeername(fd: i32, uaddr: usize, ulen: usize) -> SysResult {
    let (sock, _) = socket_of(fd)?;
    let peer = sock.peer_name()?;
    addr_out(uaddr, ulen, &peer.to_bytes()).map(|_| 0)
}

/// Copies bytes `[off, off + buf.len())` of the iovecs' concatenation.
fn gather(iov: &[(usize, usize)], mut off: usize, buf: &mut [u8]) -> KResult<()> {
    let mut done = 0;
    for &(base, len) in iov {
        if done == buf.len() {
            break;
        }
        if off >= len {
            off -= len;
            continue;
        }
        let n = (len - off).min(buf.len() - done);
        copy_from_user(&mut buf[done..done + n], base + off)?;
        done += n;
        off = 0;
    }
    Ok(())
}

/// Copies `data` out across the iovecs.
fn scatter(iov: &[(usize, usize)], data: &[u8]) -> KResult<()> {
    let mut done = 0;
    for &(base, len) in iov {
        if done == data.len() {
            break;
        }
        let n = len.min(data.len() - done);
        copy_to_user(base, &data[done..done + n])?;
        done += n;
    }
    Ok(())
}

/// A `struct iovec` array, EMSGSIZE past UIO_MAXIOV, and its total length.
fn iovecs(uiov: usize, count: usize) -> KResult<(Vec<(usize, usize)>, usize)> {
    if count > 1024 {
        return Err(Errno::EMSGSIZE);
    }
    let mut total = 0usize;
    let mut out = heap::try_vec(count)?;
    for i in 0..count {
        let pair: [u64; 2] = read_user(uiov + i * 16)?;
        let len = pair[1] as usize;
        if len > isize::MAX as usize {
            return Err(Errno::EINVAL);
        }
        total = total.checked_add(len).ok_or(Errno::EINVAL)?;
        out.push((pair[0] as usize, len));
    }
    Ok((out, total))
}

/// What every send comes to (Linux: `__sys_sendmsg` ->
/// `unix_*_sendmsg`): `len` bytes gathered from `iov`, to `to` or the
/// connected peer, carrying `fds` (SCM_RIGHTS). Returns the bytes sent.
fn do_send(
    fd: i32,
    iov: &[(usize, usize)],
    len: usize,
    to: Option<UnixAddr>,
    fds: Vec<Arc<File>>,
    flags: u32,
) -> SysResult {
    let (sock, nonblock) = socket_of(fd)?;
    let to = match to {
        Some(a) => Some((a, me()?.cwd.lock().clone())),
        None => None,
    };
    let mut fill = |off: usize, buf: &mut [u8]| gather(iov, off, buf);
    sock.send(&mut fill, len, to, fds, flags, nonblock)
        .map(|n| n as i64)
}

/// The bytes an iovec array holds, as far as one call moves (Linux:
/// `import_iovec` caps the total at MAX_RW_COUNT).
fn iov_len(iov: &[(usize, usize)]) -> usize {
    iov.iter()
        .fold(0usize, |sum, &(_, len)| sum.saturating_add(len))
        .min(super::MAX_RW_COUNT)
}

/// write(2) and writev(2) on a socket (Linux: `sock_write_iter`): a
/// sendmsg with no flags, so the buffers make one message however large,
/// and an empty write sends an empty datagram.
pub fn sock_writev(fd: i32, iov: &[(usize, usize)]) -> SysResult {
    do_send(fd, iov, iov_len(iov), None, Vec::new(), 0)
}

/// read(2) and readv(2) on a socket (Linux: `sock_read_iter`): a recvmsg
/// with no flags, so one message is read whole into the buffers, its
/// excess dropped, as are any descriptors it carries.
pub fn sock_readv(fd: i32, iov: &[(usize, usize)]) -> SysResult {
    let (sock, nonblock) = socket_of(fd)?;
    let r = sock.recv(iov_len(iov), 0, nonblock)?;
    scatter(iov, &r.data)?;
    Ok(r.data.len() as i64)
}

/// sendto(2), and send(2) with no address: `len` bytes from `ubuf`, to
/// the address at `uaddr` if there is one.
pub fn sendto(fd: i32, ubuf: usize, len: usize, flags: u32, uaddr: usize, alen: u32) -> SysResult {
    let to = if uaddr != 0 {
        Some(addr_in(uaddr, alen)?)
    } else {
        None
    };
    do_send(fd, &[(ubuf, len)], len, to, Vec::new(), flags)
}

/// recvfrom(2), and recv(2): up to `len` bytes into `ubuf`, the sender's
/// address into `uaddr`. With MSG_TRUNC a datagram's full length is
/// returned even if it was cut.
pub fn recvfrom(
    fd: i32,
    ubuf: usize,
    len: usize,
    flags: u32,
    uaddr: usize,
    ulen: usize,
) -> SysResult {
    let (sock, nonblock) = socket_of(fd)?;
    let r = sock.recv(len, flags, nonblock)?;
    copy_to_user(ubuf, &r.data)?;
    addr_out(uaddr, ulen, &source_bytes(&r.from))?;
    Ok(if flags & MSG_TRUNC != 0 && sock.ty != SockType::Stream {
        r.len
    } else {
        r.data.len()
    } as i64)
}

/// The fields of a `struct msghdr`.
struct MsgHdr {
    /// `msg_name`: the address to send to or to store the sender's in; 0 for
    /// none.
    name: usize,
    /// `msg_namelen`: that address's length in bytes.
    namelen: u32,
    /// `msg_iov`: the `struct iovec` array of the data.
    iov: usize,
    /// `msg_iovlen`: how many iovecs.
    iovlen: usize,
    /// `msg_control`: the ancillary data (control messages); 0 for none.
    control: usize,
    /// `msg_controllen`: its length in bytes.
    controllen: usize,
}

/// Reads the `struct msghdr` at `umsg` from user memory (Linux:
/// `copy_msghdr_from_user`).
fn read_msghdr(umsg: usize) -> KResult<MsgHdr> {
    let m: [u64; MSGHDR_SIZE / 8] = read_user(umsg)?;
    Ok(MsgHdr {
        name: m[0] as usize,
        namelen: m[1] as u32,
        iov: m[2] as usize,
        iovlen: m[3] as usize,
        control: m[4] as usize,
        controllen: m[5] as usize,
    })
}

/// The files of sendmsg's SCM_RIGHTS messages (Linux: `__scm_send`,
/// `scm_fp_copy`): EINVAL for a malformed or unknown control message or
/// too many descriptors, EBADF for a bad one.
fn scm_rights_in(control: usize, len: usize) -> KResult<Vec<Arc<File>>> {
    if len > OPTMEM_MAX {
        return Err(Errno::ENOBUFS);
    }
    let mut buf = heap::try_zeroed(len)?;
    copy_from_user(&mut buf, control)?;
    let mut files = Vec::new();
    let mut off = 0;
    while off + 16 <= len {
        let clen =
            u64::from_ne_bytes(buf[off..off + 8].try_into().map_err(|_| Errno::EINVAL)?) as usize;
        let level = i32::from_ne_bytes(
            buf[off + 8..off + 12]
                .try_into()
                .map_err(|_| Errno::EINVAL)?,
        );
        let ty = i32::from_ne_bytes(
            buf[off + 12..off + 16]
                .try_into()
                .map_err(|_| Errno::EINVAL)?,
        );
        if clen < 16 || clen > len - off {
            return Err(Errno::EINVAL);
        }
        if level != SOL_SOCKET || ty != SCM_RIGHTS {
            return Err(Errno::EINVAL);
        }
        let n = (clen - 16) / 4;
        if files.len() + n > SCM_MAX_FD {
            return Err(Errno::EINVAL);
        }
        for i in 0..n {
            let at = off + 16 + i * 4;
            let fd = i32::from_ne_bytes(buf[at..at + 4].try_into().map_err(|_| Errno::EINVAL)?);
            files.push(file(fd)?);
        }
        off += clen.next_multiple_of(8);
    }
    Ok(files)
}

/// sendmsg(2): the data of the message at `umsg`, to its address if it
/// has one, with the descriptors of its SCM_RIGHTS messages.
pub fn sendmsg(fd: i32, umsg: usize, flags: u32) -> SysResult {
    let m = read_msghdr(umsg)?;
    let (iov, len) = iovecs(m.iov, m.iovlen)?;
    let to = if m.name != 0 && m.namelen != 0 {
        Some(addr_in(m.name, m.namelen)?)
    } else {
        None
    };
    let fds = if m.control != 0 && m.controllen != 0 {
        scm_rights_in(m.control, m.controllen)?
    } else {
        Vec::new()
    };
    do_send(fd, &iov, len, to, fds, flags)
}

/// Installs received descriptors and builds their SCM_RIGHTS message in
/// at most `room` bytes (Linux: `scm_detach_fds`); returns the bytes and
/// whether some did not fit (MSG_CTRUNC; those are closed).
fn scm_rights_out(files: Vec<Arc<File>>, room: usize, cloexec: bool) -> KResult<(Vec<u8>, bool)> {
    if files.is_empty() {
        return Ok((Vec::new(), false));
    }
    let fit = room.saturating_sub(16) / 4;
    let n = fit.min(files.len());
    let truncated = n < files.len();
    if n == 0 {
        return Ok((Vec::new(), true));
    }
    let mut fds = Vec::with_capacity(n);
    for f in files.into_iter().take(n) {
        match install(f, cloexec) {
            Ok(fd) => fds.push(fd as i32),
            Err(_) => break,
        }
    }
    let clen = 16 + 4 * fds.len();
    let mut out = Vec::with_capacity(clen.next_multiple_of(8));
    out.extend_from_slice(&(clen as u64).to_ne_bytes());
    out.extend_from_slice(&SOL_SOCKET.to_ne_bytes());
    out.extend_from_slice(&SCM_RIGHTS.to_ne_bytes());
    for fd in &fds {
        out.extend_from_slice(&fd.to_ne_bytes());
    }
    out.resize(clen.next_multiple_of(8).min(room), 0);
    Ok((out, truncated || fds.len() < n))
}

/// recvmsg(2): one message into the iovecs of `umsg`, with the sender's
/// address, received descriptors (SCM_RIGHTS) and `msg_flags`
/// (MSG_TRUNC, MSG_CTRUNC) written back.
pub fn recvmsg(fd: i32, umsg: usize, flags: u32) -> SysResult {
    let m = read_msghdr(umsg)?;
    let (iov, len) = iovecs(m.iov, m.iovlen)?;
    let (sock, nonblock) = socket_of(fd)?;
    let r = sock.recv(len, flags, nonblock)?;
    scatter(&iov, &r.data)?;
    let mut msg_flags = 0;
    if r.truncated {
        msg_flags |= MSG_TRUNC;
    }
    let src = source_bytes(&r.from);
    if m.name != 0 {
        let n = (m.namelen as usize).min(src.len());
        copy_to_user(m.name, &src[..n])?;
        write_user(umsg + 8, &(src.len() as u32))?;
    }
    let room = if m.control != 0 { m.controllen } else { 0 };
    let (cmsg, ctrunc) = scm_rights_out(r.fds, room, flags & MSG_CMSG_CLOEXEC != 0)?;
    if ctrunc {
        msg_flags |= MSG_CTRUNC;
    }
    if !cmsg.is_empty() {
        copy_to_user(m.control, &cmsg)?;
    }
    write_user(umsg + 40, &(cmsg.len() as u64))?;
    write_user(umsg + 48, &msg_flags)?;
    Ok(if flags & MSG_TRUNC != 0 && sock.ty != SockType::Stream {
        r.len
    } else {
        r.data.len()
    } as i64)
}

/// setsockopt(2): set the SOL_SOCKET option `name` to the int at `uval`;
/// EOPNOTSUPP at any other level.
pub fn setsockopt(fd: i32, level: i32, name: i32, uval: usize, len: u32) -> SysResult {
    let (sock, _) = socket_of(fd)?;
    if level != SOL_SOCKET {
        return Err(Errno::EOPNOTSUPP);
    }
    if (len as i32) < 4 {
        return Err(Errno::EINVAL);
    }
    let val: i32 = read_user(uval)?;
    sock.setsockopt(name, val).map(|_| 0)
}

/// getsockopt(2): the SOL_SOCKET option `name`, into `uval`, cut to the
/// length at `ulen`, which then says how much was written.
pub fn getsockopt(fd: i32, level: i32, name: i32, uval: usize, ulen: usize) -> SysResult {
    let (sock, _) = socket_of(fd)?;
    if level != SOL_SOCKET {
        return Err(Errno::EOPNOTSUPP);
    }
    let len: i32 = read_user(ulen)?;
    if len < 0 {
        return Err(Errno::EINVAL);
    }
    let bytes = sock.getsockopt(name)?;
    let n = (len as usize).min(bytes.len());
    copy_to_user(uval, &bytes[..n])?;
    write_user(ulen, &(n as i32)).map(|_| 0)
}

/// shutdown(2): stop receiving (SHUT_RD), sending (SHUT_WR) or both
/// (SHUT_RDWR) on the socket at `fd`.
pub fn shutdown(fd: i32, how: i32) -> SysResult {
    socket_of(fd)?.0.shutdown(how).map(|_| 0)
}
