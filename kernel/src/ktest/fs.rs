//! tmpfs, its page cache of large folios, the VFS and the /proc and /sys
//! files, on the running kernel.

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

use super::{ensure, frames_in_use, Test, TestResult};
use crate::errno::Errno;
use crate::fs::tmpfs;
use crate::fs::vfs::{
    self, FdTable, File, Inode, InodeKind, O_APPEND, O_CREAT, O_DIRECTORY, O_EXCL, O_RDONLY,
    O_RDWR, O_TRUNC, O_WRONLY,
};
use crate::mm::addr::{PhysAddr, PAGE_SIZE, PMD_SIZE};
use crate::mm::folio::Folio;
use crate::mm::huge_memory::{
    self,
    knobs::per_size_name,
    order::{MIN_LARGE_ORDER, PMD_ORDER},
    settings::HugeSettings,
};
use crate::mm::{frame, vmstat};

/// The tmpfs, VFS, sysfs and procfs tests, in the order `run_all` runs them.
pub const TESTS: &[Test] = &[
    Test {
        name: "tmpfs_4m_write_huge_always_mount_is_two_aligned_2m_folios",
        run: write_4m_huge_mount,
    },
    Test {
        name: "tmpfs_4m_write_shmem_enabled_always_memfd",
        run: write_4m_memfd_top_knob,
    },
    Test {
        name: "tmpfs_4m_write_2048kb_knob_memfd",
        run: write_4m_memfd_pmd_knob,
    },
    Test {
        name: "tmpfs_4m_write_never_is_1024_order0_folios",
        run: write_4m_never,
    },
    Test {
        name: "tmpfs_64k_knob_gives_64k_folios",
        run: knob_64k,
    },
    Test {
        name: "tmpfs_exec_text_moves_into_64k_folios_with_thp_exec_enabled",
        run: exec_64k,
    },
    Test {
        name: "tmpfs_readback_across_folios_and_holes",
        run: readback_across_folios_and_holes,
    },
    Test {
        name: "tmpfs_truncate_frees_exactly_the_folios_past_eof",
        run: truncate_frees_right_folios,
    },
    Test {
        name: "tmpfs_hole_punch_frees_whole_folios_zeroes_partial",
        run: hole_punch,
    },
    Test {
        name: "tmpfs_all_frames_back_after_files_deleted",
        run: frames_back_after_delete,
    },
    Test {
        name: "folio_references_flags_and_tail_pages",
        run: folio_refs_and_flags,
    },
    Test {
        name: "tmpfs_unlinked_open_file_keeps_data",
        run: unlinked_open_file,
    },
    Test {
        name: "tmpfs_size_limit_short_write_then_enospc",
        run: size_limit,
    },
    Test {
        name: "tmpfs_out_of_memory_short_write_then_enospc",
        run: out_of_memory,
    },
    Test {
        name: "tmpfs_fault_falls_back_to_64k_when_no_2m_block_is_free",
        run: fault_fallback,
    },
    Test {
        name: "tmpfs_fallocate_and_seek_data_hole",
        run: fallocate_and_seek,
    },
    Test {
        name: "vfs_open_flags_and_errors",
        run: open_flags_and_errors,
    },
    Test {
        name: "vfs_directories_rename_getdents",
        run: directories_rename_getdents,
    },
    Test {
        name: "vfs_path_lookup_dots_symlinks_limits",
        run: path_lookup,
    },
    Test {
        name: "vfs_fd_table",
        run: fd_table,
    },
    Test {
        name: "sysfs_knobs_read_and_write_like_linux",
        run: sysfs_knobs,
    },
    Test {
        name: "procfs_meminfo_and_vmstat_follow_the_page_cache",
        run: procfs_counts,
    },
    Test {
        name: "initramfs_unpacked_into_root",
        run: initramfs_unpacked,
    },
    Test {
        name: "tmpfs_stress_on_every_cpu",
        run: stress,
    },
];

/// An error's `Debug` text, for `map_err` into a `TestResult`.
fn e<T: core::fmt::Debug>(x: T) -> String {
    format!("{:?}", x)
}

/// The root directory of the mount tree, where every test path starts.
fn root() -> Arc<Inode> {
    vfs::root()
}

/// Opens `path` from the root (mode 0644 if it creates the file); the
/// error names the path.
fn open(path: &str, flags: u32) -> Result<Arc<File>, String> {
    vfs::open(&root(), path, flags, 0o644).map_err(|err| format!("open {}: {:?}", path, err))
}

/// `len` bytes of a repeatable pseudo-random pattern; different `seed`s give
/// different data, so misplaced bytes are caught.
fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len)
        .map(|i| ((i as u32).wrapping_mul(2654435761) ^ seed) as u8)
        .collect()
}

/// The tmpfs file (`shmem_inode_info` and its page cache) behind `file`;
/// panics if `file` is not a regular tmpfs file.
fn shmem(file: &File) -> &tmpfs::ShmemFile {
    match &file.inode.kind {
        InodeKind::File(f) => f,
        _ => panic!("not a tmpfs file"),
    }
}

/// (first index, order, physical address) of each folio caching the file.
fn folios(file: &File) -> Vec<(u64, u8, u64)> {
    let f = shmem(file);
    let mut out = Vec::new();
    let mut index = 0;
    let end = f.size().div_ceil(PAGE_SIZE as u64);
    while index < end {
        match f.mapping.get_folio(index) {
            Some((folio, page)) => {
                out.push((index - page as u64, folio.order(), folio.phys().0));
                index += (folio.nr_pages() - page) as u64;
            }
            None => index += 1,
        }
    }
    out
}

/// Runs `f` with the huge-page knobs at Linux's defaults changed by `set`
/// (whatever the command line chose), then restores them.
fn with_knobs<R>(set: impl FnOnce(&mut HugeSettings), f: impl FnOnce() -> R) -> R {
    let saved = huge_memory::huge_settings();
    huge_memory::update_huge_settings(|s| {
        *s = HugeSettings::default();
        set(s)
    });
    let r = f();
    huge_memory::update_huge_settings(|s| *s = saved);
    r
}

/// Every frame in use when a test began (`before`) and none more.
fn frames_back(before: usize) -> TestResult {
    ensure!(
        frames_in_use() == before,
        "frames in use {} -> {}",
        before,
        frames_in_use()
    );
    Ok(())
}

/// Writes all of `data` at the file position; a short write fails the test.
fn write_all(file: &File, data: &[u8]) -> TestResult {
    let n = file.write(data).map_err(e)?;
    ensure!(n == data.len(), "short write {} of {}", n, data.len());
    Ok(())
}

/// Up to `len` bytes read at `offset` with `pread` (fewer at EOF).
fn read_back(file: &File, offset: u64, len: usize) -> Result<Vec<u8>, String> {
    let mut buf = vec![0u8; len];
    let n = file.pread(&mut buf, offset).map_err(e)?;
    buf.truncate(n);
    Ok(buf)
}

/// Does the file hold `want` at `offset`? Read a page at a time: for a
/// test that leaves the heap no room for a large buffer.
fn reads_back(file: &File, offset: u64, want: &[u8]) -> Result<bool, String> {
    let mut page = [0u8; 4096];
    for (i, piece) in want.chunks(page.len()).enumerate() {
        let at = offset + (i * page.len()) as u64;
        let n = file.pread(&mut page[..piece.len()], at).map_err(e)?;
        if page[..n] != *piece {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Writes 4 MiB to `file` and checks that it reads back, that the page
/// cache holds it in folios of order `want_order` only, each naturally
/// aligned, and that `st_blocks` counts 4 MiB (8192 512-byte blocks).
fn check_4m(file: &File, want_order: u8) -> TestResult {
    let data = pattern(4 << 20, 7);
    write_all(file, &data)?;
    ensure!(
        read_back(file, 0, 4 << 20)? == data,
        "4 MiB read back differs"
    );
    let fs = folios(file);
    let want = (4 << 20) / (PAGE_SIZE << want_order);
    ensure!(
        fs.len() == want,
        "{} folios, want {}: {:?}",
        fs.len(),
        want,
        &fs[..fs.len().min(4)]
    );
    let cached = shmem(file).mapping.nr_folios();
    ensure!(
        cached == want,
        "page cache holds {} folios, want {}",
        cached,
        want
    );
    for &(index, order, pa) in &fs {
        ensure!(
            order == want_order,
            "folio at index {} has order {}",
            index,
            order
        );
        ensure!(
            pa % (PAGE_SIZE << order) as u64 == 0,
            "folio at {:#x} not naturally aligned",
            pa
        );
    }
    ensure!(
        file.fstat().st_blocks == 8192,
        "st_blocks {}",
        file.fstat().st_blocks
    );
    Ok(())
}

/// A 4 MiB write to a `huge=always` tmpfs mount lands in two aligned 2M
/// (PMD-order) folios, and the mount's root cannot be removed while mounted.
fn write_4m_huge_mount() -> TestResult {
    tmpfs::mount(&root(), "/mnt-huge", "huge=always").map_err(e)?;
    let f = open("/mnt-huge/big", O_CREAT | O_RDWR)?;
    let r = with_knobs(|_| {}, || check_4m(&f, PMD_ORDER));
    drop(f);
    vfs::unlink(&root(), "/mnt-huge/big").map_err(e)?;
    vfs::rmdir(&root(), "/mnt-huge")
        .err()
        .filter(|&err| err == Errno::EBUSY)
        .ok_or("mount root removable")?;
    r
}

/// With the top-level `shmem_enabled` knob at `always`, a 4 MiB write to a
/// memfd lands in 2M folios.
fn write_4m_memfd_top_knob() -> TestResult {
    with_knobs(
        |s| s.store_shmem_enabled("always").expect("valid"),
        || {
            let f = tmpfs::memfd_create("big", 0).map_err(e)?;
            check_4m(&f, PMD_ORDER)
        },
    )
}

/// With `hugepages-2048kB/shmem_enabled` at `always`, a 4 MiB write to a
/// memfd lands in 2M folios.
fn write_4m_memfd_pmd_knob() -> TestResult {
    with_knobs(
        |s| s.store_per_size(9, "always").expect("valid"),
        || {
            let f = tmpfs::memfd_create("big", 0).map_err(e)?;
            check_4m(&f, PMD_ORDER)
        },
    )
}

/// With every knob at its default (`never`), a 4 MiB write to the root
/// tmpfs lands in 1024 order-0 folios.
fn write_4m_never() -> TestResult {
    let f = open("/never-4m", O_CREAT | O_RDWR)?;
    let r = with_knobs(|_| {}, || check_4m(&f, 0));
    vfs::unlink(&root(), "/never-4m").map_err(e)?;
    r
}

/// With `hugepages-64kB/shmem_enabled` at `always`, a 4 MiB write to a
/// memfd lands in 64K (order-4) folios.
fn knob_64k() -> TestResult {
    with_knobs(
        |s| s.store_per_size(4, "always").expect("valid"),
        || {
            let f = tmpfs::memfd_create("64k", 0).map_err(e)?;
            check_4m(&f, 4)
        },
    )
}

/// The orders of `f`'s folios, in file order.
fn orders(f: &File) -> Vec<u8> {
    folios(f).iter().map(|&(_, order, _)| order).collect()
}

/// Seed 004's exec folio order: a 100K file written 4K at a time is
/// cached in 4K folios, whatever its mode (Debian's libm is 0644). Before a
/// fault through an executable mapping, `exec_readahead` moves the aligned
/// 64K around the page into one folio while `thp_exec_enabled` has bit 1,
/// the data unchanged; not with the bit off, not while a page of the range
/// is held, not where the range runs past the end of the file.
fn exec_64k() -> TestResult {
    let path = "/exec-64k";
    let f = vfs::open(&root(), path, O_CREAT | O_EXCL | O_RDWR, 0o644).map_err(e)?;
    let data = pattern(100 << 10, 3);
    let r = (|| {
        for chunk in data.chunks(PAGE_SIZE) {
            write_all(&f, chunk)?;
        }
        let file = shmem(&f);
        ensure!(orders(&f) == [0; 25], "written: orders {:?}", orders(&f));
        with_knobs(|_| {}, || file.exec_readahead(5));
        ensure!(orders(&f) == [0; 25], "knob 0x0: orders {:?}", orders(&f));
        with_knobs(
            |s| s.store_thp_exec_enabled("0x2").expect("valid"),
            || -> TestResult {
                let held = file.mapping.get_folio(3);
                file.exec_readahead(5);
                drop(held);
                ensure!(
                    orders(&f) == [0; 25],
                    "page 3 held: orders {:?}",
                    orders(&f)
                );
                file.exec_readahead(5);
                file.exec_readahead(20);
                let mut want = vec![4];
                want.extend([0; 9]);
                ensure!(orders(&f) == want, "knob 0x2: orders {:?}", orders(&f));
                Ok(())
            },
        )?;
        ensure!(read_back(&f, 0, data.len())? == data, "read back differs");
        Ok(())
    })();
    vfs::unlink(&root(), path).map_err(e)?;
    r
}

/// Data written across a 2M folio boundary and past a hole reads back; the
/// hole reads as zeros without allocating pages, and a read at EOF is empty.
fn readback_across_folios_and_holes() -> TestResult {
    with_knobs(
        |s| s.store_shmem_enabled("always").expect("valid"),
        || {
            let f = tmpfs::memfd_create("holes", 0).map_err(e)?;
            // Bytes straddling the 2M folio boundary, then a hole, then more.
            let a = pattern(10_000, 1);
            f.pwrite(&a, PMD_SIZE as u64 - 5000).map_err(e)?;
            let b = pattern(3000, 2);
            f.pwrite(&b, 8 << 20).map_err(e)?;
            ensure!(
                f.fstat().st_size == (8 << 20) + 3000,
                "size {}",
                f.fstat().st_size
            );
            ensure!(
                read_back(&f, PMD_SIZE as u64 - 5000, 10_000)? == a,
                "across the folio boundary"
            );
            ensure!(read_back(&f, 8 << 20, 3000)? == b, "after the hole");
            let pages_before = shmem(&f).nr_pages();
            let hole = read_back(&f, 5 << 20, 1 << 20)?;
            ensure!(
                hole.len() == 1 << 20 && hole.iter().all(|&x| x == 0),
                "hole not zeros"
            );
            ensure!(
                shmem(&f).nr_pages() == pages_before,
                "reading a hole allocated pages"
            );
            // Reads past EOF return nothing.
            ensure!(
                read_back(&f, (8 << 20) + 3000, 10)?.is_empty(),
                "read past EOF"
            );
            Ok(())
        },
    )
}

/// `ftruncate` into the first of two 2M folios frees the second whole and
/// keeps the first; growing again shows zeros past the old EOF, truncating
/// to 0 frees every frame, and a negative length is EINVAL.
fn truncate_frees_right_folios() -> TestResult {
    with_knobs(
        |s| s.store_shmem_enabled("always").expect("valid"),
        || {
            let f = tmpfs::memfd_create("trunc", 0).map_err(e)?;
            write_all(&f, &pattern(4 << 20, 3))?;
            let used0 = frames_in_use();
            // Into the first 2M folio: the second goes, the first keeps its pages.
            f.ftruncate(5000).map_err(e)?;
            ensure!(
                shmem(&f).nr_pages() == 512,
                "pages after truncate: {}",
                shmem(&f).nr_pages()
            );
            ensure!(frames_in_use() == used0 - 512, "second 2M folio not freed");
            // Growing again shows zeros past 5000, not the old data.
            f.ftruncate(8192).map_err(e)?;
            let back = read_back(&f, 0, 8192)?;
            ensure!(
                back[..5000] == pattern(4 << 20, 3)[..5000],
                "data before EOF lost"
            );
            ensure!(
                back[5000..].iter().all(|&x| x == 0),
                "stale data past the old EOF"
            );
            f.ftruncate(0).map_err(e)?;
            ensure!(shmem(&f).nr_pages() == 0, "truncate to 0 left pages");
            ensure!(frames_in_use() == used0 - 1024, "frames not back");
            ensure!(f.ftruncate(-1) == Err(Errno::EINVAL), "negative length");
            Ok(())
        },
    )
}

/// `FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE` over 1M..4M frees the
/// second 2M folio and zeroes the rest of the first, keeps the size, and bad
/// modes and a zero length are refused (Linux's `shmem_fallocate`).
fn hole_punch() -> TestResult {
    with_knobs(
        |s| s.store_shmem_enabled("always").expect("valid"),
        || {
            let f = tmpfs::memfd_create("punch", 0).map_err(e)?;
            let data = pattern(4 << 20, 4);
            write_all(&f, &data)?;
            let free0 = frame::free_stats().free_pages;
            // 1M..4M: the second folio goes whole, the first is zeroed from 1M.
            f.fallocate(3, 1 << 20, 3 << 20).map_err(e)?;
            ensure!(f.fstat().st_size == 4 << 20, "punch changed the size");
            ensure!(
                shmem(&f).nr_pages() == 512,
                "pages after punch: {}",
                shmem(&f).nr_pages()
            );
            ensure!(
                frame::free_stats().free_pages == free0 + 512,
                "punched folio not freed"
            );
            let back = read_back(&f, 0, 4 << 20)?;
            ensure!(
                back[..1 << 20] == data[..1 << 20],
                "data before the hole changed"
            );
            ensure!(back[1 << 20..].iter().all(|&x| x == 0), "hole not zeros");
            ensure!(
                f.fallocate(2, 0, 4096) == Err(Errno::EINVAL),
                "punch without KEEP_SIZE"
            );
            ensure!(
                f.fallocate(0x10, 0, 4096) == Err(Errno::EOPNOTSUPP),
                "unknown mode"
            );
            ensure!(f.fallocate(0, 0, 0) == Err(Errno::EINVAL), "zero length");
            Ok(())
        },
    )
}

/// A folio outlives its removal from the page cache while someone holds a
/// reference; every frame of it leads back to its head.
fn folio_refs_and_flags() -> TestResult {
    with_knobs(
        |s| s.store_shmem_enabled("always").expect("valid"),
        || {
            let f = tmpfs::memfd_create("refs", 0).map_err(e)?;
            write_all(&f, &pattern(PMD_SIZE, 6))?;
            let (folio, page) = shmem(&f).mapping.get_folio(100).ok_or("no folio")?;
            ensure!(
                page == 100 && folio.order() == PMD_ORDER,
                "page {} order {}",
                page,
                folio.order()
            );
            ensure!(
                folio.refcount() == 2,
                "refcount {} (cache + us)",
                folio.refcount()
            );
            ensure!(
                folio.is_uptodate() && folio.is_dirty(),
                "written folio not uptodate+dirty"
            );
            // SAFETY: a frame of `folio`, on which we hold a reference.
            let tail = unsafe { Folio::from_pfn(folio.pfn() + 77) };
            ensure!(
                tail.pfn() == folio.pfn() && folio.refcount() == 3,
                "tail page -> head"
            );
            drop(tail);
            let free0 = frame::free_stats().free_pages;
            f.ftruncate(0).map_err(e)?;
            ensure!(folio.refcount() == 1, "cache kept its reference");
            ensure!(
                frame::free_stats().free_pages == free0,
                "freed while referenced"
            );
            let mut byte = [0u8];
            folio.read_at(5, &mut byte);
            ensure!(byte[0] == pattern(6, 6)[5], "data changed while referenced");
            drop(folio);
            ensure!(
                frame::free_stats().free_pages == free0 + 512,
                "not freed at the last put"
            );
            Ok(())
        },
    )
}

/// Writing, truncating and deleting 16 files in a directory returns every
/// frame they took.
fn frames_back_after_delete() -> TestResult {
    let before = frames_in_use();
    vfs::mkdir(&root(), "/frames", 0o755).map_err(e)?;
    for i in 0..16 {
        let f = open(&format!("/frames/f{}", i), O_CREAT | O_RDWR)?;
        write_all(&f, &pattern(100_000 + i * 7919, i as u32))?;
        if i % 3 == 0 {
            f.ftruncate(12_345).map_err(e)?;
        }
    }
    ensure!(frames_in_use() > before, "files took no frames");
    for i in 0..16 {
        vfs::unlink(&root(), &format!("/frames/f{}", i)).map_err(e)?;
    }
    vfs::rmdir(&root(), "/frames").map_err(e)?;
    let after = frames_in_use();
    ensure!(
        after == before,
        "frames in use {} -> {} after deleting every file",
        before,
        after
    );
    Ok(())
}

/// An unlinked file that is still open keeps its data (`st_nlink` 0) and
/// frees its frames at the last close, as Linux's `iput_final`.
fn unlinked_open_file() -> TestResult {
    let before = frames_in_use();
    let f = open("/ghost", O_CREAT | O_RDWR)?;
    write_all(&f, &pattern(50_000, 9))?;
    vfs::unlink(&root(), "/ghost").map_err(e)?;
    ensure!(
        vfs::lookup(&root(), "/ghost", true).err() == Some(Errno::ENOENT),
        "name still there"
    );
    ensure!(
        read_back(&f, 0, 50_000)? == pattern(50_000, 9),
        "data lost at unlink"
    );
    ensure!(f.fstat().st_nlink == 0, "nlink {}", f.fstat().st_nlink);
    drop(f);
    ensure!(frames_in_use() == before, "frames not freed at last close");
    Ok(())
}

/// A `size=64k` mount takes a short write up to 64K, then ENOSPC; truncating
/// gives the space back, and bad `huge=`/`size=` options are EINVAL.
fn size_limit() -> TestResult {
    tmpfs::mount(&root(), "/small", "size=64k").map_err(e)?;
    let f = open("/small/f", O_CREAT | O_RDWR)?;
    let n = f.write(&pattern(100_000, 5)).map_err(e)?;
    ensure!(n == 65536, "wrote {} bytes into a 64K tmpfs", n);
    ensure!(
        f.write(b"more") == Err(Errno::ENOSPC),
        "no ENOSPC when full"
    );
    ensure!(
        read_back(&f, 0, 65536)? == pattern(100_000, 5)[..65536],
        "partial write data"
    );
    f.ftruncate(4096).map_err(e)?;
    ensure!(
        f.write(b"fits again").is_ok(),
        "space not returned by truncate"
    );
    ensure!(
        tmpfs::mount(&root(), "/bad", "huge=sometimes") == Err(Errno::EINVAL),
        "bad huge="
    );
    ensure!(
        tmpfs::mount(&root(), "/bad", "size=lots") == Err(Errno::EINVAL),
        "bad size="
    );
    Ok(())
}

/// A fault on a hole of a memfd whose knobs allow 2M and 64K, with every
/// free 2M block taken: the 2M attempt counts its fallbacks (Linux's
/// `thp_file_fallback` and `hugepages-2048kB/stats/shmem_fallback`) and
/// the fault gets a 64K folio; with the blocks back, 2M again.
fn fault_fallback() -> TestResult {
    let before = frames_in_use();
    with_knobs(
        |s| {
            s.store_shmem_enabled("always").expect("valid");
            s.store_per_size(4, "always").expect("valid");
        },
        || {
            let f = tmpfs::memfd_create("fallback", 0).map_err(e)?;
            f.ftruncate(4 << 20).map_err(e)?;
            let file = shmem(&f);
            let fits = |_| true;
            let (thp, mthp) = (
                vmstat::THP_FILE_FALLBACK.get(),
                vmstat::MTHP_SHMEM_FALLBACK[9].get(),
            );
            // Every free 2M block taken, then all but the first frame of
            // enough of them given back (split, so they cannot merge into
            // 2M again) to stay above the kernel's reserve.
            let mut hog = Vec::new();
            while let Some(pa) = frame::alloc_pages(9) {
                hog.push(pa);
            }
            let given = (frame::min_free_pages() >> 9) + 4;
            for &pa in hog.iter().take(given) {
                frame::split_pages(pa, 9, 0);
                for page in 1..512 {
                    frame::free_pages(PhysAddr::from_pfn(pa.pfn() + page), 0).map_err(e)?;
                }
            }
            let small = file.fault_folio(0, false, fits).map_err(e);
            for (i, &pa) in hog.iter().enumerate() {
                match i < given {
                    true => frame::free_pages(pa, 0).map_err(e)?,
                    false => frame::free_pages(pa, 9).map_err(e)?,
                }
            }
            let (folio, page) = small?;
            ensure!(
                folio.order() == 4 && page == 0,
                "with no 2M free: order {}",
                folio.order()
            );
            ensure!(
                vmstat::THP_FILE_FALLBACK.get() == thp + 1
                    && vmstat::MTHP_SHMEM_FALLBACK[9].get() == mthp + 1,
                "fallbacks counted {} and {}, want one each",
                vmstat::THP_FILE_FALLBACK.get() - thp,
                vmstat::MTHP_SHMEM_FALLBACK[9].get() - mthp
            );
            let (big, page) = file.fault_folio(1000, false, fits).map_err(e)?;
            ensure!(
                big.order() == 9 && page == 1000 - 512,
                "then order {}",
                big.order()
            );
            ensure!(
                folios(&f) == [(0, 4, folio.phys().0), (512, 9, big.phys().0)].to_vec(),
                "cache {:?}",
                folios(&f)
            );
            Ok(())
        },
    )?;
    frames_back(before)
}

/// With RAM nearly gone, a write stops short and then fails with ENOSPC;
/// the file stays consistent, the kernel (its heap) keeps working, and
/// every frame comes back afterwards.
fn out_of_memory() -> TestResult {
    // Pages left for the file: 32 MiB above the kernel's reserve.
    let left = frame::min_free_pages() + 8192;
    let before = frames_in_use();
    let mut hog: Vec<(crate::mm::addr::PhysAddr, usize)> = Vec::with_capacity(8192);
    while frame::free_stats().free_pages > left && hog.len() < hog.capacity() {
        let order = if frame::free_stats().free_pages > left + 256 {
            8
        } else {
            0
        };
        hog.push((
            frame::alloc_pages(order).ok_or("RAM ran out while hogging")?,
            order,
        ));
    }
    tmpfs::mount(&root(), "/oom", "size=64g").map_err(e)?;
    let result = (|| {
        let f = open("/oom/f", O_CREAT | O_RDWR)?;
        let chunk = pattern(256 * 1024, 11);
        let mut total = 0u64;
        let error = loop {
            match f.write(&chunk) {
                Ok(n) if n > 0 => total += n as u64,
                Ok(_) => break Errno::EINVAL,
                Err(err) => break err,
            }
            ensure!(
                total < (left * PAGE_SIZE) as u64,
                "wrote {} bytes into {} free pages",
                total,
                left
            );
        };
        ensure!(error == Errno::ENOSPC, "out of memory gave {:?}", error);
        ensure!(
            total > (8192 * PAGE_SIZE / 2) as u64,
            "gave up early at {} bytes",
            total
        );
        ensure!(
            f.fstat().st_size as u64 == total,
            "size {} after writing {}",
            f.fstat().st_size,
            total
        );
        let last = total - total % chunk.len() as u64;
        ensure!(reads_back(&f, 0, &chunk[..4096])?, "first page after OOM");
        ensure!(
            reads_back(&f, last, &chunk[..(total - last) as usize])?,
            "tail after OOM"
        );
        let heap_still_works: Vec<alloc::boxed::Box<u64>> =
            (0..1000).map(alloc::boxed::Box::new).collect();
        ensure!(*heap_still_works[999] == 999, "kernel heap");
        Ok(())
    })();
    vfs::unlink(&root(), "/oom/f").map_err(e)?;
    for (pa, order) in hog {
        frame::free_pages(pa, order).map_err(e)?;
    }
    result?;
    frames_back(before)
}

/// `fallocate` allocates (and with KEEP_SIZE, leaves `st_size` alone), and
/// `lseek`'s SEEK_DATA/SEEK_HOLE find the allocated pages and the holes
/// between them, with ENXIO past the last data and past EOF.
fn fallocate_and_seek() -> TestResult {
    let f = open("/falloc", O_CREAT | O_RDWR)?;
    f.fallocate(0, 8192, 8192).map_err(e)?;
    ensure!(
        f.fstat().st_size == 16384 && f.fstat().st_blocks == 16,
        "stat {:?}",
        f.fstat()
    );
    f.fallocate(1, 65536, 4096).map_err(e)?;
    ensure!(f.fstat().st_size == 16384, "KEEP_SIZE grew the file");
    f.ftruncate(128 * 1024).map_err(e)?;
    use vfs::{SEEK_DATA, SEEK_END, SEEK_HOLE};
    ensure!(f.lseek(0, SEEK_DATA) == Ok(8192), "SEEK_DATA from 0");
    ensure!(
        f.lseek(8192, SEEK_HOLE) == Ok(16384),
        "SEEK_HOLE after data"
    );
    ensure!(
        f.lseek(20000, SEEK_DATA) == Ok(65536),
        "SEEK_DATA into the kept-size page"
    );
    ensure!(
        f.lseek(70000, SEEK_DATA) == Err(Errno::ENXIO),
        "no data after the last page"
    );
    ensure!(f.lseek(0, SEEK_END) == Ok(128 * 1024), "SEEK_END");
    ensure!(f.lseek(-1, 0) == Err(Errno::EINVAL), "negative SEEK_SET");
    ensure!(
        f.lseek(200_000, SEEK_HOLE) == Err(Errno::ENXIO),
        "SEEK_HOLE past EOF"
    );
    vfs::unlink(&root(), "/falloc").map_err(e)?;
    Ok(())
}

/// `open` flags and errors as Linux returns them: ENOENT, EEXIST with
/// `O_EXCL`, EBADF on the wrong access mode, `O_APPEND`, `O_TRUNC`, ENOTDIR,
/// EISDIR, and EFBIG for a write past the largest offset.
fn open_flags_and_errors() -> TestResult {
    let r = root();
    ensure!(
        vfs::open(&r, "/nope", O_RDONLY, 0).err() == Some(Errno::ENOENT),
        "ENOENT"
    );
    let f = open("/flags", O_CREAT | O_EXCL | O_WRONLY)?;
    ensure!(
        vfs::open(&r, "/flags", O_CREAT | O_EXCL | O_RDWR, 0).err() == Some(Errno::EEXIST),
        "EEXIST"
    );
    write_all(&f, b"hello")?;
    ensure!(
        f.read(&mut [0u8; 4]) == Err(Errno::EBADF),
        "read on O_WRONLY"
    );
    let ro = open("/flags", O_RDONLY)?;
    ensure!(ro.write(b"x") == Err(Errno::EBADF), "write on O_RDONLY");
    let app = open("/flags", O_WRONLY | O_APPEND)?;
    write_all(&app, b" world")?;
    ensure!(read_back(&ro, 0, 64)? == b"hello world", "O_APPEND");
    let t = open("/flags", O_RDWR | O_TRUNC)?;
    ensure!(t.fstat().st_size == 0, "O_TRUNC");
    ensure!(
        vfs::open(&r, "/flags", O_RDONLY | O_DIRECTORY, 0).err() == Some(Errno::ENOTDIR),
        "O_DIRECTORY on a file"
    );
    ensure!(
        vfs::open(&r, "/proc", O_WRONLY, 0).err() == Some(Errno::EISDIR),
        "writing a directory"
    );
    ensure!(
        vfs::open(&r, "/flags/x", O_RDONLY, 0).err() == Some(Errno::ENOTDIR),
        "file as directory"
    );
    ensure!(
        vfs::open(&r, "/newdir/", O_CREAT | O_RDWR, 0).err() == Some(Errno::EISDIR),
        "O_CREAT with a slash"
    );
    let d = open("/", O_RDONLY | O_DIRECTORY)?;
    ensure!(
        d.read(&mut [0u8; 8]) == Err(Errno::EISDIR),
        "read of a directory"
    );
    ensure!(f.pwrite(b"x", u64::MAX - 1) == Err(Errno::EFBIG), "EFBIG");
    vfs::unlink(&r, "/flags").map_err(e)?;
    Ok(())
}

/// Every `(name, d_type)` a directory's `getdents64` returns, decoding each
/// `linux_dirent64` record from a small buffer (so it takes several calls).
fn names(dir: &File) -> Result<Vec<(String, u8)>, String> {
    let mut buf = vec![0u8; 256];
    let mut out = Vec::new();
    loop {
        let n = dir.getdents64(&mut buf).map_err(e)?;
        if n == 0 {
            return Ok(out);
        }
        let mut off = 0;
        while off < n {
            let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
            let name = &buf[off + 19..off + reclen];
            let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
            out.push((
                String::from_utf8_lossy(&name[..end]).into_owned(),
                buf[off + 18],
            ));
            off += reclen;
        }
    }
}

/// `mkdir`, `rmdir`, `unlink`, `rename` and `getdents64` with their Linux
/// errors: EEXIST, ENOTEMPTY, ENOTDIR, EISDIR, EINVAL, EPERM in /proc; a
/// rename replaces its target and a moved directory's `..` follows it.
fn directories_rename_getdents() -> TestResult {
    let r = root();
    vfs::mkdir(&r, "/d", 0o755).map_err(e)?;
    ensure!(
        vfs::mkdir(&r, "/d", 0o755) == Err(Errno::EEXIST),
        "mkdir twice"
    );
    vfs::mkdir(&r, "/d/sub", 0o755).map_err(e)?;
    write_all(&*open("/d/a", O_CREAT | O_WRONLY)?, b"A")?;
    write_all(&*open("/d/b", O_CREAT | O_WRONLY)?, b"B")?;
    let listing = names(&*open("/d", O_RDONLY | O_DIRECTORY)?)?;
    let want: Vec<(String, u8)> = [(".", 4), ("..", 4), ("a", 8), ("b", 8), ("sub", 4)]
        .iter()
        .map(|(n, t)| (String::from(*n), *t))
        .collect();
    ensure!(listing == want, "getdents64: {:?}", listing);
    ensure!(
        vfs::rmdir(&r, "/d") == Err(Errno::ENOTEMPTY),
        "rmdir non-empty"
    );
    ensure!(
        vfs::rmdir(&r, "/d/a") == Err(Errno::ENOTDIR),
        "rmdir a file"
    );
    ensure!(
        vfs::unlink(&r, "/d/sub") == Err(Errno::EISDIR),
        "unlink a directory"
    );
    ensure!(vfs::rmdir(&r, "/d/.") == Err(Errno::EINVAL), "rmdir .");
    // Rename: over a file replaces it; file over dir, dir into itself fail.
    vfs::rename(&r, "/d/a", "/d/b").map_err(e)?;
    ensure!(
        read_back(&*open("/d/b", O_RDONLY)?, 0, 8)? == b"A",
        "rename did not replace"
    );
    ensure!(
        vfs::lookup(&r, "/d/a", true).err() == Some(Errno::ENOENT),
        "old name remains"
    );
    ensure!(
        vfs::rename(&r, "/d/b", "/d/sub") == Err(Errno::EISDIR),
        "file over directory"
    );
    ensure!(
        vfs::rename(&r, "/d", "/d/sub/inner") == Err(Errno::EINVAL),
        "directory into itself"
    );
    vfs::rename(&r, "/d/sub", "/d/moved").map_err(e)?;
    ensure!(
        vfs::lookup(&r, "/d/moved/..", true).map(|i| i.ino)
            == vfs::lookup(&r, "/d", true).map(|i| i.ino),
        "moved dir's .."
    );
    ensure!(
        vfs::rename(&r, "/proc/meminfo", "/x") == Err(Errno::EPERM),
        "renaming out of /proc"
    );
    vfs::unlink(&r, "/d/b").map_err(e)?;
    vfs::rmdir(&r, "/d/moved").map_err(e)?;
    vfs::rmdir(&r, "/d").map_err(e)?;
    ensure!(
        vfs::lookup(&r, "/d", true).err() == Some(Errno::ENOENT),
        "rmdir left it"
    );
    Ok(())
}

/// Path walks (Linux's `link_path_walk`): relative paths with `.`, `..` and
/// double slashes, symlinks to files and directories, `lstat` not following,
/// ELOOP for a symlink cycle, ENAMETOOLONG, and ENOTDIR for `file/`.
fn path_lookup() -> TestResult {
    let r = root();
    vfs::mkdir(&r, "/p", 0o755).map_err(e)?;
    vfs::mkdir(&r, "/p/q", 0o755).map_err(e)?;
    write_all(&*open("/p/q/f", O_CREAT | O_WRONLY)?, b"F")?;
    let q = vfs::lookup(&r, "/p/q", true).map_err(e)?;
    let ino = vfs::lookup(&r, "/p/q/f", true).map_err(e)?.ino;
    for path in [
        "f",
        "./f",
        "../q/f",
        "../../p/q/f",
        "/p//q/./f",
        "../../../../p/q/f",
    ] {
        ensure!(
            vfs::lookup(&q, path, true).map(|i| i.ino) == Ok(ino),
            "relative {}",
            path
        );
    }
    vfs::symlink("q/f", &r, "/p/link").map_err(e)?;
    vfs::symlink("/p/q", &r, "/p/dirlink").map_err(e)?;
    ensure!(
        vfs::lookup(&r, "/p/link", true).map(|i| i.ino) == Ok(ino),
        "symlink to a file"
    );
    ensure!(
        vfs::lookup(&r, "/p/dirlink/f", true).map(|i| i.ino) == Ok(ino),
        "symlink as a directory"
    );
    ensure!(
        vfs::lookup(&r, "/p/link", false).map(|i| i.mode() & vfs::S_IFMT) == Ok(vfs::S_IFLNK),
        "lstat"
    );
    vfs::symlink("loop2", &r, "/p/loop1").map_err(e)?;
    vfs::symlink("loop1", &r, "/p/loop2").map_err(e)?;
    ensure!(
        vfs::lookup(&r, "/p/loop1", true).err() == Some(Errno::ELOOP),
        "ELOOP"
    );
    let long = "x".repeat(256);
    ensure!(
        vfs::lookup(&r, &format!("/p/{}", long), true).err() == Some(Errno::ENAMETOOLONG),
        "long name"
    );
    ensure!(
        vfs::mkdir(&r, &format!("/p/{}", long), 0).err() == Some(Errno::ENAMETOOLONG),
        "mkdir long name"
    );
    let deep = "/a".repeat(2100);
    ensure!(
        vfs::lookup(&r, &deep, true).err() == Some(Errno::ENAMETOOLONG),
        "long path"
    );
    ensure!(
        vfs::lookup(&r, "", true).err() == Some(Errno::ENOENT),
        "empty path"
    );
    ensure!(
        vfs::lookup(&r, "/p/q/f/", true).err() == Some(Errno::ENOTDIR),
        "file with a slash"
    );
    ensure!(
        vfs::mkdir(&r, "/proc/x", 0) == Err(Errno::EPERM),
        "mkdir in /proc"
    );
    for p in ["/p/link", "/p/dirlink", "/p/loop1", "/p/loop2", "/p/q/f"] {
        vfs::unlink(&r, p).map_err(e)?;
    }
    vfs::rmdir(&r, "/p/q").map_err(e)?;
    vfs::rmdir(&r, "/p").map_err(e)?;
    Ok(())
}

/// The fd table hands out the lowest free fd, reuses closed ones, returns
/// EBADF for unused fds, `dup_to` (dup2/dup3) refuses the same fd, and it
/// fills up at `NR_OPEN`.
fn fd_table() -> TestResult {
    let mut t = FdTable::new();
    let f = open("/proc/meminfo", O_RDONLY)?;
    ensure!(
        t.install(f.clone()) == Ok(0) && t.install(f.clone()) == Ok(1),
        "lowest fds first"
    );
    t.close(0).map_err(e)?;
    ensure!(t.install(f.clone()) == Ok(0), "freed fd reused");
    ensure!(
        t.close(7) == Err(Errno::EBADF) && t.get(5).err() == Some(Errno::EBADF),
        "EBADF"
    );
    ensure!(t.dup_to(1, 9, false) == Ok(9) && t.get(9).is_ok(), "dup_to");
    ensure!(
        t.dup_to(1, 1, false) == Err(Errno::EINVAL),
        "dup onto itself"
    );
    let mut n = 3;
    while t.install(f.clone()).is_ok() {
        n += 1;
    }
    ensure!(n == vfs::NR_OPEN, "{} fds before EMFILE", n);
    Ok(())
}

/// The whole of a text file, read 7 bytes at a time so that a /proc or
/// /sys snapshot must be stitched together across reads.
fn read_text(path: &str) -> Result<String, String> {
    let f = open(path, O_RDONLY)?;
    let mut out = Vec::new();
    let mut buf = [0u8; 7]; // small reads: the snapshot must stitch together
    loop {
        let n = f.read(&mut buf).map_err(e)?;
        if n == 0 {
            return String::from_utf8(out).map_err(e);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// Writes `text` to the existing file at `path` (a sysfs knob); returns the
/// bytes written or the write's errno.
fn write_text(path: &str, text: &str) -> Result<usize, Errno> {
    vfs::open(&root(), path, O_WRONLY, 0)?.write(text.as_bytes())
}

/// The transparent_hugepage sysfs knobs read and write as Linux's do: the
/// `[selected]` value, per-size `inherit`, EINVAL for bad values (leaving
/// the knob unchanged), the `0x` flag knobs, and one file per large order.
fn sysfs_knobs() -> TestResult {
    let top = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";
    let k64 = "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/shmem_enabled";
    let k2m = "/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/shmem_enabled";
    let saved = huge_memory::huge_settings();
    huge_memory::update_huge_settings(|s| *s = HugeSettings::default());
    let r = (|| {
        ensure!(
            read_text(top)? == "always within_size advise [never] deny force\n",
            "top: {:?}",
            read_text(top)
        );
        ensure!(
            read_text(k64)? == "always inherit within_size advise [never]\n",
            "64k: {:?}",
            read_text(k64)
        );
        ensure!(
            read_text(k2m)? == "always [inherit] within_size advise never\n",
            "2M: {:?}",
            read_text(k2m)
        );
        ensure!(write_text(top, "always\n") == Ok(7), "write always");
        ensure!(
            read_text(top)? == "[always] within_size advise never deny force\n",
            "after always"
        );
        for bad in ["sometimes\n", "", "[never]", "always always"] {
            ensure!(
                write_text(top, bad) == Err(Errno::EINVAL),
                "{:?} accepted",
                bad
            );
        }
        ensure!(
            read_text(top)?.starts_with("[always]"),
            "a bad write changed the knob"
        );
        ensure!(write_text(k64, "within_size") == Ok(11), "per-size write");
        ensure!(
            read_text(k64)? == "always inherit [within_size] advise never\n",
            "64k after write"
        );
        ensure!(
            write_text(k64, "force") == Err(Errno::EINVAL),
            "per-size force"
        );
        let flags = [
            "/sys/kernel/mm/transparent_hugepage/thp_exec_enabled",
            "/sys/kernel/mm/transparent_hugepage/thp_mapping_align",
        ];
        for knob in flags {
            ensure!(
                read_text(knob)? == "0x0\n",
                "{}: {:?}",
                knob,
                read_text(knob)
            );
            ensure!(write_text(knob, "0x2\n") == Ok(4), "{} write 0x2", knob);
            ensure!(read_text(knob)? == "0x2\n", "{} after 0x2", knob);
            ensure!(
                write_text(knob, "0x4") == Err(Errno::EINVAL),
                "{} 0x4",
                knob
            );
            ensure!(write_text(knob, "x") == Err(Errno::EINVAL), "{} x", knob);
            ensure!(
                read_text(knob)? == "0x2\n",
                "{}: a bad write changed it",
                knob
            );
        }
        for order in MIN_LARGE_ORDER..=PMD_ORDER {
            let path = format!(
                "/sys/kernel/mm/transparent_hugepage/{}/shmem_enabled",
                per_size_name(order)
            );
            ensure!(read_text(&path).is_ok(), "{} missing", path);
        }
        ensure!(
            vfs::open(&root(), "/proc/meminfo", O_WRONLY, 0).err() == Some(Errno::EACCES),
            "meminfo writable"
        );
        Ok(())
    })();
    huge_memory::update_huge_settings(|s| *s = saved);
    r
}

/// The number after `key` (and an optional colon) in /proc text such as
/// `MemFree:  123 kB` or `thp_file_alloc 4`.
fn field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|rest| rest.trim_start_matches(':').split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// A 4 MiB memfd write shows in /proc/meminfo (`Shmem`, `ShmemHugePages`,
/// `MemFree`) and /proc/vmstat (`folio_alloc_order_9`, `thp_file_alloc`),
/// and `Shmem` goes back down when the file is closed.
fn procfs_counts() -> TestResult {
    with_knobs(
        |s| s.store_shmem_enabled("always").expect("valid"),
        || {
            let m0 = read_text("/proc/meminfo")?;
            let v0 = read_text("/proc/vmstat")?;
            ensure!(
                m0.lines()
                    .next()
                    .is_some_and(|l| l.starts_with("MemTotal:") && l.ends_with(" kB")),
                "meminfo layout: {:?}",
                m0.lines().next()
            );
            let f = tmpfs::memfd_create("count", 0).map_err(e)?;
            write_all(&f, &pattern(4 << 20, 8))?;
            let m1 = read_text("/proc/meminfo")?;
            let v1 = read_text("/proc/vmstat")?;
            let d = |t0: &str, t1: &str, k| {
                field(t1, k).unwrap_or(0) as i64 - field(t0, k).unwrap_or(0) as i64
            };
            ensure!(
                d(&m0, &m1, "Shmem") == 4096,
                "Shmem grew by {} kB",
                d(&m0, &m1, "Shmem")
            );
            ensure!(
                d(&m0, &m1, "ShmemHugePages") == 4096,
                "ShmemHugePages grew by {} kB",
                d(&m0, &m1, "ShmemHugePages")
            );
            ensure!(
                d(&v0, &v1, "folio_alloc_order_9 ") == 2,
                "folio_alloc_order_9 +{}",
                d(&v0, &v1, "folio_alloc_order_9 ")
            );
            ensure!(
                d(&v0, &v1, "thp_file_alloc ") == 2,
                "thp_file_alloc +{}",
                d(&v0, &v1, "thp_file_alloc ")
            );
            ensure!(
                d(&m0, &m1, "MemFree") <= -4096,
                "MemFree fell by {} kB",
                -d(&m0, &m1, "MemFree")
            );
            drop(f);
            let m2 = read_text("/proc/meminfo")?;
            ensure!(d(&m0, &m2, "Shmem") == 0, "Shmem not back after close");
            Ok(())
        },
    )
}

/// The initramfs was unpacked into the root: `/etc/motd` matches
/// `rootfs/etc/motd` and `/etc/issue` is a symlink to it.
fn initramfs_unpacked() -> TestResult {
    let motd = include_bytes!("../../../rootfs/etc/motd");
    let f = open("/etc/motd", O_RDONLY)?;
    ensure!(
        read_back(&f, 0, 4096)? == motd,
        "/etc/motd differs from rootfs/etc/motd"
    );
    let issue = open("/etc/issue", O_RDONLY)?;
    ensure!(
        issue.fstat().st_ino == f.fstat().st_ino,
        "/etc/issue is not a symlink to motd"
    );
    Ok(())
}

/// Threads on every CPU create, write, read, truncate, punch and delete
/// their own files, with checks at every step; no frame may leak.
fn stress() -> TestResult {
    let before = frames_in_use();
    vfs::mkdir(&root(), "/stress", 0o755).map_err(e)?;
    let n = crate::task::nr_cpus_online() * 2;
    let failures = Arc::new(crate::sync::SpinLock::new(Vec::<String>::new()));
    let threads: Vec<_> = (0..n)
        .map(|t| {
            let failures = failures.clone();
            crate::task::spawn(move || {
                if let Err(why) = stress_worker(t) {
                    failures.lock().push(format!("thread {}: {}", t, why));
                }
            })
        })
        .collect();
    threads.iter().for_each(|t| t.join());
    drop(threads);
    vfs::rmdir(&root(), "/stress").map_err(e)?;
    if let Some(first) = failures.lock().first() {
        return Err(first.clone());
    }
    crate::task::msleep(30);
    let after = frames_in_use();
    ensure!(after == before, "frames in use {} -> {}", before, after);
    Ok(())
}

/// One `stress` thread: 12 files of random length at random offsets, each
/// written, read back, truncated, hole-punched, read through a second open
/// file, and unlinked.
fn stress_worker(t: usize) -> TestResult {
    let mut seed = 0x9e37_79b9u32 ^ (t as u32 * 7919);
    let mut rand = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed as usize % n
    };
    for i in 0..12 {
        let path = format!("/stress/t{}-{}", t, i);
        let f = open(&path, O_CREAT | O_EXCL | O_RDWR)?;
        let len = 1 + rand(600_000);
        let data = pattern(len, (t * 100 + i) as u32);
        let offset = rand(3) as u64 * 1_000_003;
        ensure!(f.pwrite(&data, offset) == Ok(len), "short pwrite");
        ensure!(read_back(&f, offset, len)? == data, "{}: readback", path);
        let cut = rand(len) as u64;
        f.ftruncate((offset + cut) as i64).map_err(e)?;
        ensure!(
            read_back(&f, offset, len)? == data[..cut as usize],
            "{}: after truncate",
            path
        );
        if cut > 8192 {
            f.fallocate(3, (offset + 4096) as i64, 4096).map_err(e)?;
            let back = read_back(&f, offset + 4096, 4096)?;
            ensure!(
                back.iter().all(|&x| x == 0),
                "{}: punched range not zero",
                path
            );
        }
        let other = open(&path, O_RDONLY)?;
        ensure!(
            read_back(&other, offset, 100)? == data[..100.min(cut as usize)],
            "{}: second open",
            path
        );
        vfs::unlink(&root(), &path).map_err(e)?;
    }
    Ok(())
}
