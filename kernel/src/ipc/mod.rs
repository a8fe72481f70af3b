//! Inter-process communication (Linux: `ipc/`): System V shared memory
//! segments and POSIX message queues. System V message queues and
//! semaphore sets are not implemented (ENOSYS).

pub mod mqueue;
pub mod shm;
