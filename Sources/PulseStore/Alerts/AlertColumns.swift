/// The columns of the alert tables, in the order both stores select and insert them (the dialects differ in how a
/// row replaces another: SQLite's `INSERT OR REPLACE`, PostgreSQL's `ON CONFLICT … DO UPDATE`).
package enum AlertColumns {
    /// `alert_instance`: one per rule and fingerprint, what the evaluator carries from round to round.
    package static let instance =
        "rule, fingerprint, series_id, labels, annotations, status, active_since, fired_at, clear_since, value, evaluated_at, rule_digest"
    /// `alert_event` as read; inserted without its id (``eventInsert``).
    package static let event =
        "id, rule, fingerprint, series_id, status, at, value, labels, annotations, starts_at, ends_at, chart"
    package static let eventInsert =
        "at, rule, fingerprint, series_id, status, value, labels, annotations, starts_at, ends_at, chart"
    /// `alert_silence`.
    package static let silence = "id, matchers, starts_at, ends_at, created_by, comment"
    /// `notification_group`: what each receiver's group last notified.
    package static let group = "receiver, key, labels, created_at, notified_at, notified_firing"
    /// `notification` as read; inserted without its id (``notificationInsert``).
    package static let notification =
        "id, receiver, group_key, created_at, body, attempts, next_attempt, last_error"
    package static let notificationInsert = "receiver, group_key, created_at, body, attempts, next_attempt, last_error"
}
