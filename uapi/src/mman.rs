//! Memory-mapping protections, flags and advice; memfd flags (Linux:
//! `include/uapi/asm-generic/mman-common.h`, `mman.h`,
//! `include/uapi/linux/mman.h`, `memfd.h`).

uapi_consts! {
    /// MFD_CLOEXEC: the new descriptor is close-on-exec (the caller applies it).
    MFD_CLOEXEC: u32 = 0x1;
    /// MFD_ALLOW_SEALING: the file starts with no seals, so F_ADD_SEALS works.
    MFD_ALLOW_SEALING: u32 = 0x2;
    /// MFD_NOEXEC_SEAL: the file is not executable and sealed that way
    /// (F_SEAL_EXEC); implies MFD_ALLOW_SEALING.
    MFD_NOEXEC_SEAL: u32 = 0x8;
    /// MFD_EXEC: the file is executable (mode 0777).
    MFD_EXEC: u32 = 0x10;
    /// MFD_HUGETLB: a hugetlbfs file, which faultline does not have (ENOSYS,
    /// as Linux built without CONFIG_HUGETLBFS).
    MFD_HUGETLB: u32 = 0x4;
    /// MADV_NORMAL: no special access pattern (clears VM_SEQ_READ and VM_RAND_READ).
    MADV_NORMAL: u32 = 0;
    /// MADV_RANDOM: expect random access (VM_RAND_READ).
    MADV_RANDOM: u32 = 1;
    /// MADV_SEQUENTIAL: expect sequential access (VM_SEQ_READ).
    MADV_SEQUENTIAL: u32 = 2;
    /// MADV_WILLNEED: expect access soon (nothing to read ahead here).
    MADV_WILLNEED: u32 = 3;
    /// MADV_DONTNEED: drop the pages now; anonymous memory reads back as zeros,
    /// a file mapping as the file. Not for a locked VMA.
    MADV_DONTNEED: u32 = 4;
    /// MADV_FREE: the pages may be freed (here at once, as MADV_DONTNEED);
    /// private anonymous memory only.
    MADV_FREE: u32 = 8;
    /// MADV_REMOVE: punch the range out of the file behind a shared mapping.
    MADV_REMOVE: u32 = 9;
    /// MADV_DONTFORK: the range is not copied into a child at fork (sets
    /// VM_DONTCOPY).
    MADV_DONTFORK: u32 = 10;
    /// MADV_DOFORK: undoes MADV_DONTFORK (clears VM_DONTCOPY).
    MADV_DOFORK: u32 = 11;
    /// MADV_HUGEPAGE: large folios wanted here (VM_HUGEPAGE, clearing
    /// VM_NOHUGEPAGE).
    MADV_HUGEPAGE: u32 = 14;
    /// MADV_NOHUGEPAGE: no large folios here (VM_NOHUGEPAGE, clearing
    /// VM_HUGEPAGE).
    MADV_NOHUGEPAGE: u32 = 15;
    /// MADV_DONTDUMP: leave the range out of a core dump (sets VM_DONTDUMP).
    MADV_DONTDUMP: u32 = 16;
    /// MADV_DODUMP: undoes MADV_DONTDUMP (clears VM_DONTDUMP).
    MADV_DODUMP: u32 = 17;
    /// MADV_WIPEONFORK: a forked child gets the range zeroed (private
    /// anonymous memory only; VM_WIPEONFORK).
    MADV_WIPEONFORK: u32 = 18;
    /// MADV_KEEPONFORK: undoes MADV_WIPEONFORK.
    MADV_KEEPONFORK: u32 = 19;
    /// MADV_COLD: the pages are unlikely to be used soon.
    MADV_COLD: u32 = 20;
    /// MADV_PAGEOUT: reclaim the pages now.
    MADV_PAGEOUT: u32 = 21;
    /// MADV_POPULATE_READ: fault the range in for reading.
    MADV_POPULATE_READ: u32 = 22;
    /// MADV_POPULATE_WRITE: fault the range in for writing.
    MADV_POPULATE_WRITE: u32 = 23;
    /// MADV_DONTNEED_LOCKED: MADV_DONTNEED that a locked VMA allows too.
    MADV_DONTNEED_LOCKED: u32 = 24;
    /// MADV_COLLAPSE: map the range's anonymous 2Ms with PMD blocks now
    /// (`huge_memory::collapse`).
    MADV_COLLAPSE: u32 = 25;
    /// MLOCK_ONFAULT (mlock2): lock pages as they are faulted in instead of
    /// populating the range now (VM_LOCKONFAULT).
    MLOCK_ONFAULT: u32 = 1;
    /// MCL_CURRENT: mlockall locks every current mapping.
    MCL_CURRENT: u32 = 1;
    /// MCL_FUTURE: mlockall locks every later mapping too (`def_flags`).
    MCL_FUTURE: u32 = 2;
    /// MCL_ONFAULT: with MCL_CURRENT or MCL_FUTURE, lock on fault, not now.
    MCL_ONFAULT: u32 = 4;
    /// PROT_READ: the pages may be read (the VMA gets VM_READ).
    PROT_READ: u32 = 1;
    /// PROT_WRITE: the pages may be written (VM_WRITE).
    PROT_WRITE: u32 = 2;
    /// PROT_EXEC: the pages may be executed (VM_EXEC).
    PROT_EXEC: u32 = 4;
    /// PROT_SEM: atomics may be used on the pages; always true here, so
    /// accepted and ignored.
    PROT_SEM: u32 = 8;
    /// MAP_SHARED: writes reach the file and every other mapper (VM_SHARED).
    MAP_SHARED: u32 = 0x1;
    /// MAP_PRIVATE: copy-on-write; writes stay in this process.
    MAP_PRIVATE: u32 = 0x2;
    /// MAP_SHARED_VALIDATE: MAP_SHARED, refusing flags it does not know
    /// (EOPNOTSUPP) where MAP_SHARED ignores them.
    MAP_SHARED_VALIDATE: u32 = 0x3;
    /// MAP_DROPPABLE: private anonymous memory whose pages may be dropped
    /// (`VM_DROPPABLE`).
    MAP_DROPPABLE: u32 = 0x8;
    /// MAP_TYPE: the bits that hold MAP_SHARED, MAP_PRIVATE and the rest.
    MAP_TYPE: u32 = 0xf;
    /// MAP_FIXED: map exactly at `addr`, replacing whatever was there.
    MAP_FIXED: u32 = 0x10;
    /// MAP_ANONYMOUS: zeroed memory with no file behind it; `fd` is ignored.
    MAP_ANONYMOUS: u32 = 0x20;
    /// MAP_GROWSDOWN: the VMA gets VM_GROWSDOWN.
    MAP_GROWSDOWN: u32 = 0x100;
    /// MAP_LOCKED: mlock the new mapping (Linux: VM_LOCKED, then populate).
    MAP_LOCKED: u32 = 0x2000;
    /// MAP_NORESERVE: no overcommit check (VM_NORESERVE).
    MAP_NORESERVE: u32 = 0x4000;
    /// MAP_POPULATE: fault every page in before mmap returns.
    MAP_POPULATE: u32 = 0x8000;
    /// MAP_NONBLOCK: with MAP_POPULATE, do not populate after all.
    MAP_NONBLOCK: u32 = 0x10000;
    /// MAP_STACK: a thread's stack; no huge pages there (VM_NOHUGEPAGE).
    MAP_STACK: u32 = 0x20000;
    /// MAP_HUGETLB: hugetlbfs pages, which faultline does not have (EINVAL,
    /// as Linux without a huge page size to give).
    MAP_HUGETLB: u32 = 0x40000;
    /// MAP_FIXED_NOREPLACE: map exactly at `addr`, EEXIST if anything is there.
    MAP_FIXED_NOREPLACE: u32 = 0x100000;
    /// PROT_GROWSDOWN: extend the change down to the start of the stack VMA
    /// the range begins in.
    PROT_GROWSDOWN: u32 = 0x1000000;
    /// PROT_GROWSUP: the same upwards, for stacks that grow up (arm64 has
    /// none, so always EINVAL).
    PROT_GROWSUP: u32 = 0x2000000;
    /// MREMAP_MAYMOVE: mremap may move the mapping if it cannot grow in place.
    MREMAP_MAYMOVE: u32 = 1;
    /// MREMAP_FIXED: move the mapping to exactly `new_addr` (needs
    /// MREMAP_MAYMOVE).
    MREMAP_FIXED: u32 = 2;
    /// MREMAP_DONTUNMAP: move the pages but leave the old mapping in place,
    /// empty (needs MREMAP_MAYMOVE and an unchanged length).
    MREMAP_DONTUNMAP: u32 = 4;
    /// MS_ASYNC: schedule the write-back and return.
    MS_ASYNC: u32 = 1;
    /// MS_INVALIDATE: make other mappings of the file see it (EBUSY over a
    /// locked mapping).
    MS_INVALIDATE: u32 = 2;
    /// MS_SYNC: write back and wait.
    MS_SYNC: u32 = 4;
    PROT_NONE: u32 = 0;
}
