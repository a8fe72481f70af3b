//! Memory management: physical frames, the kernel heap, page tables and
//! the kernel's own map.
pub mod addr;
pub mod buddy;
pub mod fault;
pub mod fault_range;
pub mod filemap;
pub mod folio;
pub mod folio_index;
pub mod frame;
pub mod heap;
pub mod kmap;
pub mod memory;
pub mod mm_struct;
pub mod mmap;
pub mod oom_kill;
pub mod page;
pub mod pcp;
pub mod pgtable;
pub mod ptlock;
pub mod slab;
pub mod smaps;
pub mod thpmaps;
pub mod uaccess;
pub mod vma;
pub mod vma_lock;
pub mod vma_tree;
pub mod vmstat;
