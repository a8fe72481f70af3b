//! Memory management: physical frames, the kernel heap, page tables and
//! the kernel's own map.
pub mod addr;
pub mod buddy;
pub mod filemap;
pub mod folio;
pub mod folio_index;
pub mod frame;
pub mod heap;
pub mod kmap;
pub mod page;
pub mod pgtable;
pub mod vmstat;
