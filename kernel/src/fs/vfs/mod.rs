//! The virtual file system: inodes, path lookup, open files and descriptor
//! tables and the mount table, shared by tmpfs and the /proc and /sys
//! pseudo filesystems.

mod fdtable;
mod file;
mod inode;
pub mod locks;
mod mount;
mod path;
pub mod permission;
pub mod xattr;

pub use fdtable::{FdTable, NR_OPEN};
pub use file::*;
pub use inode::*;
pub use mount::{anon_dev, mount_over, mounts, umount, MountInfo};
pub use path::*;
