//! The RTC's calendar time (Linux: `drivers/rtc/lib.c`): seconds since
//! the epoch to `struct rtc_time` and back, and the check a time to set
//! must pass. UTC throughout, as the hardware clock keeps it.

/// `struct rtc_time` (`include/uapi/linux/rtc.h`), laid out as `struct
/// tm`: nine ints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RtcTime {
    /// Seconds, 0-59.
    pub sec: i32,
    /// Minutes, 0-59.
    pub min: i32,
    /// Hours, 0-23.
    pub hour: i32,
    /// Day of the month, 1-31.
    pub mday: i32,
    /// Month, 0-11.
    pub mon: i32,
    /// Years since 1900.
    pub year: i32,
    /// Day of the week, 0 (Sunday) to 6.
    pub wday: i32,
    /// Day of the year, from 1: Linux 6.12's `rtc_time64_to_tm` counts
    /// it so, where `struct tm` counts from 0.
    pub yday: i32,
    /// Always 0: UTC has no daylight saving.
    pub isdst: i32,
}

impl RtcTime {
    /// The nine ints as user memory holds them.
    pub fn to_words(self) -> [i32; 9] {
        [
            self.sec, self.min, self.hour, self.mday, self.mon, self.year, self.wday, self.yday,
            self.isdst,
        ]
    }

    /// A time from the nine ints of user memory.
    pub fn from_words(w: [i32; 9]) -> RtcTime {
        RtcTime {
            sec: w[0],
            min: w[1],
            hour: w[2],
            mday: w[3],
            mon: w[4],
            year: w[5],
            wday: w[6],
            yday: w[7],
            isdst: w[8],
        }
    }
}

/// Is `year` (the full year) a leap year?
fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Days in month `mon` (0-11) of `year` (Linux: `rtc_month_days`).
pub fn month_days(mon: u32, year: i64) -> i32 {
    const DAYS: [i32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    DAYS[mon as usize] + i32::from(mon == 1 && is_leap(year))
}

/// Days since 1970-01-01 of the civil date `year`-`mon`-`mday`, with
/// `mon` 1-12 (the inverse of `civil_from_days`; H. Hinnant's algorithm,
/// which Linux's `mktime64` does with Gauss's).
fn days_from_civil(year: i64, mon: i64, mday: i64) -> i64 {
    let y = if mon <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mon + 9) % 12;
    let doy = (153 * mp + 2) / 5 + mday - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The civil date (year, month 1-12, day) `days` after 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let mday = doy - (153 * mp + 2) / 5 + 1;
    let mon = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(mon <= 2);
    (year, mon, mday)
}

/// The calendar time `secs` seconds after the epoch (Linux:
/// `rtc_time64_to_tm`).
pub fn time64_to_tm(secs: i64) -> RtcTime {
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    let (year, mon, mday) = civil_from_days(days);
    RtcTime {
        sec: (rem % 60) as i32,
        min: (rem / 60 % 60) as i32,
        hour: (rem / 3600) as i32,
        mday: mday as i32,
        mon: (mon - 1) as i32,
        year: (year - 1900) as i32,
        // 1970-01-01 was a Thursday.
        wday: (days + 4).rem_euclid(7) as i32,
        yday: (days - days_from_civil(year, 1, 1) + 1) as i32,
        isdst: 0,
    }
}

/// Seconds since the epoch of `tm`, which `valid_tm` passed (Linux:
/// `rtc_tm_to_time64`; `wday` and `yday` are not read).
pub fn tm_to_time64(tm: &RtcTime) -> i64 {
    let days = days_from_civil(tm.year as i64 + 1900, tm.mon as i64 + 1, tm.mday as i64);
    days * 86400 + tm.hour as i64 * 3600 + tm.min as i64 * 60 + tm.sec as i64
}

/// Is `tm` a time an RTC can be set to (Linux: `rtc_valid_tm`): 1970 or
/// later, each field within its range?
pub fn valid_tm(tm: &RtcTime) -> bool {
    let year = tm.year as i64 + 1900;
    tm.year >= 70
        && (0..12).contains(&tm.mon)
        && tm.mday >= 1
        && tm.mday <= month_days(tm.mon as u32, year)
        && (0..24).contains(&tm.hour)
        && (0..60).contains(&tm.min)
        && (0..60).contains(&tm.sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        // 2000-02-29 12:34:56 UTC, a Tuesday, day 60 (from 1) of a leap
        // year.
        let tm = time64_to_tm(951_827_696);
        assert_eq!(
            tm,
            RtcTime {
                sec: 56,
                min: 34,
                hour: 12,
                mday: 29,
                mon: 1,
                year: 100,
                wday: 2,
                yday: 60,
                isdst: 0
            }
        );
        assert_eq!(time64_to_tm(0).wday, 4);
        // The PL031's last second: 2106-02-07 06:28:15.
        let last = time64_to_tm(u32::MAX as i64);
        assert_eq!((last.year, last.mon, last.mday, last.hour), (206, 1, 7, 6));
    }

    #[test]
    fn round_trips_every_day_for_centuries() {
        for days in (0..150 * 366).step_by(7) {
            let secs = days * 86400 + 3661;
            let tm = time64_to_tm(secs);
            assert!(valid_tm(&tm), "{secs}: {tm:?}");
            assert_eq!(tm_to_time64(&tm), secs);
        }
    }

    #[test]
    fn invalid_times() {
        let ok = time64_to_tm(1_700_000_000);
        let bad = [
            RtcTime { year: 69, ..ok },
            RtcTime { mon: 12, ..ok },
            RtcTime { mon: -1, ..ok },
            RtcTime { mday: 0, ..ok },
            RtcTime {
                mon: 1,
                mday: 29,
                year: 123,
                ..ok
            },
            RtcTime { hour: 24, ..ok },
            RtcTime { min: 60, ..ok },
            RtcTime { sec: 60, ..ok },
        ];
        for tm in bad {
            assert!(!valid_tm(&tm), "{tm:?}");
        }
        assert!(valid_tm(&RtcTime {
            mon: 1,
            mday: 29,
            year: 124,
            ..ok
        }));
    }
}
