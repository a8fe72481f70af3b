//! Reading, writing, seeking and copying between files (Linux:
//! `fs/read_write.c`; vmsplice(2) from `fs/splice.c`).

use super::*;
use uapi::fcntl::SPLICE_F_NONBLOCK;

/// Reads into user memory with `read`: a regular file straight from its
/// page cache in one call, anything else through a kernel buffer a chunk
/// at a time, stopping early on a short read.
fn read_into_user(
    f: &File,
    ubuf: usize,
    len: usize,
    mut read: impl FnMut(&File, ReadDest, u64) -> KResult<usize>,
) -> SysResult {
    let len = len.min(MAX_RW_COUNT);
    let mut done = 0usize;
    while done < len {
        let want = match f.inode.kind {
            InodeKind::File(_) => len - done,
            _ => (len - done).min(heap::BOUNCE_MAX),
        };
        let dst = ReadDest::User {
            addr: ubuf + done,
            len: want,
        };
        let n = match read(f, dst, done as u64) {
            Ok(n) => n,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        };
        done += n;
        // A device (pipe, socket) returns what it has: asking again
        // would wait for more.
        if n < want || matches!(f.inode.kind, InodeKind::Device(_)) {
            break;
        }
    }
    Ok(done as i64)
}

/// A write from user memory: straight into the page cache for a regular
/// file, and to a device's `write_iter`, in one call however long; through
/// a kernel buffer, a chunk at a time, for anything else.
fn write_from_user(
    f: &File,
    ubuf: usize,
    len: usize,
    mut write: impl FnMut(&File, WriteSource, u64) -> KResult<usize>,
) -> SysResult {
    let len = len.min(MAX_RW_COUNT);
    if matches!(f.inode.kind, InodeKind::File(_) | InodeKind::Device(_)) {
        return Ok(write(f, WriteSource::User { addr: ubuf, len }, 0)? as i64);
    }
    let mut done = 0usize;
    let mut buf = heap::bounce_buffer(len, heap::BOUNCE_MAX)?;
    while done < len {
        let want = (len - done).min(buf.len());
        if let Err(e) = copy_from_user(&mut buf[..want], ubuf + done) {
            return if done == 0 { Err(e) } else { Ok(done as i64) };
        }
        let n = match write(f, WriteSource::Kernel(&buf[..want]), done as u64) {
            Ok(n) => n,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        };
        done += n;
        if n < want {
            break;
        }
    }
    Ok(done as i64)
}

/// read(2): up to `len` bytes from `fd`'s position into `ubuf`; returns
/// how many (Linux: `ksys_read`).
pub fn read(fd: i32, ubuf: usize, len: usize) -> SysResult {
    let f = file(fd)?;
    if UnixSocket::of_file(&f).is_some() {
        return crate::syscall::net::sock_readv(fd, &[(ubuf, len)]);
    }
    read_into_user(&f, ubuf, len, |f, b, _| f.read(b))
}

/// write(2): up to `len` bytes from `ubuf` to `fd` at its position (its
/// end under O_APPEND); returns how many (Linux: `ksys_write`).
pub fn write(fd: i32, ubuf: usize, len: usize) -> SysResult {
    let f = file(fd)?;
    if UnixSocket::of_file(&f).is_some() {
        return crate::syscall::net::sock_writev(fd, &[(ubuf, len)]);
    }
    write_from_user(&f, ubuf, len, |f, b, _| f.write(b))
}

/// pread64(2): read as [`read()`] does, but at offset `off`, leaving the
/// file position alone; EINVAL for a negative offset.
pub fn pread64(fd: i32, ubuf: usize, len: usize, off: i64) -> SysResult {
    if off < 0 {
        return Err(Errno::EINVAL);
    }
    let f = file(fd)?;
    read_into_user(&f, ubuf, len, |f, b, done| f.pread(b, off as u64 + done))
}

/// pwrite64(2): write as [`write()`] does, but at offset `off`, leaving the
/// file position alone; EINVAL for a negative offset.
pub fn pwrite64(fd: i32, ubuf: usize, len: usize, off: i64) -> SysResult {
    if off < 0 {
        return Err(Errno::EINVAL);
    }
    let f = file(fd)?;
    write_from_user(&f, ubuf, len, |f, b, done| f.pwrite(b, off as u64 + done))
}

/// The (base, len) pairs of a user `struct iovec` array.
fn iovecs(uiov: usize, count: usize) -> KResult<Vec<(usize, usize)>> {
    if count > 1024 {
        return Err(Errno::EINVAL);
    }
    let mut out = heap::try_vec(count)?;
    for i in 0..count {
        let pair: [u64; 2] = read_user(uiov + i * 16)?;
        out.push((pair[0] as usize, pair[1] as usize));
    }
    Ok(out)
}

/// Runs `op` on each (base, len) of `iov` in turn until one comes up
/// short; an error after some bytes moved ends it with their count
/// (Linux: `do_loop_readv_writev`).
fn each_iovec(iov: &[(usize, usize)], mut op: impl FnMut(usize, usize) -> SysResult) -> SysResult {
    let mut total = 0;
    for &(base, len) in iov {
        let n = match op(base, len) {
            Ok(n) => n,
            Err(e) if total == 0 => return Err(e),
            Err(_) => break,
        };
        total += n;
        if (n as usize) < len {
            break;
        }
    }
    Ok(total)
}

/// readv(2): [`read()`] into each of the `count` buffers of the `iovec`
/// array at `uiov` in turn, stopping after a short read (Linux:
/// `do_readv`); on a socket, one receive into them all.
pub fn readv(fd: i32, uiov: usize, count: usize) -> SysResult {
    let iov = iovecs(uiov, count)?;
    if UnixSocket::of_file(&*file(fd)?).is_some() {
        return crate::syscall::net::sock_readv(fd, &iov);
    }
    each_iovec(&iov, |base, len| read(fd, base, len))
}

/// writev(2): [`write()`] from each of the `count` buffers of the `iovec`
/// array at `uiov` in turn, stopping after a short write (Linux:
/// `do_writev`); on a socket, one send of them all.
pub fn writev(fd: i32, uiov: usize, count: usize) -> SysResult {
    let iov = iovecs(uiov, count)?;
    if UnixSocket::of_file(&*file(fd)?).is_some() {
        return crate::syscall::net::sock_writev(fd, &iov);
    }
    each_iovec(&iov, |base, len| write(fd, base, len))
}

/// SPLICE_F_MOVE, SPLICE_F_NONBLOCK, SPLICE_F_MORE and SPLICE_F_GIFT: the
/// flags vmsplice knows (`include/linux/splice.h`).
const SPLICE_F_ALL: u32 = 0xf;

/// vmsplice(2): user memory into a pipe opened for writing, as much as
/// fits once there is room, or out of one opened for reading, as readv
/// (Linux: `vmsplice` in `fs/splice.c`). Where we simplify: Linux lends
/// the pages themselves to the pipe and a reader sees them as they are
/// when it reads; here they are copied at once, which a caller keeping
/// vmsplice's contract (leave the pages alone until they are read) cannot
/// tell apart. EBADF for a descriptor that is no pipe, EINVAL for an
/// unknown flag.
pub fn vmsplice(fd: i32, uiov: usize, count: usize, flags: u32) -> SysResult {
    if flags & !SPLICE_F_ALL != 0 {
        return Err(Errno::EINVAL);
    }
    let f = file(fd)?;
    let pipe = f.device::<Pipe>().ok_or(Errno::EBADF)?;
    if !f.is_writable() {
        return readv(fd, uiov, count);
    }
    // No more than the pipe can hold: that is all one call moves.
    let room = pipe.capacity();
    let mut data = heap::try_vec(room)?;
    for (base, len) in iovecs(uiov, count)? {
        let n = len.min(room - data.len());
        let start = data.len();
        data.resize(start + n, 0);
        copy_from_user(&mut data[start..], base)?;
    }
    let nonblock = f.flags() & vfs::O_NONBLOCK != 0 || flags & SPLICE_F_NONBLOCK != 0;
    Ok(pipe.splice_in(&data, nonblock)? as i64)
}

/// lseek(2): move `fd`'s position to `off` from where `whence` says
/// (SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE); returns the new
/// position.
pub fn lseek(fd: i32, off: i64, whence: u32) -> SysResult {
    file(fd)?.lseek(off, whence).map(|p| p as i64)
}

/// Copies up to `len` bytes with `read` and `write` through a kernel
/// buffer, stopping at end of input or a short write; an error after some
/// bytes moved ends the copy with their count (Linux: `splice_direct_to_actor`).
fn copy_between(
    len: usize,
    mut read: impl FnMut(&mut [u8], u64) -> KResult<usize>,
    mut write: impl FnMut(&[u8], u64) -> KResult<usize>,
) -> SysResult {
    let len = len.min(MAX_RW_COUNT);
    let mut buf = heap::bounce_buffer(len, heap::BOUNCE_MAX)?;
    let mut done = 0usize;
    while done < len {
        let want = (len - done).min(buf.len());
        let n = match read(&mut buf[..want], done as u64) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        };
        let mut written = 0;
        while written < n {
            match write(&buf[written..n], (done + written) as u64) {
                Ok(0) => break,
                Ok(w) => written += w,
                Err(e) if done + written == 0 => return Err(e),
                Err(_) => break,
            }
        }
        done += written;
        if written < n || n < want {
            break;
        }
    }
    Ok(done as i64)
}

/// sendfile(2) (Linux: `do_sendfile`): from `in_fd` at `*uoffset` (which
/// it advances, leaving the file position alone) or at its position, to
/// `out_fd` at its position. EBADF unless in is readable and out writable,
/// EINVAL for an O_APPEND output.
pub fn sendfile(out_fd: i32, in_fd: i32, uoffset: usize, count: usize) -> SysResult {
    let (inf, outf) = (file(in_fd)?, file(out_fd)?);
    if !inf.is_readable() || !outf.is_writable() {
        return Err(Errno::EBADF);
    }
    if outf.flags() & vfs::O_APPEND != 0 {
        return Err(Errno::EINVAL);
    }
    let write = |b: &[u8], _| outf.write(WriteSource::Kernel(b));
    if uoffset == 0 {
        return copy_between(count, |b, _| inf.read(b), write);
    }
    let off: i64 = read_user(uoffset)?;
    if off < 0 {
        return Err(Errno::EINVAL);
    }
    let n = copy_between(count, |b, done| inf.pread(b, off as u64 + done), write)?;
    write_user(uoffset, &(off + n))?;
    Ok(n)
}

/// copy_file_range(2) between regular files (Linux: `vfs_copy_file_range`
/// falling back to `splice`): each side at `*uoff` (advanced) or at its
/// file position; EINVAL for flags, non-regular files or an overlapping
/// copy within one file, EBADF for wrong access modes or O_APPEND output.
pub fn copy_file_range(
    fd_in: i32,
    uoff_in: usize,
    fd_out: i32,
    uoff_out: usize,
    len: usize,
    flags: u32,
) -> SysResult {
    if flags != 0 {
        return Err(Errno::EINVAL);
    }
    let (inf, outf) = (file(fd_in)?, file(fd_out)?);
    if !inf.is_readable() || !outf.is_writable() || outf.flags() & vfs::O_APPEND != 0 {
        return Err(Errno::EBADF);
    }
    for f in [&inf, &outf] {
        match f.inode.kind {
            InodeKind::File(_) => {}
            InodeKind::Dir(_) => return Err(Errno::EISDIR),
            _ => return Err(Errno::EINVAL),
        }
    }
    let offset = |uoff: usize, f: &File| -> KResult<i64> {
        if uoff == 0 {
            return f.lseek(0, vfs::SEEK_CUR).map(|p| p as i64);
        }
        match read_user::<i64>(uoff)? {
            o if o < 0 => Err(Errno::EINVAL),
            o => Ok(o),
        }
    };
    let (pos_in, pos_out) = (
        offset(uoff_in, &inf)? as u64,
        offset(uoff_out, &outf)? as u64,
    );
    let len = len.min(MAX_RW_COUNT) as u64;
    if Arc::ptr_eq(&inf.inode, &outf.inode) && pos_in < pos_out + len && pos_out < pos_in + len {
        return Err(Errno::EINVAL);
    }
    let n = copy_between(
        len as usize,
        |b, done| inf.pread(b, pos_in + done),
        |b, done| outf.pwrite(WriteSource::Kernel(b), pos_out + done),
    )?;
    for (uoff, f, pos) in [(uoff_in, &inf, pos_in), (uoff_out, &outf, pos_out)] {
        let end = pos as i64 + n;
        if uoff == 0 {
            f.lseek(end, vfs::SEEK_SET)?;
        } else {
            write_user(uoff, &end)?;
        }
    }
    Ok(n)
}
