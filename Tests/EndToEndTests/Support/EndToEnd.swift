import Testing

/// All end-to-end suites, run one test at a time: they start daemons, agents and a whole systemd, and on a
/// two-core machine running them side by side would turn timeouts into noise.
@Suite(.serialized) enum EndToEnd {}
