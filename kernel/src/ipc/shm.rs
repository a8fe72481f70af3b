//! System V shared memory (Linux: `ipc/shm.c`, `ipc/util.c`): shmget
//! makes or finds a segment by key, shmat maps it shared, shmdt unmaps it,
//! shmctl reports, changes or removes it. A segment is a file on the
//! internal tmpfs, as a shared anonymous mapping is, so its pages, and
//! the futexes in them, are named by that file.
//!
//! The file is named `SYSV%08x` after the key, as /proc/PID/maps shows
//! it, and lives on the internal mount, so `shmem_enabled` decides its
//! folio sizes; /proc/sysvipc/shm lists the segments.
//!
//! Simplified: ids are handed out in order (Linux mixes a slot index and a
//! sequence number); a segment counts as attached as long as a mapping
//! holds its file (Linux counts in `shm_open` and `shm_close`), so one
//! removed while attached goes with its last mapping; shmctl knows
//! IPC_STAT, IPC_SET, IPC_RMID, SHM_LOCK and SHM_UNLOCK, not the
//! IPC_INFO, SHM_INFO and SHM_STAT family; a locked segment's pages are
//! only counted against RLIMIT_MEMLOCK, as nothing is ever swapped. No
//! huge pages are reserved for SHM_HUGETLB (faultline has no hugetlbfs),
//! which gets Linux's ENOMEM for that case.

use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};
use core::sync::atomic::Ordering;

use crate::errno::{Errno, KResult};
use crate::fs::procfs::sysctl::{SHM_CTLMAX, SHM_CTLMNI};
use crate::fs::tmpfs;
use crate::fs::vfs::{File, Inode, InodeKind, O_RDONLY, O_RDWR};
use crate::mm::addr::PAGE_SIZE;
use crate::mm::mm_struct::Mm;
use crate::mm::mmap::{self, MAP_FIXED, MAP_FIXED_NOREPLACE, MAP_SHARED, PROT_EXEC, PROT_READ};
use crate::sync::SpinLock;
use crate::task::cred::{CAP_IPC_LOCK, CAP_IPC_OWNER, CAP_SYS_ADMIN};
use crate::task::{capable, current_cred};

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
/// In a segment's mode: locked by SHM_LOCK.
const SHM_LOCKED: u32 = 0o2000;
/// Read permission, for each of owner, group and other.
const S_IRUGO: u32 = 0o444;
/// Write permission, for each.
const S_IWUGO: u32 = 0o222;
/// Execute permission, for each.
const S_IXUGO: u32 = 0o111;
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
    /// Owner and group (IPC_SET changes them), and those of its creator.
    uid: u32,
    /// The owner's group.
    gid: u32,
    /// The creator's effective uid.
    cuid: u32,
    /// The creator's effective gid.
    cgid: u32,
    /// Whose RLIMIT_MEMLOCK an SHM_LOCK charged, while SHM_LOCKED.
    locked_by: u32,
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

    /// May the caller have `flag`'s access (rwx bits in any of the three
    /// places) to the segment (Linux: `ipcperms`)? The owner's or
    /// creator's bits for its effective uid, the group's for its groups,
    /// or CAP_IPC_OWNER. EACCES if not.
    fn ipcperms(&self, flag: u32) -> KResult<()> {
        let cred = current_cred();
        let requested = (flag >> 6) | (flag >> 3) | flag;
        let granted = if cred.euid == self.cuid || cred.euid == self.uid {
            self.mode >> 6
        } else if cred.in_group(self.cgid) || cred.in_group(self.gid) {
            self.mode >> 3
        } else {
            self.mode
        };
        if requested & !granted & 0o7 != 0 && !cred.capable(CAP_IPC_OWNER) {
            return Err(Errno::EACCES);
        }
        Ok(())
    }

    /// May the caller change or remove the segment (Linux:
    /// `ipcctl_obtain_check`)? Its owner or creator, or CAP_SYS_ADMIN.
    /// EPERM if not.
    fn may_change(&self) -> KResult<()> {
        let cred = current_cred();
        if cred.euid == self.uid || cred.euid == self.cuid || cred.capable(CAP_SYS_ADMIN) {
            Ok(())
        } else {
            Err(Errno::EPERM)
        }
    }

    /// Bytes it holds once rounded to pages, what SHM_LOCK charges.
    fn pages_bytes(&self) -> u64 {
        self.size.next_multiple_of(PAGE_SIZE) as u64
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
            s.ipcperms(flags & S_IRWXUGO)?;
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
    // Linux: `shmem_kernel_file_setup` names it after the key.
    let file = tmpfs::memfd_create(&alloc::format!("SYSV{:08x}", key as u32), 0)?;
    file.ftruncate(size as i64)?;
    let inode = file.inode.clone();
    let id = ids.next;
    ids.next = ids.next.checked_add(1).unwrap_or(0);
    let (pid, time) = (my_pid(), now());
    let cred = current_cred();
    ids.segments.insert(
        id,
        Segment {
            key,
            inode: Arc::downgrade(&inode),
            kept: Some(inode),
            size,
            mode: flags & S_IRWXUGO,
            uid: cred.euid,
            gid: cred.egid,
            cuid: cred.euid,
            cgid: cred.egid,
            locked_by: 0,
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
    let mut wanted = if flags & SHM_RDONLY != 0 {
        S_IRUGO
    } else {
        S_IRUGO | S_IWUGO
    };
    if flags & SHM_EXEC != 0 {
        prot |= PROT_EXEC;
        wanted |= S_IXUGO;
    }
    let (inode, size) = {
        let mut ids = IDS.lock();
        let s = ids.segments.get_mut(&id).ok_or(Errno::EINVAL)?;
        let inode = s.inode.upgrade().ok_or(Errno::EINVAL)?;
        s.ipcperms(wanted)?;
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

pub use uapi::shm::ShmidDs;

/// What shmctl asks of segment `id`.
pub enum Ctl {
    /// IPC_STAT.
    Stat,
    /// IPC_SET from this structure: owner, group and permission bits.
    Set(ShmidDs),
    /// IPC_RMID.
    Rmid,
    /// SHM_LOCK (true) or SHM_UNLOCK (false), with the caller's
    /// RLIMIT_MEMLOCK.
    Lock(bool, u64),
}

/// shmctl(2) on segment `id` (Linux: `ksys_shmctl`): IPC_STAT's report,
/// IPC_SET's new owner and mode, IPC_RMID's removal, which frees it at
/// once if nobody has it attached and otherwise hides its key and marks
/// it SHM_DEST. EINVAL for an id with no segment.
pub fn shmctl(id: i32, ctl: Ctl) -> KResult<ShmidDs> {
    let mut ids = IDS.lock();
    // What SHM_LOCK has charged each user, before this segment is borrowed.
    let charged = |ids: &Ids, uid: u32| -> u64 {
        ids.segments
            .values()
            .filter(|s| s.mode & SHM_LOCKED != 0 && s.locked_by == uid)
            .map(Segment::pages_bytes)
            .sum()
    };
    let euid = current_cred().euid;
    let already = charged(&ids, euid);
    let s = ids.segments.get_mut(&id).ok_or(Errno::EINVAL)?;
    match ctl {
        Ctl::Stat => s.ipcperms(S_IRUGO)?,
        Ctl::Lock(lock, limit) => {
            // Linux: `shmctl_do_lock`, then `user_shm_lock`'s ENOMEM.
            if !capable(CAP_IPC_LOCK) {
                if euid != s.uid && euid != s.cuid {
                    return Err(Errno::EPERM);
                }
                if lock && limit == 0 {
                    return Err(Errno::EPERM);
                }
            }
            if lock && s.mode & SHM_LOCKED == 0 {
                if !capable(CAP_IPC_LOCK) && already + s.pages_bytes() > limit {
                    return Err(Errno::ENOMEM);
                }
                s.mode |= SHM_LOCKED;
                s.locked_by = euid;
            } else if !lock {
                s.mode &= !SHM_LOCKED;
            }
        }
        Ctl::Set(new) => {
            s.may_change()?;
            s.uid = new.uid;
            s.gid = new.gid;
            s.mode = (s.mode & !S_IRWXUGO) | (new.mode & S_IRWXUGO);
            s.ctime = now();
        }
        Ctl::Rmid => {
            s.may_change()?;
            s.mode |= SHM_DEST;
            s.key = IPC_PRIVATE;
            s.kept = None;
        }
    }
    let ds = ShmidDs {
        key: s.key,
        uid: s.uid,
        gid: s.gid,
        cuid: s.cuid,
        cgid: s.cgid,
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

/// `/proc/sysvipc/shm` (Linux: `sysvipc_shm_proc_show` under its
/// header): one line per segment, its resident bytes in `rss`.
pub fn proc_show() -> alloc::string::String {
    use core::fmt::Write;
    let mut out = alloc::string::String::from(
        "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap\n",
    );
    let mut ids = IDS.lock();
    reap(&mut ids);
    for (id, s) in ids.segments.iter() {
        let rss = s.inode.upgrade().map_or(0, |i| match &i.kind {
            InodeKind::File(f) => f.nr_pages() * PAGE_SIZE as u64,
            _ => 0,
        });
        let _ = writeln!(
            out,
            "{:10} {:10}  {:4o} {:21} {:5} {:5}  {:5} {:5} {:5} {:5} {:5} {:10} {:10} {:10} {:21} {:21}",
            s.key,
            id,
            s.mode,
            s.size,
            s.cpid,
            s.lpid,
            s.nattch(),
            s.uid,
            s.gid,
            s.cuid,
            s.cgid,
            s.atime,
            s.dtime,
            s.ctime,
            rss,
            0
        );
    }
    out
}
