//! poll(2) and epoll(7) events and operations (Linux:
//! `include/uapi/asm-generic/poll.h`, `include/uapi/linux/eventpoll.h`).

uapi_consts! {
    /// EPOLL_CTL_ADD: start watching a file.
    EPOLL_CTL_ADD: i32 = 1;
    /// EPOLL_CTL_DEL: stop watching a file.
    EPOLL_CTL_DEL: i32 = 2;
    /// EPOLL_CTL_MOD: change a watched file's events and data.
    EPOLL_CTL_MOD: i32 = 3;
    /// EPOLLERR: an error on the file; always reported, asked for or not.
    EPOLLERR: u32 = 0x8;
    /// EPOLLHUP: the other end hung up; always reported, asked for or not.
    EPOLLHUP: u32 = 0x10;
    /// EPOLLEXCLUSIVE: wake only one of the instances watching the file; only
    /// accepted with EPOLL_CTL_ADD, and here it wakes them all anyway.
    EPOLLEXCLUSIVE: u32 = 268435456;
    /// EPOLLWAKEUP: hold off system suspend while the event is pending; accepted
    /// and ignored (there is no suspend).
    EPOLLWAKEUP: u32 = 536870912;
    /// EPOLLONESHOT: after one report the item reports nothing more until
    /// EPOLL_CTL_MOD arms it again.
    EPOLLONESHOT: u32 = 1073741824;
    /// EPOLLET: edge-triggered, report only a change of readiness, not every
    /// epoll_wait while the file stays ready.
    EPOLLET: u32 = 2147483648;
    /// POLLIN: there is data to read (or, on a listening socket, a connection to
    /// accept).
    POLLIN: u32 = 0x1;
    /// POLLPRI: urgent or exceptional data to read (select's except set); nothing
    /// here reports it.
    POLLPRI: u32 = 0x2;
    /// POLLOUT: a write now would not block.
    POLLOUT: u32 = 0x4;
    /// POLLERR: an error condition (a pipe's write end with no reader left);
    /// reported whether asked for or not.
    POLLERR: u32 = 0x8;
    /// POLLHUP: hung up (a pipe with no writer left, a closed peer); reported
    /// whether asked for or not.
    POLLHUP: u32 = 0x10;
    /// POLLNVAL: the descriptor is not open; only poll(2) sets it, in `revents`.
    POLLNVAL: u32 = 0x20;
    /// POLLRDNORM: normal data to read; reported with POLLIN.
    POLLRDNORM: u32 = 0x40;
    /// POLLRDBAND: priority-band data to read (nothing here has any).
    POLLRDBAND: u32 = 0x80;
    /// POLLWRNORM: normal data can be written; reported with POLLOUT.
    POLLWRNORM: u32 = 0x100;
    /// POLLWRBAND: priority-band data can be written.
    POLLWRBAND: u32 = 0x200;
    /// POLLRDHUP: the peer shut down its writing side (stream sockets).
    POLLRDHUP: u32 = 0x2000;
}
