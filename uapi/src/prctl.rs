//! prctl(2) options (Linux: `include/uapi/linux/prctl.h`).

uapi_consts! {
    /// PR_MDWE_REFUSE_EXEC_GAIN: memory-deny-write-execute for this process.
    PR_MDWE_REFUSE_EXEC_GAIN: u64 = 1;
    /// PR_MDWE_NO_INHERIT: ... but not for its children or a new program.
    PR_MDWE_NO_INHERIT: u64 = 2;
    PR_SET_PDEATHSIG: i32 = 1;
    PR_GET_PDEATHSIG: i32 = 2;
    PR_GET_DUMPABLE: i32 = 3;
    PR_SET_DUMPABLE: i32 = 4;
    PR_SET_NAME: i32 = 15;
    PR_GET_NAME: i32 = 16;
    PR_SET_CHILD_SUBREAPER: i32 = 36;
    PR_GET_CHILD_SUBREAPER: i32 = 37;
    PR_SET_NO_NEW_PRIVS: i32 = 38;
    PR_GET_NO_NEW_PRIVS: i32 = 39;
    PR_SET_MDWE: i32 = 65;
    PR_GET_MDWE: i32 = 66;
}
