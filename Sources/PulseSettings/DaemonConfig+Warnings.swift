extension DaemonConfig {
    /// Settings that are allowed but weaken the daemon, each as the line it logs at start (and `netpulse
    /// check-config` prints): credentials sent over plain http.
    public var warnings: [String] {
        [alerts.notify.insecureCredentialsWarning, remoteWrite.insecureCredentialsWarning].compactMap { $0 }
    }
}
