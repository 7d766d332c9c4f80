// A thread's scheduling slice under Linux's EEVDF scheduler (6.12 and later), through the sched_getattr and
// sched_setattr system calls, which glibc does not wrap (and Swift cannot call the variadic syscall(2)).
//
// For a SCHED_OTHER thread, sched_attr.sched_runtime is its slice: how long it may run before the scheduler picks
// again. A waking thread with a shorter slice than the one running gets an earlier deadline and the CPU sooner,
// rather than after the running thread's slice. Setting it needs no privilege.
#pragma once
#ifdef __linux__
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct netpulse_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
    uint32_t sched_util_min;
    uint32_t sched_util_max;
};

// The calling thread's slice in nanoseconds as the kernel reports it (its default when none was set); -1 with
// errno set when the call fails.
static inline int64_t netpulse_thread_slice(void) {
    struct netpulse_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, 0, &attr, (unsigned int)sizeof attr, 0U) != 0) return -1;
    return (int64_t)attr.sched_runtime;
}

// Sets the calling thread's slice (0: the kernel's default), keeping its policy, nice value and priority.
// `reset_on_fork` also sets SCHED_FLAG_RESET_ON_FORK, so that a thread this one creates (the dispatch pool grows from
// whichever thread asks it for work) starts with the default slice and a nice value of at least 0, not with
// ingest's; the flag then stays (clearing it needs CAP_SYS_NICE), and it only ever lowers what children inherit.
// Returns 0, or -1 with errno set.
static inline int netpulse_set_thread_slice(uint64_t nanoseconds, int reset_on_fork) {
    struct netpulse_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, 0, &attr, (unsigned int)sizeof attr, 0U) != 0) return -1;
    attr.size = sizeof attr;
    attr.sched_flags &= 0x01;  // SCHED_FLAG_RESET_ON_FORK as it was; no utilisation clamps
    if (reset_on_fork) attr.sched_flags |= 0x01;
    attr.sched_runtime = nanoseconds;
    attr.sched_deadline = 0;
    attr.sched_period = 0;
    return syscall(SYS_sched_setattr, 0, &attr, 0U) == 0 ? 0 : -1;
}
#endif
