import Testing

@testable import PulseQuery

/// Ranked panels put the highest value first and break ties by name, from lists already in name order.
@Suite struct ScopeMembersTests {
    @Test func highestFirstKeepsNameOrderOnTiesAndLeavesOutNoValue() {
        let names = ["a<b&c", "eth0", "eth1", "eth10", "eth2", "lo", "p\"q>"]
        let values: [String: Int64] = ["a<b&c": 5, "eth0": 7, "eth1": 5, "eth10": -1, "eth2": 7, "p\"q>": 5]
        let ranked = ScopeMembers.highestFirst(names, name: { $0 }) { values[$0] }
        #expect(ranked == ["eth0", "eth2", "a<b&c", "eth1", "p\"q>", "eth10"])
        // The same as sorting by value and then by name, compared name by name.
        let sorted = names.filter { values[$0] != nil }.sorted { a, b in
            values[a]! != values[b]! ? values[a]! > values[b]! : a < b
        }
        #expect(ranked == sorted)
        #expect(ScopeMembers.highestFirst([String](), name: { $0 }) { values[$0] }.isEmpty)
    }
}
