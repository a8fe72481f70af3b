//! A thread's scheduling policy and real-time priority, as
//! sched_setscheduler(2) sets them and sched_getscheduler(2) reports them
//! (Linux: `kernel/sched/syscalls.c`, `__sched_setscheduler`'s checks).
//! faultline's scheduler is round robin for every thread: the policy and
//! priority are kept and reported, and order futex waiters (`futex/`), but
//! no real-time class runs SCHED_FIFO threads first.

pub use uapi::sched::{
    SCHED_BATCH, SCHED_DEADLINE, SCHED_EXT, SCHED_FIFO, SCHED_IDLE, SCHED_NORMAL,
    SCHED_RESET_ON_FORK, SCHED_RR,
};

/// The highest real-time priority plus one (Linux: `MAX_RT_PRIO`).
pub const MAX_RT_PRIO: u32 = 100;

/// A thread's policy and priority (Linux: `task_struct`'s `policy`,
/// `rt_priority` and `sched_reset_on_fork`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SchedPolicy {
    /// One of the SCHED_* policies above.
    pub policy: u32,
    /// 1..=99 under SCHED_FIFO and SCHED_RR, else 0.
    pub rt_priority: u32,
    /// SCHED_RESET_ON_FORK was asked for.
    pub reset_on_fork: bool,
}

impl SchedPolicy {
    /// Is `policy` a real-time one (Linux: `rt_policy`)?
    fn is_rt(policy: u32) -> bool {
        matches!(policy, SCHED_FIFO | SCHED_RR)
    }

    /// The policy and priority sched_setscheduler(`policy`, `priority`)
    /// makes of this one; `policy` None is sched_setparam's "keep the
    /// policy" (Linux: `SETPARAM_POLICY`). None where Linux says EINVAL: an
    /// unknown policy, SCHED_DEADLINE, or a priority outside 1..=99 for a
    /// real-time policy or other than 0 for the rest.
    pub fn set(&self, policy: Option<u32>, priority: i32) -> Option<SchedPolicy> {
        let (policy, reset_on_fork) = match policy {
            None => (self.policy, self.reset_on_fork),
            Some(p) => (p & !SCHED_RESET_ON_FORK, p & SCHED_RESET_ON_FORK != 0),
        };
        if !matches!(
            policy,
            SCHED_NORMAL | SCHED_FIFO | SCHED_RR | SCHED_BATCH | SCHED_IDLE
        ) {
            return None;
        }
        let priority = u32::try_from(priority).ok().filter(|&p| p < MAX_RT_PRIO)?;
        (Self::is_rt(policy) == (priority != 0)).then_some(SchedPolicy {
            policy,
            rt_priority: priority,
            reset_on_fork,
        })
    }

    /// What sched_getscheduler reports: the policy, with
    /// SCHED_RESET_ON_FORK if asked for.
    pub fn reported(&self) -> u32 {
        self.policy
            | if self.reset_on_fork {
                SCHED_RESET_ON_FORK
            } else {
                0
            }
    }

    /// What a child starts with (Linux: `sched_fork`): the same, unless
    /// SCHED_RESET_ON_FORK, which makes a real-time policy SCHED_NORMAL and
    /// is not inherited itself. Linux also resets a negative nice value
    /// then; faultline's nice value is the process's, left as fork copies it.
    pub fn for_child(&self) -> SchedPolicy {
        if !self.reset_on_fork {
            return *self;
        }
        match Self::is_rt(self.policy) {
            true => SchedPolicy::default(),
            false => SchedPolicy {
                reset_on_fork: false,
                ..*self
            },
        }
    }

    /// The priority a futex waiter queues with, lower first (Linux:
    /// `min(current->normal_prio, MAX_RT_PRIO)` in `__futex_queue`, the
    /// order an rt_mutex also gives its waiters): 99 - rt_priority for a
    /// real-time thread; MAX_RT_PRIO for every other, in arrival order.
    pub fn futex_prio(&self) -> u32 {
        match Self::is_rt(self.policy) {
            true => MAX_RT_PRIO - 1 - self.rt_priority,
            false => MAX_RT_PRIO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo(rt_priority: u32) -> SchedPolicy {
        SchedPolicy {
            policy: SCHED_FIFO,
            rt_priority,
            reset_on_fork: false,
        }
    }

    #[test]
    fn real_time_policies_take_1_to_99_and_the_rest_0() {
        let normal = SchedPolicy::default();
        assert_eq!(normal.set(Some(SCHED_FIFO), 1), Some(fifo(1)));
        assert_eq!(
            normal.set(Some(SCHED_RR), 99).map(|p| p.rt_priority),
            Some(99)
        );
        for (policy, priority) in [(SCHED_FIFO, 0), (SCHED_RR, 100), (SCHED_FIFO, -1)] {
            assert_eq!(
                normal.set(Some(policy), priority),
                None,
                "{policy} {priority}"
            );
        }
        for policy in [SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE] {
            assert!(normal.set(Some(policy), 0).is_some(), "{policy} 0");
            assert_eq!(normal.set(Some(policy), 1), None, "{policy} 1");
        }
        for policy in [4, SCHED_DEADLINE, SCHED_EXT, 8] {
            assert_eq!(normal.set(Some(policy), 0), None, "policy {policy}");
        }
    }

    #[test]
    fn setparam_keeps_the_policy() {
        assert_eq!(fifo(10).set(None, 20), Some(fifo(20)));
        assert_eq!(fifo(10).set(None, 0), None);
        assert_eq!(SchedPolicy::default().set(None, 5), None);
    }

    #[test]
    fn reset_on_fork_is_reported_and_not_inherited() {
        let p = SchedPolicy::default()
            .set(Some(SCHED_RR | SCHED_RESET_ON_FORK), 5)
            .unwrap();
        assert_eq!(p.reported(), SCHED_RR | SCHED_RESET_ON_FORK);
        assert_eq!(p.for_child(), SchedPolicy::default());
        let batch = SchedPolicy::default()
            .set(Some(SCHED_BATCH | SCHED_RESET_ON_FORK), 0)
            .unwrap();
        assert_eq!(batch.for_child().reported(), SCHED_BATCH);
        assert_eq!(fifo(7).for_child(), fifo(7));
    }

    #[test]
    fn futex_waiters_queue_real_time_first_higher_first() {
        assert_eq!(fifo(99).futex_prio(), 0);
        assert!(fifo(20).futex_prio() < fifo(10).futex_prio());
        assert!(fifo(1).futex_prio() < SchedPolicy::default().futex_prio());
    }
}
