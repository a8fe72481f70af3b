//! The virtual file system: inodes, path lookup, open files and descriptor
//! tables, shared by tmpfs and the /proc and /sys pseudo filesystems.

mod fdtable;
mod file;
mod inode;
pub mod locks;
mod path;

pub use fdtable::{FdTable, NR_OPEN};
pub use file::*;
pub use inode::*;
pub use path::*;
