//! Clocks, timer flags and itimers (Linux: `include/uapi/linux/time.h`,
//! `timerfd.h`).

uapi_consts! {
    /// timerfd_settime(2) flags.
    TFD_TIMER_ABSTIME: u32 = 1;
    /// TFD_TIMER_CANCEL_ON_SET: with an absolute CLOCK_REALTIME time, a
    /// clock_settime cancels the timer (read gets ECANCELED); accepted, but never
    /// fires here.
    TFD_TIMER_CANCEL_ON_SET: u32 = 2;
    /// CLOCK_PROCESS_CPUTIME_ID: CPU time of the calling process, all its
    /// threads.
    CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
    /// CLOCK_THREAD_CPUTIME_ID: CPU time of the calling thread.
    CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    /// TIMER_ABSTIME: the time given is a time on the clock, not an interval
    /// from now.
    TIMER_ABSTIME: u32 = 1;
    /// CLOCK_REALTIME, which clock_settime(2) sets.
    CLOCK_REALTIME: i32 = 0;
    /// CLOCK_MONOTONIC: time since boot, which nothing sets.
    CLOCK_MONOTONIC: i32 = 1;
    /// CLOCK_MONOTONIC_RAW: CLOCK_MONOTONIC without NTP's adjustments; the
    /// same clock here.
    CLOCK_MONOTONIC_RAW: i32 = 4;
    /// CLOCK_REALTIME_COARSE: CLOCK_REALTIME at tick resolution on Linux;
    /// full resolution here.
    CLOCK_REALTIME_COARSE: i32 = 5;
    /// CLOCK_MONOTONIC_COARSE: CLOCK_MONOTONIC at tick resolution on Linux;
    /// full resolution here.
    CLOCK_MONOTONIC_COARSE: i32 = 6;
    /// CLOCK_BOOTTIME: CLOCK_MONOTONIC plus time spent suspended.
    CLOCK_BOOTTIME: i32 = 7;
    /// CLOCK_REALTIME_ALARM: CLOCK_REALTIME whose timers would wake the
    /// system from suspend.
    CLOCK_REALTIME_ALARM: i32 = 8;
    /// CLOCK_BOOTTIME_ALARM: CLOCK_BOOTTIME whose timers would wake the
    /// system from suspend.
    CLOCK_BOOTTIME_ALARM: i32 = 9;
    /// CLOCK_TAI: International Atomic Time, CLOCK_REALTIME plus the TAI
    /// offset.
    CLOCK_TAI: i32 = 11;
    /// ITIMER_REAL: counts down in real time, SIGALRM when it expires.
    ITIMER_REAL: u32 = 0;
    /// ITIMER_VIRTUAL: counts down the process's user CPU time, SIGVTALRM
    /// when it expires.
    ITIMER_VIRTUAL: u32 = 1;
    /// ITIMER_PROF: counts down the process's user and system CPU time,
    /// SIGPROF when it expires.
    ITIMER_PROF: u32 = 2;
}
