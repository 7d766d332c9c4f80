#ifndef NETPULSE_CSYSTEMD_SHIM_H
#define NETPULSE_CSYSTEMD_SHIM_H

// libsystemd's readiness, watchdog, socket-activation and journal APIs (apt: libsystemd-dev).
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <sys/uio.h>

#endif
