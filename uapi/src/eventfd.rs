//! eventfd(2) flags (Linux: `include/uapi/linux/eventfd.h`).

uapi_consts! {
    /// eventfd2(2) flags (`include/uapi/linux/eventfd.h`).
    EFD_SEMAPHORE: u32 = 1;
}
