//! System V shared memory (Linux: `ipc/shm.c`, `ipc/util.c`): shmget
//! makes or finds a segment by key, shmat maps it shared, shmdt unmaps it,
//! shmctl reports, changes or removes it. A segment is a file on the
//! internal tmpfs, as a shared anonymous mapping is, so its pages, and
//! the futexes in them, are named by that file.
//!
//! Simplified: ids are handed out in order (Linux mixes a slot index and a
//! sequence number); a segment counts as attached as long as a mapping
//! holds its file (Linux counts in `shm_open` and `shm_close`), so one
//! removed while attached goes with its last mapping; shmctl knows
//! IPC_STAT, IPC_SET and IPC_RMID, not the IPC_INFO, SHM_INFO, SHM_STAT
//! and SHM_LOCK families. No huge pages are reserved for SHM_HUGETLB
//! (faultline has no hugetlbfs), which gets Linux's ENOMEM for that case.
//! Every process runs as root, which passes every permission check.

use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};
use core::sync::atomic::Ordering;

use crate::errno::{Errno, KResult};
use crate::fs::procfs::sysctl::{SHM_CTLMAX, SHM_CTLMNI};
use crate::fs::tmpfs;
use crate::fs::vfs::{File, Inode, O_RDONLY, O_RDWR};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::mm_struct::Mm;
use crate::mm::mmap::{self, MAP_FIXED, MAP_FIXED_NOREPLACE, MAP_SHARED, PROT_EXEC, PROT_READ};
use crate::sync::SpinLock;

/// The key that always makes a new segment, and that a removed one gets.
pub const IPC_PRIVATE: i32 = 0;
/// shmget: make the segment if the key has none.
pub const IPC_CREAT: u32 = 0o1000;
/// shmget with IPC_CREAT: fail (EEXIST) if the key has one.
pub const IPC_EXCL: u32 = 0o2000;
/// shmctl: remove the segment once nobody has it attached.
pub const IPC_RMID: i32 = 0;
/// shmctl: change the owner and mode.
pub const IPC_SET: i32 = 1;
/// shmctl: report the segment (`struct shmid64_ds`).
pub const IPC_STAT: i32 = 2;
/// shmctl's flag for the 64-bit structures, which are the only ones on
/// arm64 (Linux: `ipc_parse_version` strips it).
pub const IPC_64: i32 = 0x100;
/// shmat: map read-only.
pub const SHM_RDONLY: u32 = 0o10000;
/// shmat: round the address down to SHMLBA.
pub const SHM_RND: u32 = 0o20000;
/// shmat: replace whatever is mapped at the address.
pub const SHM_REMAP: u32 = 0o40000;
/// shmat: map executable too.
pub const SHM_EXEC: u32 = 0o100000;
/// In a segment's mode: removed, freed at the last detach.
const SHM_DEST: u32 = 0o1000;
/// shmget: back the segment with huge pages, of the size whose log2 is
/// in bits 26-31 (0: the default size).
const SHM_HUGETLB: u32 = 0o4000;
/// Where SHM_HUGETLB's page size log2 is.
const SHM_HUGE_SHIFT: u32 = 26;
/// The huge page sizes arm64 with 4K pages has, as log2: 64K, 2M, 32M, 1G.
const HUGE_PAGE_SHIFTS: [u32; 4] = [16, 21, 25, 30];
/// The permission bits of a mode.
const S_IRWXUGO: u32 = 0o777;
/// Where an attach may start: any page (Linux: arm64's `SHMLBA`).
const SHMLBA: usize = PAGE_SIZE;

/// One segment (Linux: `struct shmid_kernel` with its `kern_ipc_perm`).
struct Segment {
    /// The key it was made with; IPC_PRIVATE once removed.
    key: i32,
    /// The tmpfs file holding its pages (Linux: `shm_file`), kept by its
    /// mappings and, until IPC_RMID, by `kept`.
    inode: Weak<Inode>,
    /// The segment's own hold on its file, given up at IPC_RMID.
    kept: Option<Arc<Inode>>,
    /// Its size in bytes, as asked for.
    size: usize,
    /// Permission bits, and SHM_DEST once removed.
    mode: u32,
    /// Owner and group, and those of its creator.
    uid: u32,
    /// The owner's group.
    gid: u32,
    /// The PIDs of the creator and of the last to attach or detach.
    cpid: u32,
    /// The last to attach or detach it.
    lpid: u32,
    /// Last attach, detach and change, in seconds since the epoch.
    atime: i64,
    /// Last detach.
    dtime: i64,
    /// Last change (made, IPC_SET).
    ctime: i64,
}

impl Segment {
    /// How many mappings hold it (Linux: `shm_nattch`): every reference to
    /// its file but its own.
    fn nattch(&self) -> usize {
        self.inode.strong_count() - usize::from(self.kept.is_some())
    }

    /// Is this its file?
    fn is(&self, inode: &Arc<Inode>) -> bool {
        core::ptr::eq(self.inode.as_ptr(), Arc::as_ptr(inode))
    }
}

/// The segments by id, and the next id to hand out (Linux: the IPC
/// namespace's `shm_ids`).
struct Ids {
    /// Live segments, by id.
    segments: BTreeMap<i32, Segment>,
    /// The id the next segment gets.
    next: i32,
}

/// Every segment of the system.
static IDS: SpinLock<Ids> = SpinLock::new(Ids {
    segments: BTreeMap::new(),
    next: 0,
});

/// Seconds since the epoch, for the segment times.
fn now() -> i64 {
    crate::task::clock::realtime_ns() / 1_000_000_000
}

/// The caller's process id.
fn my_pid() -> u32 {
    crate::task::current_process().map_or(0, |p| p.pid)
}

/// Forgets removed segments whose last mapping has gone, and with it
/// their file and pages.
fn reap(ids: &mut Ids) {
    ids.segments.retain(|_, s| s.inode.strong_count() > 0);
}

/// shmget(2): the id of the segment `key` names, made with `size` bytes
/// and the permission bits of `flags` if IPC_PRIVATE or IPC_CREAT asks
/// (Linux: `ksys_shmget`, `newseg`). ENOENT without IPC_CREAT for a key
/// with none, EEXIST under IPC_CREAT | IPC_EXCL for one with one, EINVAL
/// for a size out of bounds or larger than the one found, ENOSPC past
/// `kernel.shmmni` segments, ENOMEM for SHM_HUGETLB.
pub fn shmget(key: i32, size: usize, flags: u32) -> KResult<i32> {
    let mut ids = IDS.lock();
    reap(&mut ids);
    if key != IPC_PRIVATE {
        if let Some((&id, s)) = ids.segments.iter().find(|(_, s)| s.key == key) {
            if flags & (IPC_CREAT | IPC_EXCL) == IPC_CREAT | IPC_EXCL {
                return Err(Errno::EEXIST);
            }
            if s.size < size {
                return Err(Errno::EINVAL);
            }
            return Ok(id);
        }
        if flags & IPC_CREAT == 0 {
            return Err(Errno::ENOENT);
        }
    }
    if size == 0 || size as u64 > SHM_CTLMAX.load(Ordering::Relaxed) {
        return Err(Errno::EINVAL);
    }
    if flags & SHM_HUGETLB != 0 {
        // Linux: `hstate_sizelog` knows the size or EINVAL, then
        // `hugetlb_file_setup` finds no huge page free.
        let shift = flags >> SHM_HUGE_SHIFT;
        if shift != 0 && !HUGE_PAGE_SHIFTS.contains(&shift) {
            return Err(Errno::EINVAL);
        }
        return Err(Errno::ENOMEM);
    }
    if ids.segments.len() >= SHM_CTLMNI.load(Ordering::Relaxed) as usize {
        return Err(Errno::ENOSPC);
    }
    let file = tmpfs::memfd_create("SYSV", 0)?;
    file.ftruncate(size as i64)?;
    let inode = file.inode.clone();
    let id = ids.next;
    ids.next = ids.next.checked_add(1).unwrap_or(0);
    let (pid, time) = (my_pid(), now());
    ids.segments.insert(
        id,
        Segment {
            key,
            inode: Arc::downgrade(&inode),
            kept: Some(inode),
            size,
            mode: flags & S_IRWXUGO,
            uid: 0,
            gid: 0,
            cpid: pid,
            lpid: 0,
            atime: 0,
            dtime: 0,
            ctime: time,
        },
    );
    Ok(id)
}

/// shmat(2): maps segment `id` shared into `mm`, at `addr` if not 0
/// (rounded down to SHMLBA under SHM_RND, else EINVAL if not on a page;
/// EINVAL if something is mapped there, unless SHM_REMAP); returns where
/// (Linux: `do_shmat`). Read-only under SHM_RDONLY, executable too under
/// SHM_EXEC. EINVAL for an id with no segment.
pub fn shmat(mm: &Arc<Mm>, id: i32, addr: usize, flags: u32) -> KResult<usize> {
    if id < 0 {
        return Err(Errno::EINVAL);
    }
    let mut addr = addr;
    let mut map_flags = MAP_SHARED;
    if addr != 0 {
        if !addr.is_multiple_of(SHMLBA) {
            if flags & SHM_RND == 0 {
                return Err(Errno::EINVAL);
            }
            addr &= !(SHMLBA - 1);
            if addr == 0 && flags & SHM_REMAP != 0 {
                return Err(Errno::EINVAL);
            }
        }
        map_flags |= if flags & SHM_REMAP != 0 {
            MAP_FIXED
        } else {
            MAP_FIXED_NOREPLACE
        };
    } else if flags & SHM_REMAP != 0 {
        return Err(Errno::EINVAL);
    }
    let (mut prot, access) = if flags & SHM_RDONLY != 0 {
        (PROT_READ, O_RDONLY)
    } else {
        (PROT_READ | mmap::PROT_WRITE, O_RDWR)
    };
    if flags & SHM_EXEC != 0 {
        prot |= PROT_EXEC;
    }
    let (inode, size) = {
        let mut ids = IDS.lock();
        let s = ids.segments.get_mut(&id).ok_or(Errno::EINVAL)?;
        let inode = s.inode.upgrade().ok_or(Errno::EINVAL)?;
        s.atime = now();
        s.lpid = my_pid();
        (inode, s.size)
    };
    let file = File::new(inode, access)?;
    mmap::mmap(mm, addr, size, prot, map_flags, Some(file), 0).map_err(|e| match e {
        Errno::EEXIST => Errno::EINVAL,
        e => e,
    })
}

/// shmdt(2): unmaps the segment attached at `addr` in `mm`: every mapping
/// of its file within its size from there (Linux: `ksys_shmdt`). EINVAL
/// if `addr` is not on a page or no segment is attached there.
pub fn shmdt(mm: &Arc<Mm>, addr: usize) -> KResult<()> {
    if !addr.is_multiple_of(PAGE_SIZE) {
        return Err(Errno::EINVAL);
    }
    // The segment whose mapping starts its file at `addr`.
    let is_segment = |inode: &Arc<Inode>| {
        let ids = IDS.lock();
        ids.segments
            .iter()
            .find(|(_, s)| s.is(inode))
            .map(|(&id, s)| (id, s.size))
    };
    let found = {
        let map = mm.mmap_lock_readonly();
        let found = map
            .vmas
            .range(addr, usize::MAX)
            .find_map(|(start, _, vma)| {
                let inode = vma.file.as_ref()?;
                let (id, size) = is_segment(inode)?;
                (((start - addr) / PAGE_SIZE) as u64 == vma.pgoff)
                    .then(|| (id, size, inode.clone()))
            });
        found
    };
    let (id, size, inode) = found.ok_or(Errno::EINVAL)?;
    let end = addr.saturating_add(size.next_multiple_of(PAGE_SIZE));
    let ranges: alloc::vec::Vec<(usize, usize)> = {
        let map = mm.mmap_lock_readonly();
        let ranges = map
            .vmas
            .range(addr, end)
            .filter(|(s, e, vma)| {
                *e <= end
                    && vma.file.as_ref().is_some_and(|f| Arc::ptr_eq(f, &inode))
                    && ((s - addr) / PAGE_SIZE) as u64 == vma.pgoff
            })
            .map(|(s, e, _)| (s, e))
            .collect();
        ranges
    };
    drop(inode);
    for (s, e) in ranges {
        mmap::munmap(mm, s, e - s)?;
    }
    let mut ids = IDS.lock();
    if let Some(s) = ids.segments.get_mut(&id) {
        s.dtime = now();
        s.lpid = my_pid();
    }
    reap(&mut ids);
    Ok(())
}

/// `struct shmid64_ds` as arm64 lays it out: `struct ipc64_perm` (key,
/// uid, gid, cuid, cgid, mode, seq, padding, two unused longs), then
/// size, the three times, the creator's and last PIDs, the attach count
/// and two unused longs: 112 bytes.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct ShmidDs {
    /// The key.
    pub key: i32,
    /// Owner.
    pub uid: u32,
    /// Owner's group.
    pub gid: u32,
    /// Creator.
    pub cuid: u32,
    /// Creator's group.
    pub cgid: u32,
    /// Permissions, SHM_DEST.
    pub mode: u32,
    /// The slot's sequence number.
    pub seq: u16,
    /// Padding (`__pad2` and the alignment of `__unused1`).
    pub pad: [u16; 3],
    /// Unused.
    pub unused1: [u64; 2],
    /// Size in bytes.
    pub segsz: u64,
    /// Last attach.
    pub atime: i64,
    /// Last detach.
    pub dtime: i64,
    /// Last change.
    pub ctime: i64,
    /// Creator's PID.
    pub cpid: i32,
    /// Last attacher's or detacher's PID.
    pub lpid: i32,
    /// How many attaches.
    pub nattch: u64,
    /// Unused.
    pub unused2: [u64; 2],
}

// SAFETY: repr(C) integers with the padding spelled out as fields (112
// bytes, no gaps), so every bit pattern is valid and none is hidden.
unsafe impl crate::mm::uaccess::Pod for ShmidDs {}

/// What shmctl asks of segment `id`.
pub enum Ctl {
    /// IPC_STAT.
    Stat,
    /// IPC_SET from this structure: owner, group and permission bits.
    Set(ShmidDs),
    /// IPC_RMID.
    Rmid,
}

/// shmctl(2) on segment `id` (Linux: `ksys_shmctl`): IPC_STAT's report,
/// IPC_SET's new owner and mode, IPC_RMID's removal, which frees it at
/// once if nobody has it attached and otherwise hides its key and marks
/// it SHM_DEST. EINVAL for an id with no segment.
pub fn shmctl(id: i32, ctl: Ctl) -> KResult<ShmidDs> {
    let mut ids = IDS.lock();
    let s = ids.segments.get_mut(&id).ok_or(Errno::EINVAL)?;
    match ctl {
        Ctl::Stat => {}
        Ctl::Set(new) => {
            s.uid = new.uid;
            s.gid = new.gid;
            s.mode = (s.mode & !S_IRWXUGO) | (new.mode & S_IRWXUGO);
            s.ctime = now();
        }
        Ctl::Rmid => {
            s.mode |= SHM_DEST;
            s.key = IPC_PRIVATE;
            s.kept = None;
        }
    }
    let ds = ShmidDs {
        key: s.key,
        uid: s.uid,
        gid: s.gid,
        mode: s.mode,
        segsz: s.size as u64,
        atime: s.atime,
        dtime: s.dtime,
        ctime: s.ctime,
        cpid: s.cpid as i32,
        lpid: s.lpid as i32,
        nattch: s.nattch() as u64,
        ..ShmidDs::default()
    };
    reap(&mut ids);
    Ok(ds)
}
