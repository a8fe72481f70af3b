//! tmpfs: files that live only in the page cache (Linux: `mm/shmem.c`).
//! A mount (`TmpfsSb`, Linux's `shmem_sb_info`) carries its `huge=` option
//! and `size=` limit; the system-wide huge-page knobs are
//! `mm::huge_memory`'s. The kernel's internal mount holds memfd files.

mod file;
pub mod huge;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use spin::Once;

pub use file::{ShmemFile, F_SEAL_ANY_WRITE, F_SEAL_EXEC};
use huge::{
    allowable_orders, exec_folio_order, suitable_orders, FallbackOrders, ShmemAccess, ShmemMount,
};

use super::vfs::{self, File, Inode, InodeKind, O_RDWR, S_IFREG};
use crate::errno::{Errno, KResult};
use crate::mm::frame;
use crate::mm::huge_memory::knobs::{HugeKnob, MountHuge};
use crate::mm::huge_memory::order::{MIN_LARGE_ORDER, PMD_ORDER};
use crate::mm::huge_memory::{huge_settings, update_huge_settings};
pub use uapi::mman::{MFD_ALLOW_SEALING, MFD_CLOEXEC, MFD_EXEC, MFD_HUGETLB, MFD_NOEXEC_SEAL};

/// One tmpfs mount.
pub struct TmpfsSb {
    /// The anonymous device number stat reports for its files, one per
    /// mount (`vfs::anon_dev`).
    pub dev: u64,
    /// The mount's `huge=` option, or `Internal` for the kernel's own mount
    /// (Linux: `shmem_sb_info.huge`).
    huge: ShmemMount,
    /// `size=` in pages.
    max_pages: u64,
    /// Pages its files cache now, charged against `max_pages` (Linux:
    /// `shmem_sb_info.used_blocks`).
    used_pages: AtomicU64,
    /// `nr_inodes=`: how many inodes it may hold; None for no limit (the
    /// kernel's internal mount, or `nr_inodes=0`), as each is kernel
    /// memory a user could otherwise make without end (Linux:
    /// `shmem_sb_info.max_inodes`).
    max_inodes: Option<u64>,
    /// Inodes on it now, its root among them; each gives its count back
    /// when it is freed (Linux: the `free_ispace` it takes).
    used_inodes: AtomicU64,
    /// Bytes its files' extended attributes take (`vfs::xattr`), charged
    /// with the inodes against `nr_inodes=`'s inode space.
    xattr_space: AtomicU64,
}

/// Inode space one inode takes (Linux: `BOGO_INODE_SIZE`): a mount's
/// space is `nr_inodes=` of them.
const BOGO_INODE_SIZE: u64 = 1024;

impl TmpfsSb {
    /// A mount with `huge` and a `size=` of `max_pages` pages, with a device
    /// number of its own (Linux: the `shmem_sb_info` half of
    /// `shmem_fill_super`).
    pub fn new(huge: ShmemMount, max_pages: u64, max_inodes: Option<u64>) -> Arc<TmpfsSb> {
        Arc::new(TmpfsSb {
            dev: vfs::anon_dev(),
            huge,
            max_pages,
            used_pages: AtomicU64::new(0),
            max_inodes,
            used_inodes: AtomicU64::new(0),
            xattr_space: AtomicU64::new(0),
        })
    }

    /// May one more inode be made here? ENOSPC once `nr_inodes=` are
    /// (Linux: `shmem_reserve_inode`).
    pub fn may_add_inode(&self) -> KResult<()> {
        match self.max_inodes {
            Some(max) if self.used_inodes.load(Ordering::Relaxed) >= max => Err(Errno::ENOSPC),
            _ => Ok(()),
        }
    }

    /// Counts an inode made here (from `Inode::set_sb`).
    pub fn inode_added(&self) {
        self.used_inodes.fetch_add(1, Ordering::Relaxed);
    }

    /// Gives back an inode's count when it is freed (Linux:
    /// `shmem_free_inode`).
    pub fn inode_freed(&self) {
        self.used_inodes.fetch_sub(1, Ordering::Relaxed);
    }

    /// Takes `bytes` of inode space for an extended attribute; ENOSPC when
    /// the inodes and attributes already there leave too little (Linux:
    /// `shmem_xattr_handler_set`'s `free_ispace` check).
    pub fn charge_ispace(&self, bytes: u64) -> KResult<()> {
        let Some(max) = self.max_inodes else {
            self.xattr_space.fetch_add(bytes, Ordering::Relaxed);
            return Ok(());
        };
        let inodes = self.used_inodes.load(Ordering::Relaxed) * BOGO_INODE_SIZE;
        let fits = |used: u64| inodes + used + bytes <= max * BOGO_INODE_SIZE;
        self.xattr_space
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                fits(used).then_some(used + bytes)
            })
            .map(|_| ())
            .map_err(|_| Errno::ENOSPC)
    }

    /// Gives back what [`Self::charge_ispace`] took.
    pub fn uncharge_ispace(&self, bytes: u64) {
        self.xattr_space.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// statfs(2)'s inode counts: (total, free); for no limit, as many as
    /// the default (Linux reports what `nr_inodes=0` leaves).
    pub fn statfs_inodes(&self) -> (u64, u64) {
        let max = self.max_inodes.unwrap_or_else(default_max_pages);
        (
            max,
            max.saturating_sub(self.used_inodes.load(Ordering::Relaxed)),
        )
    }

    /// A new, empty regular file on this mount (not yet in any directory).
    pub fn new_file(self: &Arc<Self>, mode: u32) -> Arc<Inode> {
        let inode = Inode::new(
            S_IFREG | (mode & 0o7777),
            InodeKind::File(ShmemFile::new(self.clone())),
        );
        inode.set_sb(self);
        inode
    }

    /// statfs(2) of this mount: (total, free) pages of its `size=` budget
    /// (Linux: `shmem_statfs`).
    pub fn statfs_pages(&self) -> (u64, u64) {
        let used = self.used_pages.load(Ordering::Relaxed);
        (self.max_pages, self.max_pages.saturating_sub(used))
    }

    /// Orders to try for a folio holding page `index` that a write up to
    /// byte `write_end` needs, highest first.
    fn write_orders(
        &self,
        i_size: u64,
        index: u64,
        write_end: u64,
        range_is_empty: impl Fn(u64, u64) -> bool,
    ) -> FallbackOrders {
        let settings = huge_settings();
        let access = ShmemAccess::Write { end: write_end };
        let mask = allowable_orders(&settings, self.huge, access, i_size, index);
        suitable_orders(mask, index, range_is_empty)
    }

    /// The folio order for file text faulted through an executable
    /// mapping, if the knobs want one (`huge::exec_folio_order`).
    fn exec_order(&self) -> Option<u8> {
        exec_folio_order(&huge_settings(), self.huge)
    }

    /// Orders to try for a folio holding page `index` that a fault through
    /// a mapping needs, highest first: what the knobs and the mount allow a
    /// fault (`vma_hugepage`: the VMA has `MADV_HUGEPAGE`), kept where
    /// `vma_fits` says the VMA can map the folio whole (Linux:
    /// `shmem_allowable_huge_orders`, then `shmem_suitable_orders`).
    fn fault_orders(
        &self,
        i_size: u64,
        index: u64,
        vma_hugepage: bool,
        vma_fits: impl Fn(u8) -> bool,
        range_is_empty: impl Fn(u64, u64) -> bool,
    ) -> FallbackOrders {
        let settings = huge_settings();
        let access = ShmemAccess::Fault { vma_hugepage };
        let mask = allowable_orders(&settings, self.huge, access, i_size, index).filter(vma_fits);
        suitable_orders(mask, index, range_is_empty)
    }

    /// Takes `nr` pages of the mount's `size=` budget (Linux:
    /// `shmem_inode_acct_blocks`); false when it would be exceeded.
    fn charge(&self, nr: u64) -> bool {
        self.used_pages
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                (used + nr <= self.max_pages).then_some(used + nr)
            })
            .is_ok()
    }

    /// Gives back `nr` pages of the `size=` budget, for folios that left the
    /// cache (Linux: `shmem_inode_unacct_blocks`).
    fn uncharge(&self, nr: u64) {
        self.used_pages.fetch_sub(nr, Ordering::AcqRel);
    }
}

/// Default `size=`: half of RAM, as Linux's tmpfs.
fn default_max_pages() -> u64 {
    frame::total_pages() as u64 / 2
}

/// What a tmpfs mount's options say.
pub struct TmpfsOptions {
    /// `huge=`.
    pub huge: MountHuge,
    /// `size=`, in pages.
    pub max_pages: u64,
    /// `nr_inodes=`; None for no limit.
    pub max_inodes: Option<u64>,
}

/// Parses tmpfs mount options: `huge=never|always|within_size|advise`,
/// `size=N[k|m|g]` and `nr_inodes=N[k|m|g]` (0: no limit), each by
/// default half of RAM in pages (Linux: `shmem_parse_one`,
/// `shmem_default_max_inodes`).
pub fn parse_options(options: &str) -> KResult<TmpfsOptions> {
    let mut o = TmpfsOptions {
        huge: MountHuge::Never,
        max_pages: default_max_pages(),
        max_inodes: Some(default_max_pages()),
    };
    for opt in options.split(',').filter(|o| !o.is_empty()) {
        match opt.split_once('=') {
            Some(("huge", v)) => o.huge = MountHuge::from_name(v).map_err(|_| Errno::EINVAL)?,
            Some(("size", v)) => o.max_pages = parse_size(v)?.div_ceil(4096),
            Some(("nr_inodes", v)) => o.max_inodes = Some(parse_size(v)?).filter(|&n| n != 0),
            _ => return Err(Errno::EINVAL),
        }
    }
    Ok(o)
}

/// A `size=` value in bytes: a decimal number with an optional `k`, `m` or
/// `g` suffix, binary multiples (Linux: `memparse`); EINVAL if it does not
/// fit in 64 bits.
fn parse_size(v: &str) -> KResult<u64> {
    let (digits, shift) = match v.as_bytes().last() {
        Some(b'k' | b'K') => (&v[..v.len() - 1], 10),
        Some(b'm' | b'M') => (&v[..v.len() - 1], 20),
        Some(b'g' | b'G') => (&v[..v.len() - 1], 30),
        _ => (v, 0),
    };
    let n: u64 = digits.parse().map_err(|_| Errno::EINVAL)?;
    n.checked_mul(1 << shift).ok_or(Errno::EINVAL)
}

/// A new tmpfs root directory for `options` (Linux: `shmem_fill_super`).
pub fn new_mount(options: &str) -> KResult<Arc<Inode>> {
    let o = parse_options(options)?;
    Ok(Inode::new_dir(
        0o1777,
        Some(TmpfsSb::new(
            ShmemMount::Mounted(o.huge),
            o.max_pages,
            o.max_inodes,
        )),
    ))
}

/// Mounts a new tmpfs at `path` (a new directory there).
pub fn mount(start: &Arc<Inode>, path: &str, options: &str) -> KResult<()> {
    let root = new_mount(options)?;
    let (dir, name) = vfs::lookup_parent(start, path)?;
    dir.dir()?.link(&dir, name, root)
}

/// The kernel's internal mount (Linux: `shm_mnt`), made on first use.
static INTERNAL: Once<Arc<TmpfsSb>> = Once::new();

/// The internal mount, which holds memfd files and the objects behind shared
/// anonymous mappings, the vDSO and `[vvar]`; its `size=` is half of RAM.
fn internal_mount() -> &'static Arc<TmpfsSb> {
    INTERNAL.call_once(|| TmpfsSb::new(ShmemMount::Internal, default_max_pages(), None))
}

/// Longest memfd name, in bytes: `NAME_MAX` less the `memfd:` prefix Linux
/// gives it.
pub const MFD_NAME_MAX: usize = 249;

/// The bits of MFD_HUGETLB's page size log2 (Linux: `MFD_HUGE_MASK <<
/// MFD_HUGE_SHIFT`).
const MFD_HUGE_SIZE: u32 = 0x3f << 26;

/// `vm.memfd_noexec` (Linux: the pid namespace's `memfd_noexec_scope`; one
/// for the whole system here): 0, memfd_create without MFD_EXEC or
/// MFD_NOEXEC_SEAL means MFD_EXEC; 1, it means MFD_NOEXEC_SEAL; 2, only
/// MFD_NOEXEC_SEAL is allowed.
pub static MEMFD_NOEXEC_SCOPE: AtomicU32 = AtomicU32::new(0);
/// `vm.memfd_noexec`'s value that makes MFD_NOEXEC_SEAL the default.
const MEMFD_NOEXEC_SCOPE_NOEXEC_SEAL: u32 = 1;
/// `vm.memfd_noexec`'s value that makes MFD_NOEXEC_SEAL compulsory.
pub const MEMFD_NOEXEC_SCOPE_NOEXEC_ENFORCED: u32 = 2;

/// memfd_create(2)'s flags checked, with MFD_EXEC or MFD_NOEXEC_SEAL
/// chosen by `vm.memfd_noexec` where neither is given (Linux: the checks
/// of `memfd_create` and `check_sysctl_memfd_noexec`): EINVAL for unknown
/// flags or both, EACCES without MFD_NOEXEC_SEAL where it is compulsory.
/// A page size may follow MFD_HUGETLB only.
pub fn memfd_check_flags(mut flags: u32) -> KResult<u32> {
    let mut known = MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL | MFD_EXEC | MFD_HUGETLB;
    if flags & MFD_HUGETLB != 0 {
        known |= MFD_HUGE_SIZE;
    }
    if flags & !known != 0 || flags & (MFD_NOEXEC_SEAL | MFD_EXEC) == MFD_NOEXEC_SEAL | MFD_EXEC {
        return Err(Errno::EINVAL);
    }
    let scope = MEMFD_NOEXEC_SCOPE.load(Ordering::Relaxed);
    if flags & (MFD_EXEC | MFD_NOEXEC_SEAL) == 0 {
        flags |= if scope >= MEMFD_NOEXEC_SCOPE_NOEXEC_SEAL {
            MFD_NOEXEC_SEAL
        } else {
            MFD_EXEC
        };
    }
    if flags & MFD_NOEXEC_SEAL == 0 && scope >= MEMFD_NOEXEC_SCOPE_NOEXEC_ENFORCED {
        return Err(Errno::EACCES);
    }
    Ok(flags)
}

/// An anonymous tmpfs file on the internal mount, open read-write (Linux:
/// `memfd_create`, `shmem_kernel_file_setup`); `name` labels it in /proc
/// (`/NAME (deleted)`). Its
/// faults follow the per-size huge-page knobs. MFD_ALLOW_SEALING leaves it
/// unsealed; MFD_NOEXEC_SEAL also drops the execute bits and seals them
/// (F_SEAL_EXEC); otherwise it starts sealed with F_SEAL_SEAL. The kernel's
/// own files (shared anonymous memory, the vDSO) come from here too, with
/// no flags, so `vm.memfd_noexec` is the system call's to apply
/// (`memfd_check_flags`).
pub fn memfd_create(name: &str, flags: u32) -> KResult<Arc<File>> {
    let noexec = flags & MFD_NOEXEC_SEAL != 0;
    let mode = if noexec { 0o666 } else { 0o777 };
    let inode = internal_mount().new_file(mode);
    inode.init_owner(None);
    inode.set_anon_name(alloc::string::String::from(name));
    if let InodeKind::File(f) = &inode.kind {
        if noexec {
            f.allow_sealing();
            f.add_seals(file::F_SEAL_EXEC, mode, || false)?;
        } else if flags & MFD_ALLOW_SEALING != 0 {
            f.allow_sealing();
        }
    }
    File::new(inode, O_RDWR)
}

/// Boot-time knobs (Linux 6.13+): `transparent_hugepage_shmem=<value>` for
/// the top-level knob and `thp_shmem=<size>[KMG][-<size>[KMG]],...:<value>;...`
/// for the per-size ones, e.g. `thp_shmem=64K:always;2M:inherit`. A bad
/// value is reported and ignored.
pub fn apply_cmdline(cmdline: crate::cmdline::Cmdline) {
    if let Some(v) = cmdline.get("transparent_hugepage_shmem") {
        if update_huge_settings(|s| s.store_shmem_enabled(v)).is_err() {
            println!("tmpfs: ignoring transparent_hugepage_shmem={}", v);
        }
    }
    if let Some(spec) = cmdline.get("thp_shmem") {
        if apply_thp_shmem(spec).is_err() {
            println!("tmpfs: ignoring (part of) thp_shmem={}", spec);
        }
    }
}

/// Applies `thp_shmem=`: each `;`-separated part sets the per-size knobs of
/// the sizes in its `,`-separated list of sizes and `lo-hi` ranges to the
/// policy after its `:`. EINVAL at a bad part, or at a size no knob matches;
/// the parts before it stay applied.
fn apply_thp_shmem(spec: &str) -> KResult<()> {
    for part in spec.split(';') {
        let (sizes, policy) = part.split_once(':').ok_or(Errno::EINVAL)?;
        for range in sizes.split(',') {
            let (lo, hi) = range.split_once('-').unwrap_or((range, range));
            let (lo, hi) = (parse_size(lo)?, parse_size(hi)?);
            let mut matched = false;
            for order in MIN_LARGE_ORDER..=PMD_ORDER {
                let size = 4096u64 << order;
                if (lo..=hi).contains(&size) {
                    update_huge_settings(|s| s.store_per_size(order, policy))
                        .map_err(|_| Errno::EINVAL)?;
                    matched = true;
                }
            }
            if !matched {
                return Err(Errno::EINVAL);
            }
        }
    }
    Ok(())
}
