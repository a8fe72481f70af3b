//! Memory management, from physical frames up to user address spaces.
//!
//! - Frames: `addr` (the address layout), `page` and `buddy` (the page
//!   allocator), `frame` (its front end), `pcp` (per-CPU lists of single
//!   frames), `oom_kill` (the OOM killer).
//! - The kernel's own memory: `slab` and `heap` (kmalloc), `pgtable` (the
//!   generic page-table walker), `kmap` (the kernel's map in TTBR1).
//! - Files' memory: `folio` (large folios), `folio_index` (the page-cache
//!   index), `filemap` (a file's `address_space`), `truncate` (which
//!   folios a truncation removes), `vmstat` (counters).
//! - Large folio policy: `huge_memory` (the THP knobs, their sysfs text,
//!   and the orders an anonymous fault may allocate).
//! - User address spaces: `vma` and `vma_tree` (VMAs), `mm_struct` (an
//!   address space), `vma_lock` (per-VMA locks), `ptlock` (split PTE-table
//!   locks), `memory` (setting, zapping and copying page tables), `uaccess`
//!   (user pointers).
//! - The memory system calls: `mmap` (mmap, munmap, brk, and what the
//!   others share), `mprotect`, `madvise`, `mlock`, `mremap`, `mseal`,
//!   `mincore`, `msync`.
//! - The fault path: `fault` (trap to PTE), `vm_fault` (one fault's
//!   description, handed down it), `fault_range` (how much one fault may
//!   map).
//! - What /proc shows: `smaps`, `thpmaps` (memory by folio size), `ptdump`
//!   (the user page tables), `pagemap` (what maps each page, what each
//!   frame is), `page_flags` (their bits), `remote` (another address
//!   space's memory, for exec and /proc/PID/mem).
pub mod addr;
pub mod buddy;
pub mod fault;
pub mod fault_range;
pub mod filemap;
pub mod folio;
pub mod folio_index;
pub mod frame;
pub mod gup;
pub mod heap;
pub mod huge_memory;
pub mod kmap;
pub mod madvise;
pub mod memory;
pub mod mincore;
pub mod mlock;
pub mod mm_struct;
pub mod mmap;
pub mod mprotect;
pub mod mremap;
pub mod mseal;
pub mod msync;
pub mod oom_kill;
pub mod page;
pub mod page_flags;
pub mod pagemap;
pub mod pcp;
pub mod pgtable;
pub mod pmd_cache;
pub mod ptdump;
pub mod ptlock;
pub mod remote;
pub mod slab;
pub mod smaps;
pub mod thpmaps;
pub mod truncate;
pub mod uaccess;
pub mod vm_fault;
pub mod vm_ops;
pub mod vma;
pub mod vma_lock;
pub mod vma_tree;
pub mod vmstat;
