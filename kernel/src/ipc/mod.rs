//! System V IPC (Linux: `ipc/`): shared memory segments only; message
//! queues and semaphore sets are not implemented (ENOSYS).

pub mod shm;
