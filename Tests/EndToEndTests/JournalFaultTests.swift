import Foundation
import Testing

extension EndToEnd {
    /// Deaths of the daemon between acknowledging a batch and applying it, made to happen where they matter by fault
    /// points of the debug build (`NETPULSE_TEST_FAULT`), not by timing.
    @Suite(.serialized) struct JournalFaultTests {
        /// Killed right after a journal commit, with its batches acknowledged and not applied to the store: the next
        /// start applies them, and every tick is stored once.
        @Test(.timeLimit(.minutes(2)))
        func aDaemonKilledBetweenItsJournalAndItsStoreAppliesWhatItAcknowledged() throws {
            let fleet = try Fleet()
            try fleet.startDaemon(environment: ["NETPULSE_TEST_FAULT": "kill-after-journal-6"])
            let config = try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "300ms", include: #"["lo"]"#)
            let agent = try fleet.startAgent("agent-1", config: config)
            try eventually("the daemon killed itself after its sixth journal commit", timeout: 30) {
                !fleet.daemon!.isRunning
            }
            // What it acknowledged is in its journal and nowhere else.
            let show = try run([Build.cli, "journal", "show", "--store", fleet.storePath])
            #expect(!show.contains(": 0 entries waiting"), "\(show)")
            try fleet.startDaemon()
            try eventually("the journal applied", timeout: 30) {
                try run([Build.cli, "journal", "show", "--store", fleet.storePath]).contains(": 0 entries waiting")
            }
            try fleet.stopAndCheckEveryTickStoredOnce(agent, config: config, atLeast: 10)
        }

        /// A batch whose applying traps (a build-time fault point on its sequence number, as a bug in counting would)
        /// kills the daemon; started again it dies on the same journal entry; the third start sets that entry aside,
        /// says so, and goes on storing what follows. Before, it died at every start: a crash loop until systemd gave
        /// up, with every agent's batches behind it.
        @Test(.timeLimit(.minutes(2)))
        func aBatchThatKillsTheDaemonTwiceIsSetAsideAndTheRestStored() throws {
            let fleet = try Fleet()
            // Without Swift's backtracer, which takes 20-30 s on a busy machine to symbolicate a debug build's trap.
            let fault = ["NETPULSE_TEST_FAULT": "trap-applying-sequence-5", "SWIFT_BACKTRACE": "enable=no"]
            try fleet.startDaemon(environment: fault)
            let config = try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "300ms", include: #"["lo"]"#)
            let agent = try fleet.startAgent("agent-1", config: config)
            try eventually("the daemon traps applying batch 5", timeout: 30) { !fleet.daemon!.isRunning }
            // Started again as systemd would (the fault still there, as a bug would be): it dies on the same entry.
            try fleet.startDaemon(environment: fault, waitUntilListening: false)
            try eventually("it dies again", timeout: 30) { !fleet.daemon!.isRunning }
            #expect(fleet.daemon!.output.contains("the last run stopped while applying batch 5"))
            try fleet.startDaemon(environment: fault)
            try eventually("the entry is set aside", timeout: 30) {
                fleet.daemon!.output.contains("stopped twice while applying batch 5")
            }
            let storedBefore = try fleet.samples("agent-1", "lo").count
            try eventually("batches after it are stored", timeout: 30) {
                try fleet.samples("agent-1", "lo").count > storedBefore + 10
            }
            #expect(fleet.daemon!.isRunning)
            let show = try run([Build.cli, "journal", "show", "--store", fleet.storePath])
            #expect(show.contains("1 set aside") && show.contains("stopped twice while applying it"), "\(show)")
            let entry = try run([Build.cli, "journal", "show", "--store", fleet.storePath, "--format", "json"])
            let parsed = try JSONSerialization.jsonObject(with: Data(entry.utf8)) as? [String: Any]
            let aside = (parsed?["set_aside"] as? [[String: Any]])?.first
            #expect((aside?["sequence"] as? Int) == 5 && (aside?["agent"] as? String) == "agent-1", "\(entry)")
            agent.stop()
        }
    }
}
