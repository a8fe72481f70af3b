//! File tests: open/read/write/lseek and the positional and vector forms,
//! O_APPEND/O_TRUNC/O_EXCL, ftruncate, fallocate, directories (mkdirat,
//! unlinkat, renameat2, getdents64), stat, pipes, dup3, fcntl, close-on-exec
//! across execve, the working directory, ioctl, readlinkat, memfd — each
//! with the errors Linux gives for misuse.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::CStr;
use faultline_user_tests::*;
use ulib::fs::*;
use ulib::mm::{map_anon, munmap, PAGE_SIZE};
use ulib::process::*;
use ulib::signal::{sigaction, Disposition, SIGPIPE};
use ulib::sys::*;
use ulib::syscall;
use ulib::test::{Scratch, TestResult};
use ulib::{check, check_eq, check_err, fail, Errno};

ulib::tests!(
    tests: [
        create_write_read,
        open_errors,
        bad_fd_is_ebadf,
        access_mode_is_enforced,
        bad_pointers_are_efault,
        lowest_free_fd_is_used,
        append_writes_at_end,
        trunc_and_excl,
        lseek_whence_and_holes,
        pread_pwrite_keep_offset,
        readv_writev,
        multi_page_file,
        ftruncate_grows_and_shrinks,
        fallocate_sizes,
        unlink_open_file,
        unlinkat_errors,
        mkdirat_errors,
        renameat2_replaces,
        renameat2_errors,
        getdents64_lists_entries,
        getdents64_small_buffer,
        fstat_and_newfstatat,
        path_resolution,
        openat_relative_to_dirfd,
        pipe_data_and_eof,
        pipe_large_transfer,
        pipe_epipe,
        pipe2_flags,
        dup3_semantics,
        fcntl_commands,
        cloexec_closes_on_exec,
        offset_shared_after_fork,
        getcwd_and_chdir,
        ioctl_tcgets,
        readlinkat_proc_self_exe,
        memfd_is_a_file,
    ],
    helpers: [check_fds],
);

fn create_write_read() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("a");
    let fd = open(&path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)?;
    check_eq!(write(fd, b"hello, world")?, 12);
    check_eq!(lseek(fd, 0, SEEK_SET)?, 0);
    let mut buf = [0u8; 32];
    check_eq!(read(fd, &mut buf)?, 12);
    check_eq!(&buf[..12], b"hello, world");
    // At end of file read returns 0, and zero-length calls do nothing.
    check_eq!(read(fd, &mut buf)?, 0);
    check_eq!(write(fd, b"")?, 0);
    check_eq!(read(fd, &mut buf[..0])?, 0);
    close(fd)?;
    check_eq!(read_file(&path)?, b"hello, world");
    Ok(())
}

fn open_errors() -> TestResult {
    let scratch = Scratch::new()?;
    let file = scratch.path("file");
    write_file(&file, b"x")?;
    let in_file = scratch.path("file/x");
    check_err!(open(&scratch.path("missing"), O_RDONLY, 0), Errno::ENOENT);
    check_err!(
        open(&scratch.path("no/such/dir"), O_RDWR | O_CREAT, 0o644),
        Errno::ENOENT
    );
    check_err!(open(&file, O_RDWR | O_CREAT | O_EXCL, 0o644), Errno::EEXIST);
    check_err!(open(&in_file, O_RDONLY, 0), Errno::ENOTDIR);
    check_err!(open(&file, O_RDONLY | O_DIRECTORY, 0), Errno::ENOTDIR);
    check_err!(open(scratch.dir(), O_WRONLY, 0), Errno::EISDIR);
    check_err!(open(scratch.dir(), O_RDWR, 0), Errno::EISDIR);
    check_err!(open(c"", O_RDONLY, 0), Errno::ENOENT);
    let long = scratch.path(&"n".repeat(300));
    check_err!(open(&long, O_RDWR | O_CREAT, 0o644), Errno::ENAMETOOLONG);
    Ok(())
}

fn bad_fd_is_ebadf() -> TestResult {
    let scratch = Scratch::new()?;
    let fd = open(&scratch.path("f"), O_RDWR | O_CREAT, 0o644)?;
    close(fd)?;
    let mut buf = [0u8; 4];
    check_err!(close(fd), Errno::EBADF);
    check_err!(close(-1), Errno::EBADF);
    check_err!(read(fd, &mut buf), Errno::EBADF);
    check_err!(write(fd, b"x"), Errno::EBADF);
    check_err!(lseek(fd, 0, SEEK_SET), Errno::EBADF);
    check_err!(fstat(fd), Errno::EBADF);
    check_err!(dup3(fd, 20, 0), Errno::EBADF);
    check_err!(ftruncate(fd, 0), Errno::EBADF);
    check_err!(getdents64(fd, &mut buf), Errno::EBADF);
    check_err!(read(1 << 20, &mut buf), Errno::EBADF);
    Ok(())
}

fn access_mode_is_enforced() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"data")?;
    let ro = open(&path, O_RDONLY, 0)?;
    let wo = open(&path, O_WRONLY, 0)?;
    let mut buf = [0u8; 4];
    check_err!(write(ro, b"x"), Errno::EBADF);
    check_err!(read(wo, &mut buf), Errno::EBADF);
    check_err!(ftruncate(ro, 0), Errno::EINVAL);
    check_eq!(read(ro, &mut buf)?, 4);
    Ok(())
}

fn bad_pointers_are_efault() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"some data")?;
    let fd = open(&path, O_RDWR, 0)?;
    // An address that was mapped and no longer is, and one that never is.
    let gone = map_anon(PAGE_SIZE)?;
    // SAFETY: our own page, given back so that its address is a hole.
    unsafe { munmap(gone, PAGE_SIZE) }?;
    for bad in [0x10, gone] {
        // SAFETY: the kernel must refuse the bad address and touch
        // no memory of ours.
        unsafe {
            check_err!(syscall!(__NR_read, fd, bad, 4), Errno::EFAULT);
            check_err!(syscall!(__NR_write, fd, bad, 4), Errno::EFAULT);
            check_err!(
                syscall!(__NR_openat, AT_FDCWD, bad, O_RDONLY),
                Errno::EFAULT
            );
            check_err!(syscall!(__NR_fstat, fd, bad), Errno::EFAULT);
            check_err!(syscall!(__NR_pipe2, bad, 0), Errno::EFAULT);
            check_err!(syscall!(__NR_mkdirat, AT_FDCWD, bad, 0o755), Errno::EFAULT);
            check_err!(syscall!(__NR_getcwd, bad, 256), Errno::EFAULT);
        }
        lseek(fd, 0, SEEK_SET)?;
    }
    check_eq!(read_file(&path)?, b"some data");
    Ok(())
}

fn lowest_free_fd_is_used() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"")?;
    let a = open(&path, O_RDONLY, 0)?;
    let b = open(&path, O_RDONLY, 0)?;
    let c = open(&path, O_RDONLY, 0)?;
    check!(a < b && b < c);
    close(a)?;
    check_eq!(open(&path, O_RDONLY, 0)?, a);
    Ok(())
}

fn append_writes_at_end() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"abc")?;
    let fd = open(&path, O_WRONLY | O_APPEND, 0)?;
    lseek(fd, 0, SEEK_SET)?;
    write(fd, b"de")?;
    check_eq!(lseek(fd, 0, SEEK_CUR)?, 5);
    // Linux appends even for pwrite on an O_APPEND file (pwrite(2), BUGS).
    check_eq!(pwrite64(fd, b"f", 0)?, 1);
    close(fd)?;
    check_eq!(read_file(&path)?, b"abcdef");
    Ok(())
}

fn trunc_and_excl() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    let fd = open(&path, O_WRONLY | O_CREAT | O_EXCL, 0o644)?;
    write(fd, b"0123456789")?;
    close(fd)?;
    check_eq!(stat(&path)?.st_size, 10);
    let fd = open(&path, O_WRONLY | O_TRUNC, 0)?;
    check_eq!(fstat(fd)?.st_size, 0);
    close(fd)?;
    check_eq!(read_file(&path)?, b"");
    Ok(())
}

fn lseek_whence_and_holes() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"0123456789")?;
    let fd = open(&path, O_RDWR, 0)?;
    check_eq!(lseek(fd, 4, SEEK_SET)?, 4);
    check_eq!(lseek(fd, 2, SEEK_CUR)?, 6);
    check_eq!(lseek(fd, -3, SEEK_END)?, 7);
    let mut buf = [0u8; 3];
    read(fd, &mut buf)?;
    check_eq!(&buf, b"789");
    check_err!(lseek(fd, -1, SEEK_SET), Errno::EINVAL);
    check_err!(lseek(fd, 0, 99), Errno::EINVAL);
    // Writing past the end leaves a hole that reads as zeros.
    check_eq!(lseek(fd, 3 * PAGE_SIZE as i64, SEEK_SET)?, 3 * PAGE_SIZE);
    write(fd, b"end")?;
    check_eq!(fstat(fd)?.st_size, 3 * PAGE_SIZE as i64 + 3);
    let mut hole = [0xffu8; 64];
    pread64(fd, &mut hole, PAGE_SIZE + 100)?;
    check!(hole.iter().all(|&b| b == 0), "hole is not zero");
    let [rd, _wr] = pipe2(O_CLOEXEC)?;
    check_err!(lseek(rd, 0, SEEK_CUR), Errno::ESPIPE);
    Ok(())
}

fn pread_pwrite_keep_offset() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"0123456789")?;
    let fd = open(&path, O_RDWR, 0)?;
    lseek(fd, 2, SEEK_SET)?;
    let mut buf = [0u8; 3];
    check_eq!(pread64(fd, &mut buf, 5)?, 3);
    check_eq!(&buf, b"567");
    check_eq!(pwrite64(fd, b"AB", 8)?, 2);
    check_eq!(pwrite64(fd, b"Z", 20)?, 1);
    check_eq!(lseek(fd, 0, SEEK_CUR)?, 2);
    check_eq!(pread64(fd, &mut buf, 30)?, 0);
    check_eq!(fstat(fd)?.st_size, 21);
    let [rd, _wr] = pipe2(O_CLOEXEC)?;
    check_err!(pread64(rd, &mut buf, 0), Errno::ESPIPE);
    Ok(())
}

fn readv_writev() -> TestResult {
    let scratch = Scratch::new()?;
    let fd = open(&scratch.path("f"), O_RDWR | O_CREAT, 0o644)?;
    let parts = [
        IoSlice::new(b"one "),
        IoSlice::new(b""),
        IoSlice::new(b"two"),
    ];
    check_eq!(writev(fd, &parts)?, 7);
    lseek(fd, 0, SEEK_SET)?;
    let (mut a, mut b) = ([0u8; 2], [0u8; 10]);
    let n = readv(fd, &mut [IoSliceMut::new(&mut a), IoSliceMut::new(&mut b)])?;
    check_eq!(n, 7);
    check_eq!(&a, b"on");
    check_eq!(&b[..5], b"e two");
    Ok(())
}

fn multi_page_file() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    let len = 5 * PAGE_SIZE + 123;
    let data: Vec<u8> = (0..len).map(pattern).collect();
    let fd = open(&path, O_RDWR | O_CREAT, 0o644)?;
    // Odd-sized writes that straddle page boundaries.
    for chunk in data.chunks(1000) {
        check_eq!(write(fd, chunk)?, chunk.len());
    }
    check_eq!(fstat(fd)?.st_size, len as i64);
    let mut buf = alloc::vec![0u8; 3 * PAGE_SIZE];
    let n = pread64(fd, &mut buf, PAGE_SIZE - 7)?;
    check_eq!(n, 3 * PAGE_SIZE);
    check!(
        buf == data[PAGE_SIZE - 7..4 * PAGE_SIZE - 7],
        "data differs"
    );
    check_eq!(read_file(&path)?, data);
    Ok(())
}

fn ftruncate_grows_and_shrinks() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"0123456789")?;
    let fd = open(&path, O_RDWR, 0)?;
    ftruncate(fd, 4)?;
    check_eq!(fstat(fd)?.st_size, 4);
    ftruncate(fd, 2 * PAGE_SIZE)?;
    check_eq!(fstat(fd)?.st_size, 2 * PAGE_SIZE as i64);
    let mut buf = [0xffu8; 8];
    pread64(fd, &mut buf, 0)?;
    check_eq!(&buf, b"0123\0\0\0\0");
    // SAFETY: ftruncate touches no memory.
    check_err!(
        unsafe { syscall!(__NR_ftruncate, fd, -1i64) },
        Errno::EINVAL
    );
    let [rd, _wr] = pipe2(O_CLOEXEC)?;
    check_err!(ftruncate(rd, 0), Errno::EINVAL);
    Ok(())
}

fn fallocate_sizes() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"abc")?;
    let fd = open(&path, O_RDWR, 0)?;
    fallocate(fd, 0, 0, 3 * PAGE_SIZE)?;
    check_eq!(fstat(fd)?.st_size, 3 * PAGE_SIZE as i64);
    fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 5 * PAGE_SIZE)?;
    check_eq!(fstat(fd)?.st_size, 3 * PAGE_SIZE as i64);
    let mut buf = [0xffu8; 6];
    pread64(fd, &mut buf, 0)?;
    check_eq!(&buf, b"abc\0\0\0");
    check_err!(fallocate(fd, 0, 0, 0), Errno::EINVAL);
    let ro = open(&path, O_RDONLY, 0)?;
    check_err!(fallocate(ro, 0, 0, PAGE_SIZE), Errno::EBADF);
    Ok(())
}

fn unlink_open_file() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"still here")?;
    let fd = open(&path, O_RDONLY, 0)?;
    unlinkat(AT_FDCWD, &path, 0)?;
    check_err!(stat(&path), Errno::ENOENT);
    check_err!(unlinkat(AT_FDCWD, &path, 0), Errno::ENOENT);
    // The open file lives on until its last descriptor closes.
    check_eq!(read_to_end(fd)?, b"still here");
    check_eq!(fstat(fd)?.st_nlink, 0);
    Ok(())
}

fn unlinkat_errors() -> TestResult {
    let scratch = Scratch::new()?;
    let dir = scratch.path("d");
    let file = scratch.path("f");
    mkdirat(AT_FDCWD, &dir, 0o755)?;
    write_file(&scratch.path("d/inner"), b"")?;
    write_file(&file, b"")?;
    check_err!(unlinkat(AT_FDCWD, &dir, 0), Errno::EISDIR);
    check_err!(unlinkat(AT_FDCWD, &dir, AT_REMOVEDIR), Errno::ENOTEMPTY);
    check_err!(unlinkat(AT_FDCWD, &file, AT_REMOVEDIR), Errno::ENOTDIR);
    check_err!(unlinkat(AT_FDCWD, &file, 0x1), Errno::EINVAL);
    unlinkat(AT_FDCWD, &scratch.path("d/inner"), 0)?;
    unlinkat(AT_FDCWD, &dir, AT_REMOVEDIR)?;
    check_err!(stat(&dir), Errno::ENOENT);
    Ok(())
}

fn mkdirat_errors() -> TestResult {
    let scratch = Scratch::new()?;
    let dir = scratch.path("d");
    mkdirat(AT_FDCWD, &dir, 0o755)?;
    check_eq!(stat(&dir)?.st_mode & S_IFMT, S_IFDIR);
    check_err!(mkdirat(AT_FDCWD, &dir, 0o755), Errno::EEXIST);
    check_err!(
        mkdirat(AT_FDCWD, &scratch.path("x/y"), 0o755),
        Errno::ENOENT
    );
    write_file(&scratch.path("f"), b"")?;
    check_err!(
        mkdirat(AT_FDCWD, &scratch.path("f/y"), 0o755),
        Errno::ENOTDIR
    );
    check_err!(mkdirat(AT_FDCWD, &scratch.path("f"), 0o755), Errno::EEXIST);
    Ok(())
}

fn renameat2_replaces() -> TestResult {
    let scratch = Scratch::new()?;
    let (a, b, c) = (scratch.path("a"), scratch.path("b"), scratch.path("c"));
    write_file(&a, b"from a")?;
    write_file(&b, b"from b")?;
    let ino_a = stat(&a)?.st_ino;
    renameat2(AT_FDCWD, &a, AT_FDCWD, &c, 0)?;
    check_err!(stat(&a), Errno::ENOENT);
    check_eq!(stat(&c)?.st_ino, ino_a);
    // Renaming over an existing file replaces it in one step.
    renameat2(AT_FDCWD, &c, AT_FDCWD, &b, 0)?;
    check_eq!(read_file(&b)?, b"from a");
    check_err!(stat(&c), Errno::ENOENT);
    // Into another directory.
    let dir = scratch.path("d");
    mkdirat(AT_FDCWD, &dir, 0o755)?;
    renameat2(AT_FDCWD, &b, AT_FDCWD, &scratch.path("d/b"), 0)?;
    check_eq!(read_file(&scratch.path("d/b"))?, b"from a");
    Ok(())
}

fn renameat2_errors() -> TestResult {
    let scratch = Scratch::new()?;
    let (f, g) = (scratch.path("f"), scratch.path("g"));
    let (d, e) = (scratch.path("d"), scratch.path("e"));
    write_file(&f, b"")?;
    write_file(&g, b"")?;
    mkdirat(AT_FDCWD, &d, 0o755)?;
    mkdirat(AT_FDCWD, &e, 0o755)?;
    write_file(&scratch.path("e/inner"), b"")?;
    check_err!(
        renameat2(AT_FDCWD, &scratch.path("missing"), AT_FDCWD, &g, 0),
        Errno::ENOENT
    );
    check_err!(
        renameat2(AT_FDCWD, &f, AT_FDCWD, &g, RENAME_NOREPLACE),
        Errno::EEXIST
    );
    check_err!(renameat2(AT_FDCWD, &f, AT_FDCWD, &d, 0), Errno::EISDIR);
    check_err!(renameat2(AT_FDCWD, &d, AT_FDCWD, &f, 0), Errno::ENOTDIR);
    check_err!(renameat2(AT_FDCWD, &d, AT_FDCWD, &e, 0), Errno::ENOTEMPTY);
    check_err!(
        renameat2(AT_FDCWD, &d, AT_FDCWD, &scratch.path("d/sub"), 0),
        Errno::EINVAL
    );
    check_err!(renameat2(AT_FDCWD, &f, AT_FDCWD, &g, 0x80), Errno::EINVAL);
    // A directory may replace an empty one.
    unlinkat(AT_FDCWD, &scratch.path("e/inner"), 0)?;
    renameat2(AT_FDCWD, &d, AT_FDCWD, &e, 0)?;
    check_err!(stat(&d), Errno::ENOENT);
    Ok(())
}

/// Every (name, d_type, d_ino) in directory `fd`, sorted, read with a
/// `bufsize` buffer.
fn list_dir(fd: i32, bufsize: usize) -> Result<Vec<(String, u8, u64)>, Errno> {
    let mut buf = alloc::vec![0u8; bufsize];
    let mut entries = Vec::new();
    loop {
        let n = getdents64(fd, &mut buf)?;
        if n == 0 {
            break;
        }
        for entry in dirents(&buf[..n]) {
            let name = String::from(entry.name.to_str().unwrap_or("?"));
            entries.push((name, entry.d_type, entry.ino));
        }
    }
    entries.sort();
    Ok(entries)
}

fn getdents64_lists_entries() -> TestResult {
    let scratch = Scratch::new()?;
    for name in ["a", "b", "c"] {
        write_file(&scratch.path(name), b"")?;
    }
    mkdirat(AT_FDCWD, &scratch.path("sub"), 0o755)?;
    let fd = open(scratch.dir(), O_RDONLY | O_DIRECTORY, 0)?;
    let entries = list_dir(fd, 4096)?;
    let names: Vec<&str> = entries.iter().map(|(n, _, _)| n.as_str()).collect();
    check_eq!(names, [".", "..", "a", "b", "c", "sub"]);
    for (name, d_type, ino) in &entries {
        let want = if name == "a" || name == "b" || name == "c" {
            DT_REG
        } else {
            DT_DIR
        };
        check!(*d_type == want, "{name}: d_type {d_type}");
        if name != ".." {
            check_eq!(*ino, stat(&scratch.path(name))?.st_ino);
        }
    }
    // At the end it keeps returning 0.
    let mut buf = [0u8; 256];
    check_eq!(getdents64(fd, &mut buf)?, 0);
    let file = open(&scratch.path("a"), O_RDONLY, 0)?;
    check_err!(getdents64(file, &mut buf), Errno::ENOTDIR);
    Ok(())
}

fn getdents64_small_buffer() -> TestResult {
    let scratch = Scratch::new()?;
    for i in 0..20 {
        write_file(&scratch.path(&alloc::format!("file{i:02}")), b"")?;
    }
    let fd = open(scratch.dir(), O_RDONLY | O_DIRECTORY, 0)?;
    let mut tiny = [0u8; 8];
    check_err!(getdents64(fd, &mut tiny), Errno::EINVAL);
    // A buffer for one or two records at a time still sees every entry once.
    let entries = list_dir(fd, 64)?;
    check_eq!(entries.len(), 22);
    let mut names: Vec<&str> = entries.iter().map(|(n, _, _)| n.as_str()).collect();
    names.dedup();
    check_eq!(names.len(), 22);
    Ok(())
}

fn fstat_and_newfstatat() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    let fd = open(&path, O_RDWR | O_CREAT, 0o644)?;
    write(fd, &[7u8; 10000])?;
    let st = fstat(fd)?;
    check_eq!(st.st_mode, S_IFREG | 0o644);
    check_eq!(st.st_size, 10000);
    check_eq!(st.st_nlink, 1);
    check!(st.st_blksize > 0);
    check!(st.st_blocks * 512 >= 10000, "st_blocks {}", st.st_blocks);
    let by_path = newfstatat(AT_FDCWD, &path, 0)?;
    check_eq!((by_path.st_ino, by_path.st_dev), (st.st_ino, st.st_dev));
    let by_fd = newfstatat(fd, c"", AT_EMPTY_PATH)?;
    check_eq!(by_fd.st_ino, st.st_ino);
    check_err!(newfstatat(fd, c"", 0), Errno::ENOENT);
    let dir = stat(scratch.dir())?;
    check_eq!(dir.st_mode & S_IFMT, S_IFDIR);
    check!(dir.st_ino != st.st_ino);
    let [rd, _wr] = pipe2(O_CLOEXEC)?;
    check_eq!(fstat(rd)?.st_mode & S_IFMT, S_IFIFO);
    check_err!(stat(&scratch.path("missing")), Errno::ENOENT);
    check_err!(newfstatat(AT_FDCWD, &path, 0x4), Errno::EINVAL);
    Ok(())
}

fn path_resolution() -> TestResult {
    let scratch = Scratch::new()?;
    mkdirat(AT_FDCWD, &scratch.path("d"), 0o755)?;
    write_file(&scratch.path("d/f"), b"x")?;
    let ino = stat(&scratch.path("d/f"))?.st_ino;
    for path in ["d/./f", "d/../d/f", "d//f", "./d/f"] {
        check_eq!(stat(&scratch.path(path))?.st_ino, ino);
    }
    check_err!(stat(&scratch.path("d/f/")), Errno::ENOTDIR);
    check_eq!(stat(&scratch.path("d/"))?.st_mode & S_IFMT, S_IFDIR);
    check_eq!(stat(c"/..")?.st_ino, stat(c"/")?.st_ino);
    Ok(())
}

fn openat_relative_to_dirfd() -> TestResult {
    let scratch = Scratch::new()?;
    write_file(&scratch.path("f"), b"rel")?;
    let dir = open(scratch.dir(), O_RDONLY | O_DIRECTORY, 0)?;
    let fd = openat(dir, c"f", O_RDONLY, 0)?;
    check_eq!(read_to_end(fd)?, b"rel");
    // An absolute path ignores the directory descriptor.
    let abs = openat(dir, c"/", O_RDONLY | O_DIRECTORY, 0)?;
    check_eq!(fstat(abs)?.st_ino, stat(c"/")?.st_ino);
    check_err!(openat(fd, c"f", O_RDONLY, 0), Errno::ENOTDIR);
    check_err!(openat(999, c"f", O_RDONLY, 0), Errno::EBADF);
    mkdirat(dir, c"sub", 0o700)?;
    check_eq!(stat(&scratch.path("sub"))?.st_mode & 0o777, 0o700);
    unlinkat(dir, c"f", 0)?;
    check_err!(stat(&scratch.path("f")), Errno::ENOENT);
    Ok(())
}

fn pipe_data_and_eof() -> TestResult {
    let [rd, wr] = pipe2(O_CLOEXEC)?;
    check_eq!(write(wr, b"abc")?, 3);
    check_eq!(write(wr, b"de")?, 2);
    let mut buf = [0u8; 16];
    // A read returns what is there without waiting for more.
    check_eq!(read(rd, &mut buf)?, 5);
    check_eq!(&buf[..5], b"abcde");
    close(wr)?;
    check_eq!(read(rd, &mut buf)?, 0);
    Ok(())
}

fn pipe_large_transfer() -> TestResult {
    // Far more than a pipe holds, so both sides block in turn.
    let len = 512 * 1024;
    let [rd, wr] = pipe2(O_CLOEXEC)?;
    let pid = fork()?;
    if pid == 0 {
        close(rd)?;
        let data: Vec<u8> = (0..len).map(pattern).collect();
        for chunk in data.chunks(3000) {
            ulib::print::write_all(wr, chunk);
        }
        exit_group(0);
    }
    close(wr)?;
    let got = read_to_end(rd)?;
    check_eq!(wait_for(pid)?.exit_code(), Some(0));
    check_eq!(got.len(), len);
    check!(
        got.iter().enumerate().all(|(i, &b)| b == pattern(i)),
        "pipe data corrupted"
    );
    Ok(())
}

fn pipe_epipe() -> TestResult {
    sigaction(SIGPIPE, Disposition::Ignore, 0)?;
    let [rd, wr] = pipe2(O_CLOEXEC)?;
    close(rd)?;
    check_err!(write(wr, b"x"), Errno::EPIPE);
    Ok(())
}

fn pipe2_flags() -> TestResult {
    let [rd, wr] = pipe2(O_CLOEXEC | O_NONBLOCK)?;
    // SAFETY: F_GETFD and F_GETFL take no pointer.
    unsafe {
        check_eq!(fcntl(rd, F_GETFD, 0)?, FD_CLOEXEC);
        check_eq!(fcntl(wr, F_GETFL, 0)? as u32 & O_ACCMODE, O_WRONLY);
        check!(fcntl(rd, F_GETFL, 0)? as u32 & O_NONBLOCK != 0);
    }
    let mut buf = [0u8; 4];
    check_err!(read(rd, &mut buf), Errno::EAGAIN);
    let [plain, _] = pipe2(0)?;
    // SAFETY: as above.
    check_eq!(unsafe { fcntl(plain, F_GETFD, 0) }?, 0);
    check_err!(pipe2(0x1), Errno::EINVAL);
    Ok(())
}

fn dup3_semantics() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"0123456789")?;
    let fd = open(&path, O_RDONLY, 0)?;
    check_eq!(dup3(fd, 20, 0)?, 20);
    // The copies share one open file, offset included.
    let mut buf = [0u8; 3];
    read(fd, &mut buf)?;
    check_eq!(lseek(20, 0, SEEK_CUR)?, 3);
    // SAFETY: F_GETFD takes no pointer.
    check_eq!(unsafe { fcntl(20, F_GETFD, 0) }?, 0);
    check_eq!(dup3(fd, 21, O_CLOEXEC)?, 21);
    // SAFETY: as above.
    check_eq!(unsafe { fcntl(21, F_GETFD, 0) }?, FD_CLOEXEC);
    // dup3 onto an open descriptor closes it first.
    let other = open(&path, O_RDONLY, 0)?;
    dup3(other, 20, 0)?;
    check_eq!(lseek(20, 0, SEEK_CUR)?, 0);
    check_err!(dup3(fd, fd, 0), Errno::EINVAL);
    check_err!(dup3(fd, 22, 0x1), Errno::EINVAL);
    check_err!(dup3(99, 22, 0), Errno::EBADF);
    check_err!(dup3(fd, -1, 0), Errno::EBADF);
    Ok(())
}

fn fcntl_commands() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"")?;
    let fd = open(&path, O_RDWR | O_APPEND, 0)?;
    // SAFETY: these commands take integers, not pointers.
    unsafe {
        let fl = fcntl(fd, F_GETFL, 0)? as u32;
        check_eq!(fl & O_ACCMODE, O_RDWR);
        check!(fl & O_APPEND != 0);
        // F_SETFL changes O_APPEND and O_NONBLOCK, never the access mode.
        fcntl(fd, F_SETFL, (O_NONBLOCK | O_RDONLY) as usize)?;
        let fl = fcntl(fd, F_GETFL, 0)? as u32;
        check_eq!(
            fl & (O_ACCMODE | O_APPEND | O_NONBLOCK),
            O_RDWR | O_NONBLOCK
        );
        let dup = fcntl(fd, F_DUPFD, 30)?;
        check!(dup >= 30, "F_DUPFD gave {dup}");
        check_eq!(fcntl(fd, F_DUPFD, 30)?, dup + 1);
        check_eq!(fcntl(dup as i32, F_GETFD, 0)?, 0);
        let cloexec = fcntl(fd, F_DUPFD_CLOEXEC, 0)?;
        check_eq!(fcntl(cloexec as i32, F_GETFD, 0)?, FD_CLOEXEC);
        check_eq!(fcntl(fd, F_GETFD, 0)?, 0);
        fcntl(fd, F_SETFD, FD_CLOEXEC)?;
        check_eq!(fcntl(fd, F_GETFD, 0)?, FD_CLOEXEC);
        fcntl(fd, F_SETFD, 0)?;
        check_eq!(fcntl(fd, F_GETFD, 0)?, 0);
        check_err!(fcntl(fd, 9999, 0), Errno::EINVAL);
        check_err!(fcntl(99, F_GETFD, 0), Errno::EBADF);
    }
    Ok(())
}

/// Exec'd by cloexec_closes_on_exec: `check_fds OPEN CLOSED`. Exits 0 if
/// descriptor OPEN is open and CLOSED is not.
fn check_fds(args: &[&str]) -> i32 {
    let fd = |i: usize| {
        args.get(i)
            .and_then(|a| a.parse::<i32>().ok())
            .unwrap_or(-1)
    };
    // SAFETY: F_GETFD takes no pointer.
    let is_open = |fd: i32| unsafe { fcntl(fd, F_GETFD, 0) }.is_ok();
    match (is_open(fd(0)), is_open(fd(1))) {
        (true, false) => 0,
        (open, closed) => {
            ulib::println!("fd {} open: {open}; fd {} open: {closed}", fd(0), fd(1));
            1
        }
    }
}

fn cloexec_closes_on_exec() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"")?;
    let kept = open(&path, O_RDONLY, 0)?;
    let closed = open(&path, O_RDONLY | O_CLOEXEC, 0)?;
    let (status, output) = run_helper(
        "check_fds",
        &[&alloc::format!("{kept}"), &alloc::format!("{closed}")],
    )?;
    check!(status.exit_code() == Some(0), "{status:?}: {output}");
    Ok(())
}

fn offset_shared_after_fork() -> TestResult {
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    let fd = open(&path, O_RDWR | O_CREAT, 0o644)?;
    write(fd, b"parent ")?;
    let status = in_child(|| match write(fd, b"child ") {
        Ok(6) => 0,
        _ => 1,
    })?;
    check_eq!(status.exit_code(), Some(0));
    write(fd, b"again")?;
    check_eq!(read_file(&path)?, b"parent child again");
    Ok(())
}

fn getcwd_and_chdir() -> TestResult {
    let scratch = Scratch::new()?;
    let mut buf = [0u8; 512];
    let n = getcwd(&mut buf)?;
    check!(
        n > 1 && buf[0] == b'/' && buf[n - 1] == 0,
        "getcwd gave {n}"
    );
    mkdirat(AT_FDCWD, &scratch.path("d"), 0o755)?;
    chdir(&scratch.path("d"))?;
    let n = getcwd(&mut buf)?;
    let cwd = CStr::from_bytes_with_nul(&buf[..n]).unwrap();
    check_eq!(cwd, scratch.path("d").as_c_str());
    // Relative paths now start here.
    write_file(c"rel", b"x")?;
    check_eq!(read_file(&scratch.path("d/rel"))?, b"x");
    chdir(c"..")?;
    let n = getcwd(&mut buf)?;
    check_eq!(&buf[..n], scratch.dir().to_bytes_with_nul());
    check_err!(getcwd(&mut buf[..3]), Errno::ERANGE);
    check_err!(chdir(&scratch.path("d/rel")), Errno::ENOTDIR);
    check_err!(chdir(&scratch.path("missing")), Errno::ENOENT);
    chdir(c"/")?;
    Ok(())
}

fn ioctl_tcgets() -> TestResult {
    let mut termios = [0u8; 64];
    for fd in 0..3 {
        // SAFETY: TCGETS writes a 36-byte struct termios into the buffer.
        match unsafe { ioctl(fd, TCGETS, termios.as_mut_ptr() as usize) } {
            // A console or terminal; a pipe or file says it is not one.
            Ok(_) | Err(Errno::ENOTTY) => {}
            // fd 0 may be closed when run from a script.
            Err(Errno::EBADF) if fd == 0 => {}
            Err(errno) => fail!("TCGETS on fd {fd}: {errno}"),
        }
    }
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"")?;
    let fd = open(&path, O_RDONLY, 0)?;
    // SAFETY: as above.
    unsafe {
        check_err!(
            ioctl(fd, TCGETS, termios.as_mut_ptr() as usize),
            Errno::ENOTTY
        );
        check_err!(
            ioctl(99, TCGETS, termios.as_mut_ptr() as usize),
            Errno::EBADF
        );
    }
    Ok(())
}

fn readlinkat_proc_self_exe() -> TestResult {
    let mut buf = [0u8; 512];
    let n = readlinkat(AT_FDCWD, c"/proc/self/exe", &mut buf)?;
    let exe = core::str::from_utf8(&buf[..n]).unwrap_or("");
    let me = ulib::args().next().unwrap_or("");
    let name = me.rsplit('/').next().unwrap_or(me);
    check!(
        exe.starts_with('/') && exe.ends_with(&alloc::format!("/{name}")),
        "/proc/self/exe is '{exe}', argv[0] is '{me}'"
    );
    let scratch = Scratch::new()?;
    let path = scratch.path("f");
    write_file(&path, b"")?;
    check_err!(readlinkat(AT_FDCWD, &path, &mut buf), Errno::EINVAL);
    check_err!(
        readlinkat(AT_FDCWD, &scratch.path("missing"), &mut buf),
        Errno::ENOENT
    );
    Ok(())
}

fn memfd_is_a_file() -> TestResult {
    let fd = memfd_create(c"ulib-test", MFD_CLOEXEC)?;
    // SAFETY: F_GETFD takes no pointer.
    check_eq!(unsafe { fcntl(fd, F_GETFD, 0) }?, FD_CLOEXEC);
    check_eq!(fstat(fd)?.st_size, 0);
    write(fd, b"in memory")?;
    check_eq!(pread64(fd, &mut [0u8; 9], 0)?, 9);
    ftruncate(fd, 2)?;
    lseek(fd, 0, SEEK_SET)?;
    check_eq!(read_to_end(fd)?, b"in");
    check_eq!(fstat(fd)?.st_mode & S_IFMT, S_IFREG);
    check_err!(memfd_create(c"x", 0x100), Errno::EINVAL);
    Ok(())
}
