//! The RTC driver's ioctls (Linux: `include/uapi/linux/rtc.h`).

uapi_consts! {
    /// Alarm interrupts on.
    RTC_AIE_ON: u32 = 0x7001;
    /// Alarm interrupts off.
    RTC_AIE_OFF: u32 = 0x7002;
    /// Update interrupts on.
    RTC_UIE_ON: u32 = 0x7003;
    /// Update interrupts off.
    RTC_UIE_OFF: u32 = 0x7004;
    /// Periodic interrupts on.
    RTC_PIE_ON: u32 = 0x7005;
    /// Periodic interrupts off.
    RTC_PIE_OFF: u32 = 0x7006;
    /// Set the alarm time.
    RTC_ALM_SET: u32 = 0x40247007;
    /// Read the alarm time.
    RTC_ALM_READ: u32 = 0x80247008;
    /// Read the time.
    RTC_RD_TIME: u32 = 0x80247009;
    /// Set the time.
    RTC_SET_TIME: u32 = 0x4024700a;
    /// Read the periodic rate.
    RTC_IRQP_READ: u32 = 0x8008700b;
    /// Set the periodic rate.
    RTC_IRQP_SET: u32 = 0x4008700c;
    /// Set the wake-up alarm.
    RTC_WKALM_SET: u32 = 0x4028700f;
    /// Read the wake-up alarm.
    RTC_WKALM_RD: u32 = 0x80287010;
}
