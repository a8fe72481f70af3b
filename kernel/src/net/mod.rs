//! Sockets (Linux: `net/socket.c`, `net/unix/`). Only the local family,
//! AF_UNIX, exists: faultline has no network devices, so socket(2) for any
//! other family fails with EAFNOSUPPORT (where Linux, even with no network
//! configured, would still make an AF_INET socket).
#![deny(unsafe_code)]

pub mod unix;
