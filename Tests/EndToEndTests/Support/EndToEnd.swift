import Testing

/// All end-to-end suites, run one test at a time: they start daemons, agents and a whole systemd, and on a
/// two-core machine running them side by side would turn timeouts into noise. (scripts/test.sh runs a few of them,
/// those that mostly wait, in a second process: two chains, not twenty.)
@Suite(.serialized) enum EndToEnd {}
