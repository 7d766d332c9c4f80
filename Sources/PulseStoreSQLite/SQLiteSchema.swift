import GRDB
import PulseAnalytics
import PulseStore

/// The SQLite schema, as named append-only migrations: a store made by any earlier version is brought up to date
/// when it is opened. `UpgradeTests` opens stores written by 0.1 and 0.2 (`Tests/PulseStoreTests/Fixtures`), which
/// runs every later migration on real data, rollup tables without the newer columns included.
enum SQLiteSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        // Netpulse 0.1: one compressed chunk per interface epoch per batch, nothing rolled up.
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE agent (
                        id INTEGER PRIMARY KEY,
                        name TEXT NOT NULL UNIQUE,
                        hostname TEXT NOT NULL,
                        version TEXT NOT NULL,
                        first_seen INTEGER NOT NULL,
                        last_seen INTEGER NOT NULL
                    );
                    CREATE TABLE stream (
                        id INTEGER PRIMARY KEY,
                        agent_id INTEGER NOT NULL REFERENCES agent(id),
                        stream INTEGER NOT NULL,
                        dropped INTEGER NOT NULL DEFAULT 0,
                        UNIQUE (agent_id, stream)
                    );
                    CREATE TABLE batch (
                        stream_id INTEGER NOT NULL,
                        sequence INTEGER NOT NULL,
                        received INTEGER NOT NULL,
                        value_count INTEGER NOT NULL,
                        PRIMARY KEY (stream_id, sequence)
                    ) WITHOUT ROWID;
                    CREATE TABLE series (
                        id INTEGER PRIMARY KEY,
                        agent_id INTEGER NOT NULL REFERENCES agent(id),
                        interface BLOB NOT NULL,
                        boot_id BLOB NOT NULL,
                        ifindex INTEGER NOT NULL,
                        width INTEGER NOT NULL,
                        first_seen INTEGER NOT NULL,
                        UNIQUE (agent_id, interface, boot_id, ifindex, width)
                    );
                    CREATE TABLE chunk (
                        id INTEGER PRIMARY KEY,
                        series_id INTEGER NOT NULL REFERENCES series(id),
                        first_ts INTEGER NOT NULL,
                        last_ts INTEGER NOT NULL,
                        sample_count INTEGER NOT NULL,
                        data BLOB NOT NULL
                    );
                    CREATE INDEX chunk_by_series ON chunk (series_id, last_ts);
                    CREATE INDEX chunk_by_age ON chunk (last_ts);
                    CREATE TABLE link_state (
                        series_id INTEGER NOT NULL REFERENCES series(id),
                        ts INTEGER NOT NULL,
                        speed_mbps INTEGER,
                        operstate TEXT NOT NULL,
                        carrier INTEGER,
                        mtu INTEGER NOT NULL,
                        PRIMARY KEY (series_id, ts)
                    ) WITHOUT ROWID;
                    """)
        }
        // Netpulse 0.2: logical interfaces, counted steps, rollups, scopes, memberships, compact deduplication.
        // The 0.1 tables are renamed `*_v1` and backfilled into the new ones by `SQLiteStore.backfillVersion1`,
        // which drops them when it is done (in its own transactions: a large store takes a while).
        migrator.registerMigration("v2-analytics") { db in
            try db.execute(
                sql: """
                    ALTER TABLE agent ADD COLUMN labels TEXT NOT NULL DEFAULT '';
                    ALTER TABLE series RENAME TO series_v1;
                    ALTER TABLE chunk RENAME TO chunk_v1;
                    ALTER TABLE link_state RENAME TO link_state_v1;
                    ALTER TABLE batch RENAME TO batch_v1;

                    -- Deduplication: the sequences stored per stream, as ranges (a stream has few holes).
                    CREATE TABLE stream_range (
                        stream_id INTEGER NOT NULL,
                        first INTEGER NOT NULL,
                        last INTEGER NOT NULL,
                        PRIMARY KEY (stream_id, first)
                    ) WITHOUT ROWID;
                    INSERT INTO stream_range (stream_id, first, last)
                        SELECT stream_id, MIN(sequence), MAX(sequence) FROM (
                            SELECT stream_id, sequence,
                                sequence - ROW_NUMBER() OVER (PARTITION BY stream_id ORDER BY sequence) AS island
                            FROM batch_v1)
                        GROUP BY stream_id, island;

                    -- Rollup series: logical interfaces (agent + name) and scopes (host, group, fleet).
                    -- agent_id is 0 for groups and the fleet; name is the interface name, or key=value for a group.
                    CREATE TABLE series (
                        id INTEGER PRIMARY KEY,
                        kind INTEGER NOT NULL,
                        agent_id INTEGER NOT NULL,
                        name BLOB NOT NULL,
                        first_seen INTEGER NOT NULL,
                        last_seen INTEGER NOT NULL,
                        link_kind INTEGER NOT NULL DEFAULT 0,
                        relation INTEGER NOT NULL DEFAULT 0,
                        speed_mbps INTEGER NOT NULL DEFAULT 0,
                        mtu INTEGER NOT NULL DEFAULT 0,
                        operstate INTEGER NOT NULL DEFAULT 0,
                        carrier INTEGER NOT NULL DEFAULT 2,
                        UNIQUE (kind, agent_id, name)
                    );
                    CREATE TABLE epoch (
                        id INTEGER PRIMARY KEY,
                        boot_id BLOB NOT NULL,
                        ifindex INTEGER NOT NULL,
                        width INTEGER NOT NULL,
                        UNIQUE (boot_id, ifindex, width)
                    );
                    -- Each interface's first and last sample in counter order, and every step late data may split.
                    CREATE TABLE series_state (
                        series_id INTEGER PRIMARY KEY,
                        first BLOB NOT NULL,
                        last BLOB NOT NULL
                    );
                    -- Gap steps are not spread into the rollup rows while late data may still split them: reads
                    -- add their spread (`virtual` = 1) over [from_ts, to_ts), so a replayed spool rewrites one row
                    -- per batch instead of every bucket of the outage. Instant steps are spread (`virtual` = 0)
                    -- and kept here only to be found and taken out.
                    CREATE TABLE gap (
                        series_id INTEGER NOT NULL,
                        prev_order INTEGER NOT NULL,
                        prev_tick INTEGER NOT NULL,
                        next_order INTEGER NOT NULL,
                        next_tick INTEGER NOT NULL,
                        prev BLOB NOT NULL,
                        next BLOB NOT NULL,
                        scopes BLOB NOT NULL,
                        step BLOB NOT NULL,
                        virtual INTEGER NOT NULL,
                        from_ts INTEGER NOT NULL,
                        to_ts INTEGER NOT NULL,
                        revision INTEGER NOT NULL,
                        PRIMARY KEY (series_id, prev_order, prev_tick)
                    ) WITHOUT ROWID;
                    CREATE INDEX gap_by_time ON gap (to_ts) WHERE virtual = 1;
                    -- Raw samples, one row per batch in arrival order (appends: one row per batch rather than per
                    -- interface keeps a commit from touching a page per interface), each interface section as a
                    -- series, an epoch, its first tick and a SeriesChunk (timestamps as the agent sent them; shift:
                    -- what the clock check moved them by).
                    CREATE TABLE raw (
                        id INTEGER PRIMARY KEY,
                        agent_id INTEGER NOT NULL,
                        ord INTEGER NOT NULL,
                        shift INTEGER NOT NULL,
                        interval INTEGER NOT NULL,
                        heartbeat INTEGER NOT NULL,
                        first_ts INTEGER NOT NULL,
                        last_ts INTEGER NOT NULL,
                        data BLOB NOT NULL
                    );
                    CREATE INDEX raw_by_agent ON raw (agent_id, ord);
                    CREATE INDEX raw_by_time ON raw (last_ts);
                    -- Link facts, one row per change.
                    CREATE TABLE link_state (
                        series_id INTEGER NOT NULL,
                        ts INTEGER NOT NULL,
                        speed_mbps INTEGER NOT NULL,
                        operstate INTEGER NOT NULL,
                        carrier INTEGER NOT NULL,
                        mtu INTEGER NOT NULL,
                        link_kind INTEGER NOT NULL,
                        relation INTEGER NOT NULL,
                        PRIMARY KEY (series_id, ts)
                    ) WITHOUT ROWID;
                    CREATE TABLE membership (
                        agent_id INTEGER NOT NULL,
                        key TEXT NOT NULL,
                        value TEXT NOT NULL,
                        from_ts INTEGER NOT NULL,
                        to_ts INTEGER,
                        PRIMARY KEY (agent_id, key, value, from_ts)
                    ) WITHOUT ROWID;
                    CREATE TABLE anomaly (
                        id INTEGER PRIMARY KEY,
                        series_id INTEGER NOT NULL,
                        ts INTEGER NOT NULL,
                        kind TEXT NOT NULL,
                        detail TEXT NOT NULL,
                        revision INTEGER NOT NULL
                    );
                    CREATE INDEX anomaly_by_time ON anomaly (ts);
                    -- 95th-percentile bills: the open ones kept current as intervals end (with the tracker of their
                    -- largest rates; in bill_tracker since v2-bill-trackers), the issued ones frozen; late changes to
                    -- an issued bill are adjustments.
                    CREATE TABLE bill (
                        series_id INTEGER NOT NULL,
                        period_from INTEGER NOT NULL,
                        period_to INTEGER NOT NULL,
                        method TEXT NOT NULL,
                        intervals INTEGER NOT NULL,
                        missing INTEGER NOT NULL,
                        p_in INTEGER,
                        p_out INTEGER,
                        p_sum INTEGER,
                        revision INTEGER NOT NULL,
                        as_of INTEGER NOT NULL,
                        issued_at INTEGER,
                        tracker BLOB,
                        PRIMARY KEY (series_id, period_from)
                    ) WITHOUT ROWID;
                    CREATE TABLE bill_adjustment (
                        series_id INTEGER NOT NULL,
                        period_from INTEGER NOT NULL,
                        found_at INTEGER NOT NULL,
                        method TEXT NOT NULL,
                        intervals INTEGER NOT NULL,
                        missing INTEGER NOT NULL,
                        p_in INTEGER,
                        p_out INTEGER,
                        p_sum INTEGER,
                        revision INTEGER NOT NULL,
                        PRIMARY KEY (series_id, period_from, found_at)
                    ) WITHOUT ROWID;
                    -- 5-minute buckets that changed after billing had taken them in.
                    CREATE TABLE bill_dirty (
                        series_id INTEGER NOT NULL,
                        start INTEGER NOT NULL,
                        PRIMARY KEY (series_id, start)
                    ) WITHOUT ROWID;
                    CREATE TABLE meta (
                        key TEXT PRIMARY KEY,
                        value INTEGER NOT NULL
                    );
                    INSERT INTO meta (key, value) VALUES ('revision', 0), ('batches', 0), ('values', 0),
                        ('bill_cursor', 0);
                    INSERT INTO meta (key, value) SELECT 'batches', COUNT(*) FROM batch_v1 WHERE 1
                        ON CONFLICT (key) DO UPDATE SET value = excluded.value;
                    INSERT INTO meta (key, value) SELECT 'values', COALESCE(SUM(value_count), 0) FROM batch_v1 WHERE 1
                        ON CONFLICT (key) DO UPDATE SET value = excluded.value;
                    """)
        }
        // An open bill's tracker (its period's largest rates, up to 8 KiB) in a table of its own: kept inline it
        // made every bill row span overflow pages, and listing 10,000 bills read 90 MB.
        migrator.registerMigration("v2-bill-trackers") { db in
            try db.execute(
                sql: """
                    CREATE TABLE bill_tracker (
                        series_id INTEGER NOT NULL,
                        period_from INTEGER NOT NULL,
                        tracker BLOB NOT NULL,
                        PRIMARY KEY (series_id, period_from)
                    ) WITHOUT ROWID;
                    INSERT INTO bill_tracker (series_id, period_from, tracker)
                        SELECT series_id, period_from, tracker FROM bill WHERE tracker IS NOT NULL;
                    ALTER TABLE bill DROP COLUMN tracker;
                    """)
        }
        // Alerts (docs/alerts.md): instances that are pending or firing, their history, silences, and what the
        // notifier has told each receiver, with the notifications not yet delivered.
        migrator.registerMigration("v3-alerts") { db in
            try db.execute(
                sql: """
                    CREATE TABLE alert_instance (
                        rule TEXT NOT NULL,
                        fingerprint TEXT NOT NULL,
                        series_id INTEGER NOT NULL,
                        labels TEXT NOT NULL,
                        annotations TEXT NOT NULL,
                        status TEXT NOT NULL,
                        active_since INTEGER NOT NULL,
                        fired_at INTEGER,
                        clear_since INTEGER,
                        value REAL,
                        evaluated_at INTEGER NOT NULL,
                        rule_digest TEXT NOT NULL,
                        PRIMARY KEY (rule, fingerprint)
                    ) WITHOUT ROWID;
                    CREATE TABLE alert_event (
                        id INTEGER PRIMARY KEY,
                        at INTEGER NOT NULL,
                        rule TEXT NOT NULL,
                        fingerprint TEXT NOT NULL,
                        series_id INTEGER NOT NULL,
                        status TEXT NOT NULL,
                        value REAL,
                        labels TEXT NOT NULL,
                        annotations TEXT NOT NULL,
                        starts_at INTEGER NOT NULL,
                        ends_at INTEGER,
                        chart TEXT
                    );
                    CREATE INDEX alert_event_at ON alert_event (at);
                    CREATE TABLE alert_silence (
                        id TEXT PRIMARY KEY,
                        matchers TEXT NOT NULL,
                        starts_at INTEGER NOT NULL,
                        ends_at INTEGER NOT NULL,
                        created_by TEXT NOT NULL,
                        comment TEXT NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE notification_group (
                        receiver TEXT NOT NULL,
                        key TEXT NOT NULL,
                        labels TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        notified_at INTEGER,
                        notified_firing TEXT NOT NULL,
                        PRIMARY KEY (receiver, key)
                    ) WITHOUT ROWID;
                    CREATE TABLE notification (
                        id INTEGER PRIMARY KEY,
                        receiver TEXT NOT NULL,
                        group_key TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        body BLOB NOT NULL,
                        attempts INTEGER NOT NULL,
                        next_attempt INTEGER NOT NULL,
                        last_error TEXT
                    );
                    """)
        }
        // What changed in a 5-minute interval since billing took it in, so a pass swaps the interval's rates in an
        // open bill instead of reading the bill's whole period again (SQLiteStore+Bills.swift): the bytes and
        // covered time added since (`unknown` counts changes that cannot be told so, a virtual gap coming or going),
        // and the revision of the last change. Rows from before are kept as unknown.
        migrator.registerMigration("v4-bill-changes") { db in
            try db.execute(
                sql: """
                    CREATE TABLE bill_change (
                        series_id INTEGER NOT NULL,
                        start INTEGER NOT NULL,
                        rx INTEGER NOT NULL,
                        tx INTEGER NOT NULL,
                        covered INTEGER NOT NULL,
                        unknown INTEGER NOT NULL,
                        revision INTEGER NOT NULL,
                        PRIMARY KEY (series_id, start)
                    ) WITHOUT ROWID;
                    INSERT INTO bill_change (series_id, start, rx, tx, covered, unknown, revision)
                        SELECT series_id, start, 0, 0, 0, 1, 0 FROM bill_dirty;
                    DROP TABLE bill_dirty;
                    INSERT INTO meta (key, value) SELECT 'bill_mark', value FROM meta WHERE key = 'bill_cursor';
                    """)
        }
        // Remote write (SQLiteStore+Forwarding.swift): what each interface series has sent, the cursor (every bucket
        // before it forwarded), and late changes to buckets of the forwarded level before the forward mark (raised
        // before each pass reads, like bill_mark), kept as bill_change keeps billing's.
        migrator.registerMigration("v5-remote-write") { db in
            try db.execute(
                sql: """
                    CREATE TABLE forward_state (
                        series_id INTEGER PRIMARY KEY,
                        counted_rx INTEGER NOT NULL,
                        counted_tx INTEGER NOT NULL,
                        sent_rx INTEGER NOT NULL,
                        sent_tx INTEGER NOT NULL
                    );
                    CREATE TABLE forward_change (
                        series_id INTEGER NOT NULL,
                        start INTEGER NOT NULL,
                        rx INTEGER NOT NULL,
                        tx INTEGER NOT NULL,
                        unknown INTEGER NOT NULL,
                        revision INTEGER NOT NULL,
                        PRIMARY KEY (series_id, start)
                    ) WITHOUT ROWID;
                    INSERT INTO meta (key, value) VALUES ('forward_mark', 0), ('forward_cursor', 0);
                    """)
        }
        // Steps whose time cannot be placed (`docs/windows.md`, "Time that cannot be placed"): their counts per series
        // and UTC day of receipt. The gap table holds them (virtual = 0, from_ts = to_ts = when received) so late data
        // can split them; those rows and instant steps are deleted `late_data` after (the settled-time index).
        migrator.registerMigration("v6-unplaced") { db in
            try db.execute(
                sql: """
                    CREATE TABLE unplaced (
                        series_id INTEGER NOT NULL,
                        day INTEGER NOT NULL,
                        \(TrafficCounter.allCases.map { "\($0.name) INTEGER NOT NULL" }.joined(separator: ",\n"))
                        ,steps INTEGER NOT NULL,
                        revision INTEGER NOT NULL,
                        PRIMARY KEY (series_id, day)
                    ) WITHOUT ROWID;
                    CREATE INDEX gap_settled_by_time ON gap (to_ts) WHERE virtual = 0;
                    INSERT INTO meta (key, value) VALUES ('unplaced_steps', 0);
                    """)
        }
        // Steps whose 32-bit counters could have wrapped more than once (`docs/windows.md`, "Counting a step"): a
        // column of every rollup table made before it (those made after have it from ``BucketColumns/all``).
        migrator.registerMigration("v7-ambiguous") { db in
            let tables = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'rollup_*'")
            for table in tables where try !db.columns(in: table).contains(where: { $0.name == "ambiguous" }) {
                try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN ambiguous INTEGER NOT NULL DEFAULT 0")
            }
        }
        // The time of implausible steps in each bucket, so bills can say which intervals hold one
        // (`docs/windows.md`, "95th-percentile billing"); what billing records of late changes, the same and the
        // measured time, so a swapped interval's class is known.
        migrator.registerMigration("v8-flagged") { db in
            let tables = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'rollup_*'")
            for table in tables where try !db.columns(in: table).contains(where: { $0.name == "flagged_ms" }) {
                try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN flagged_ms INTEGER NOT NULL DEFAULT 0")
            }
            try db.execute(sql: "ALTER TABLE bill_change ADD COLUMN measured INTEGER NOT NULL DEFAULT 0")
            try db.execute(sql: "ALTER TABLE bill_change ADD COLUMN flagged INTEGER NOT NULL DEFAULT 0")
            // What each bill rests on: its intervals by class (NULL for bills made before), and its rank convention.
            for table in ["bill", "bill_adjustment"] {
                try db.execute(
                    sql: """
                        ALTER TABLE \(table) ADD COLUMN measured INTEGER;
                        ALTER TABLE \(table) ADD COLUMN interpolated INTEGER;
                        ALTER TABLE \(table) ADD COLUMN flagged INTEGER;
                        ALTER TABLE \(table) ADD COLUMN rank_rule TEXT NOT NULL DEFAULT 'round'
                        """)
            }
        }
        // Each bucket's member time and capacity (`docs/windows.md`, "Rollups"), so a scope's past coverage and
        // utilisation rest on the members its steps had. Buckets written before have no record of their outages'
        // time or their links' speeds: their member time is taken as the time they cover (coverage 100 % where
        // they have data) and their capacity as unknown, as docs/operations.md says for the upgrade.
        migrator.registerMigration("v9-members") { db in
            let tables = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'rollup_*'")
            for table in tables where try !db.columns(in: table).contains(where: { $0.name == "member_ms" }) {
                try db.execute(
                    sql: """
                        ALTER TABLE \(table) ADD COLUMN member_ms INTEGER NOT NULL DEFAULT 0;
                        ALTER TABLE \(table) ADD COLUMN capacity INTEGER NOT NULL DEFAULT 0;
                        UPDATE \(table) SET member_ms = measured_ms + interpolated_ms
                        """)
            }
        }
        // Settings the store keeps as text: the time zone its bills are cut in (`[daemon] time_zone`), so that a
        // daemon whose default zone changes (the system's, since 0.2) goes on cutting the periods it already billed
        // in the zone it cut them in. A store that billed before says UTC, the default it billed in.
        migrator.registerMigration("v10-settings") { db in
            try db.execute(
                sql: """
                    CREATE TABLE setting (
                        key TEXT PRIMARY KEY,
                        value TEXT NOT NULL
                    );
                    INSERT INTO setting (key, value) SELECT 'time_zone', 'UTC' WHERE EXISTS (SELECT 1 FROM bill)
                    """)
        }
        return migrator
    }

    static func createRollupTable(_ level: RollupLevel, in db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(BucketColumns.table(level)) (
                    series_id INTEGER NOT NULL,
                    start INTEGER NOT NULL,
                    \(BucketColumns.all.map { "\($0) INTEGER NOT NULL" }.joined(separator: ",\n    "))
                    ,PRIMARY KEY (series_id, start)
                ) WITHOUT ROWID
                """)
    }
}
