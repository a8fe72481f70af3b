//! Socket families, types, flags and options (Linux:
//! `include/linux/socket.h`, `include/uapi/asm-generic/socket.h`).

uapi_consts! {
    /// AF_UNIX (also AF_LOCAL): local sockets, the only address family there is.
    AF_UNIX: i32 = 1;
    /// SOCK_STREAM: a connected, reliable byte stream with no message boundaries.
    SOCK_STREAM: i32 = 1;
    /// SOCK_DGRAM: connectionless messages, each delivered and read whole.
    SOCK_DGRAM: i32 = 2;
    /// Linux makes a SOCK_RAW AF_UNIX socket a datagram one.
    SOCK_RAW: i32 = 3;
    /// SOCK_SEQPACKET: a connection, as a stream's, carrying messages read whole.
    SOCK_SEQPACKET: i32 = 5;
    /// MSG_PEEK: receive without taking the data off the queue.
    MSG_PEEK: u32 = 0x2;
    /// MSG_CTRUNC: in recvmsg's `msg_flags`, passed descriptors did not all fit
    /// in the control buffer (those left out are closed).
    MSG_CTRUNC: u32 = 0x8;
    /// MSG_TRUNC: in `msg_flags`, the message was longer than the buffer and its
    /// tail is lost; as a recv flag, return the message's real length.
    MSG_TRUNC: u32 = 0x20;
    /// MSG_DONTWAIT: this call does not block, as if the socket were O_NONBLOCK.
    MSG_DONTWAIT: u32 = 0x40;
    /// MSG_WAITALL: a stream receive waits until the whole length has arrived (or
    /// end of stream, a signal, an error).
    MSG_WAITALL: u32 = 0x100;
    /// MSG_NOSIGNAL: a send on a broken stream fails with EPIPE without raising
    /// SIGPIPE.
    MSG_NOSIGNAL: u32 = 0x4000;
    /// SO_REUSEADDR: accepted and ignored, as AF_UNIX does (a bound path must be
    /// unlinked before it can be bound again).
    SO_REUSEADDR: i32 = 2;
    /// SO_TYPE: the socket's SOCK_* type, read only.
    SO_TYPE: i32 = 3;
    /// SO_ERROR: the pending socket error, read only; always 0 here.
    SO_ERROR: i32 = 4;
    /// SO_SNDBUF: the send buffer size in bytes (set: doubled, as Linux does).
    SO_SNDBUF: i32 = 7;
    /// SO_RCVBUF: the receive buffer size in bytes (set: doubled, as Linux does).
    SO_RCVBUF: i32 = 8;
    /// SO_KEEPALIVE: accepted and ignored (no link to keep alive).
    SO_KEEPALIVE: i32 = 9;
    /// SO_PASSCRED: accepted and ignored (no SCM_CREDENTIALS here).
    SO_PASSCRED: i32 = 16;
    /// SO_PEERCRED: the peer's `struct ucred` (pid, uid, gid) as it connected;
    /// uid and gid are 0.
    SO_PEERCRED: i32 = 17;
    /// SO_ACCEPTCONN: 1 if the socket is listening, read only.
    SO_ACCEPTCONN: i32 = 30;
    /// SO_PROTOCOL: the protocol number, always 0 for AF_UNIX, read only.
    SO_PROTOCOL: i32 = 38;
    /// SO_DOMAIN: the address family, AF_UNIX, read only.
    SO_DOMAIN: i32 = 39;
    /// SOL_SOCKET: the socket-level option and control-message level, as
    /// opposed to a protocol's.
    SOL_SOCKET: i32 = 1;
    /// SCM_RIGHTS: a control message carrying open descriptors.
    SCM_RIGHTS: i32 = 1;
    /// MSG_CMSG_CLOEXEC: recvmsg gives descriptors received by SCM_RIGHTS
    /// FD_CLOEXEC.
    MSG_CMSG_CLOEXEC: u32 = 0x40000000;
}
