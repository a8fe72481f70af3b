//! Inter-process communication (Linux: `ipc/`): System V shared memory
//! segments and POSIX message queues. System V message queues and
//! semaphore sets are not implemented (ENOSYS).

pub mod mqueue;
pub mod shm;

/// Adds System V IPC's /proc files (Linux: `ipc_init_proc_interface`
/// from `shm_init`); before /proc is built.
pub fn init() {
    crate::fs::procfs::register("sysvipc", "shm", shm::proc_show);
}
