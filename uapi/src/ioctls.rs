//! Terminal and file ioctl numbers (Linux:
//! `include/uapi/asm-generic/ioctls.h`).

uapi_consts! {
    /// FIONREAD: bytes waiting to be read, as an int (`asm-generic/ioctls.h`).
    FIONREAD: u32 = 0x541b;
    /// TCGETS: read the termios.
    TCGETS: u32 = 0x5401;
    /// TCSETS: set the termios now.
    TCSETS: u32 = 0x5402;
    /// TCSETSW: set the termios once output has drained (at once here: output is
    /// written synchronously).
    TCSETSW: u32 = 0x5403;
    /// TCSETSF: set the termios after draining output and discarding unread
    /// input.
    TCSETSF: u32 = 0x5404;
    /// TCSBRK: wait for output to drain, or send a break; nothing to do here.
    TCSBRK: u32 = 0x5409;
    /// TCXONC: suspend or restart output or input; accepted and ignored.
    TCXONC: u32 = 0x540a;
    /// TCFLSH: discard unread input, unsent output, or both.
    TCFLSH: u32 = 0x540b;
    /// TIOCSCTTY: make this the caller's session's controlling terminal.
    TIOCSCTTY: u32 = 0x540e;
    /// TIOCGPGRP: read the foreground process group.
    TIOCGPGRP: u32 = 0x540f;
    /// TIOCSPGRP: set the foreground process group.
    TIOCSPGRP: u32 = 0x5410;
    /// TIOCOUTQ: bytes of output not yet sent; always 0 here.
    TIOCOUTQ: u32 = 0x5411;
    /// TIOCSTI: push a byte into the input as if typed.
    TIOCSTI: u32 = 0x5412;
    /// TIOCGWINSZ: read the window size (`struct winsize`).
    TIOCGWINSZ: u32 = 0x5413;
    /// TIOCSWINSZ: set the window size; a change sends SIGWINCH to the foreground
    /// group.
    TIOCSWINSZ: u32 = 0x5414;
    /// TIOCNOTTY: give up the controlling terminal (for the whole session if the
    /// session leader asks).
    TIOCNOTTY: u32 = 0x5422;
    /// TIOCGSID: read the session whose controlling terminal this is.
    TIOCGSID: u32 = 0x5429;
}
