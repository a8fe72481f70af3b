//! Open flags, `*at` flags, fcntl commands, seals, locks, seek and
//! fallocate modes (Linux: `include/uapi/asm-generic/fcntl.h`,
//! `include/uapi/linux/fcntl.h`, `fs.h`, `falloc.h`).

uapi_consts! {
    /// F_SEAL_SEAL: no more seals may be added.
    F_SEAL_SEAL: u32 = 0x1;
    /// F_SEAL_SHRINK: the file may not get smaller.
    F_SEAL_SHRINK: u32 = 0x2;
    /// F_SEAL_GROW: the file may not get larger.
    F_SEAL_GROW: u32 = 0x4;
    /// F_SEAL_WRITE: the contents may not change, by write(2) or a shared
    /// mapping; adding it fails while a writable shared mapping exists.
    F_SEAL_WRITE: u32 = 0x8;
    /// F_SEAL_FUTURE_WRITE: as F_SEAL_WRITE, but writable mappings made before it
    /// keep writing.
    F_SEAL_FUTURE_WRITE: u32 = 0x10;
    /// F_SEAL_EXEC: the execute bits may not change.
    F_SEAL_EXEC: u32 = 0x20;
    /// O_ACCMODE: the two bits holding the access mode.
    O_ACCMODE: u32 = 0o3;
    /// O_RDONLY: open for reading only.
    O_RDONLY: u32 = 0o0;
    /// O_WRONLY: open for writing only.
    O_WRONLY: u32 = 0o1;
    /// O_RDWR: open for reading and writing.
    O_RDWR: u32 = 0o2;
    /// O_CREAT: create the file if it does not exist.
    O_CREAT: u32 = 0o100;
    /// O_EXCL: with O_CREAT, fail with EEXIST if the file exists.
    O_EXCL: u32 = 0o200;
    /// O_TRUNC: a regular file opened for writing is cut to size 0.
    O_TRUNC: u32 = 0o1000;
    /// O_APPEND: every write goes to the end.
    O_APPEND: u32 = 0o2000;
    /// O_NONBLOCK: reads and writes that would wait fail with EAGAIN.
    O_NONBLOCK: u32 = 0o4000;
    /// arm64 has its own values for these (`arch/arm64/include/uapi/asm/fcntl.h`).
    O_DIRECTORY: u32 = 0o40000;
    /// O_NOFOLLOW: do not follow a symbolic link in the last component (arm64's
    /// value).
    O_NOFOLLOW: u32 = 0o100000;
    /// O_NOATIME: reads do not move the access time (only the owner's).
    O_NOATIME: u32 = 0o1000000;
    /// O_TMPFILE's own bit (Linux: `__O_TMPFILE`); O_TMPFILE is it with
    /// O_DIRECTORY.
    __O_TMPFILE: u32 = 0o20000000;
    /// O_TMPFILE: make an unnamed file in the directory `path` names.
    O_TMPFILE: u32 = 4210688;
    /// SEEK_SET: the offset is from the start of the file.
    SEEK_SET: u32 = 0;
    /// SEEK_CUR: the offset is from the current position.
    SEEK_CUR: u32 = 1;
    /// SEEK_END: the offset is from the end of the file.
    SEEK_END: u32 = 2;
    /// SEEK_DATA: to the next byte at or after the offset that holds data.
    SEEK_DATA: u32 = 3;
    /// SEEK_HOLE: to the next hole at or after the offset (the end of file counts
    /// as one).
    SEEK_HOLE: u32 = 4;
    /// fallocate(2) modes.
    FALLOC_FL_KEEP_SIZE: u32 = 0x1;
    /// FALLOC_FL_PUNCH_HOLE: free the range's pages, so it reads as zeros; only
    /// together with FALLOC_FL_KEEP_SIZE.
    FALLOC_FL_PUNCH_HOLE: u32 = 0x2;
    /// F_GETFD: the descriptor's flags (FD_CLOEXEC).
    F_GETFD: u32 = 1;
    /// F_SETFD: set the descriptor's flags.
    F_SETFD: u32 = 2;
    /// F_GETFL: the open file's access mode and status flags (`O_*`).
    F_GETFL: u32 = 3;
    /// F_SETFL: set the open file's status flags (O_APPEND, O_NONBLOCK, ...).
    F_SETFL: u32 = 4;
    /// F_DUPFD_CLOEXEC: F_DUPFD, with FD_CLOEXEC on the new descriptor.
    F_DUPFD_CLOEXEC: u32 = 1030;
    LOCK_SH: u32 = 1;
    LOCK_EX: u32 = 2;
    LOCK_NB: u32 = 4;
    LOCK_UN: u32 = 8;
    /// F_SETLK: take or release a POSIX record lock, failing at once on a
    /// conflict.
    F_SETLK: u32 = 6;
    /// F_SETLKW: F_SETLK, but waiting (interruptibly) for a conflicting lock
    /// to go.
    F_SETLKW: u32 = 7;
    /// F_OFD_GETLK: F_GETLK for a lock owned by the open file, not the
    /// process.
    F_OFD_GETLK: u32 = 36;
    /// F_OFD_SETLK: F_SETLK for a lock owned by the open file.
    F_OFD_SETLK: u32 = 37;
    /// F_OFD_SETLKW: F_SETLKW for a lock owned by the open file.
    F_OFD_SETLKW: u32 = 38;
    /// F_SETPIPE_SZ: set a pipe's capacity.
    F_SETPIPE_SZ: u32 = 1031;
    /// F_GETPIPE_SZ: a pipe's capacity.
    F_GETPIPE_SZ: u32 = 1032;
    /// F_ADD_SEALS: add `F_SEAL_*` seals to a tmpfs file.
    F_ADD_SEALS: u32 = 1033;
    /// F_GET_SEALS: the seals of a tmpfs file.
    F_GET_SEALS: u32 = 1034;
    F_RDLCK: i16 = 0;
    F_WRLCK: i16 = 1;
    F_UNLCK: i16 = 2;
    /// AT_FDCWD: a `dirfd` that means the current working directory.
    AT_FDCWD: i32 = -100;
    /// AT_SYMLINK_NOFOLLOW: act on a symbolic link at the end of the path
    /// itself, not on what it points to.
    AT_SYMLINK_NOFOLLOW: u32 = 0x100;
    /// AT_EMPTY_PATH: an empty path names `dirfd` itself.
    AT_EMPTY_PATH: u32 = 0x1000;
    /// O_CLOEXEC: the new descriptor gets FD_CLOEXEC.
    O_CLOEXEC: u32 = 0o2000000;
    /// F_DUPFD: duplicate to the lowest free descriptor at or above `arg`.
    F_DUPFD: u32 = 0;
    /// FD_CLOEXEC: close the descriptor when the process execs.
    FD_CLOEXEC: u64 = 1;
    UTIME_NOW: i64 = 1073741823;
    UTIME_OMIT: i64 = 1073741822;
    /// F_GETLK: would this POSIX record lock conflict? The answer is the
    /// conflicting lock, or F_UNLCK.
    F_GETLK: u32 = 5;
    /// AT_REMOVEDIR: unlinkat removes a directory, as rmdir(2).
    AT_REMOVEDIR: u32 = 0x200;
    RENAME_NOREPLACE: u32 = 1;
    AT_SYMLINK_FOLLOW: u32 = 0x400;
    AT_EACCESS: u32 = 0x200;
    /// SPLICE_F_NONBLOCK: do not wait for room in the pipe.
    SPLICE_F_NONBLOCK: u32 = 0x2;
    AT_NO_AUTOMOUNT: u32 = 0x800;
    /// AT_STATX_SYNC_TYPE: statx's two bits of how fresh the answer must be;
    /// both set is EINVAL, any value is the same here (nothing is remote).
    AT_STATX_SYNC_TYPE: u32 = 0x6000;
}
