//! Terminal modes and control characters (Linux:
//! `include/uapi/asm-generic/termbits.h`).

uapi_consts! {
    /// ISTRIP: clear the eighth bit of every input byte.
    ISTRIP: u32 = 0o40;
    /// INLCR: input newline becomes carriage return.
    INLCR: u32 = 0o100;
    /// IGNCR: input carriage returns are dropped.
    IGNCR: u32 = 0o200;
    /// ICRNL: input carriage return becomes newline (Enter sends CR).
    ICRNL: u32 = 0o400;
    /// IXON: ^S/^Q stop and start output; not honoured here, they are input.
    IXON: u32 = 0o2000;
    /// OPOST: process output at all (ONLCR applies only with it).
    OPOST: u32 = 0o1;
    /// ONLCR: output newline becomes carriage return and newline.
    ONLCR: u32 = 0o4;
    /// B38400: the baud rate bits, 38400; reported, nothing is timed by it.
    B38400: u32 = 0o17;
    /// CS8: eight data bits per character.
    CS8: u32 = 0o60;
    /// CREAD: the receiver is on.
    CREAD: u32 = 0o200;
    /// HUPCL: hang up on the last close; reported, there is no hang-up.
    HUPCL: u32 = 0o2000;
    /// ISIG: the INTR, QUIT and SUSP characters send signals.
    ISIG: u32 = 0o1;
    /// ICANON: canonical mode, input edited and read a line at a time.
    ICANON: u32 = 0o2;
    /// ECHO: typed characters are shown.
    ECHO: u32 = 0o10;
    /// ECHOE: ERASE and WERASE rub characters out on the screen.
    ECHOE: u32 = 0o20;
    /// ECHOK: without ECHOKE, KILL echoes itself and a newline.
    ECHOK: u32 = 0o40;
    /// ECHONL: newline is echoed even without ECHO.
    ECHONL: u32 = 0o100;
    /// NOFLSH: a signal character does not discard the input.
    NOFLSH: u32 = 0o200;
    /// ECHOCTL: control characters echo as `^X`.
    ECHOCTL: u32 = 0o1000;
    /// ECHOKE: KILL rubs the whole line out on the screen.
    ECHOKE: u32 = 0o4000;
    /// IEXTEN: extended input processing; WERASE needs it.
    IEXTEN: u32 = 0o100000;
    /// VINTR: the INTR character (^C), which sends SIGINT.
    VINTR: usize = 0;
    /// VQUIT: the QUIT character (`^\`), which sends SIGQUIT.
    VQUIT: usize = 1;
    /// VERASE: the ERASE character (DEL), which deletes one character.
    VERASE: usize = 2;
    /// VKILL: the KILL character (^U), which deletes the line.
    VKILL: usize = 3;
    /// VEOF: the EOF character (^D), which ends the line without a newline.
    VEOF: usize = 4;
    /// VMIN: the fewest bytes a non-canonical read waits for.
    VMIN: usize = 6;
    /// VSUSP: the SUSP character (^Z), which sends SIGTSTP.
    VSUSP: usize = 10;
    /// VEOL: an extra end-of-line character (none by default).
    VEOL: usize = 11;
    /// VWERASE: the WERASE character (^W), which deletes a word.
    VWERASE: usize = 14;
    /// VEOL2: a second extra end-of-line character (none by default).
    VEOL2: usize = 16;
    /// NCCS: the number of control characters in `c_cc`.
    NCCS: usize = 19;
}
