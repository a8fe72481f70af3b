//! Kernel-wide build-time configuration (Linux: the `CONFIG_*` values that
//! size static tables).

/// Most CPUs the kernel brings up and sizes its per-CPU tables for (Linux:
/// `CONFIG_NR_CPUS`); `/cpus` entries beyond it are counted and ignored.
pub const NR_CPUS: usize = 8;
