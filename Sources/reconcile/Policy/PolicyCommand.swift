import ArgumentParser

/// `reconcile policy`: the rules of RECONCILE_POLICY_FILE that decide routine items (SPEC section 17).
struct PolicyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Check a policy file, and preview what the policies would decide on the current queue.",
        discussion: """
            RECONCILE_POLICY_FILE (YAML or JSON) holds named rules that decide open review items after every \
            run and every judgement of the notification receiver, in file order, the first rule that takes an \
            item deciding it, as the actor policy:<name> with the rule's note, exactly as a person would (one \
            event, one outbox row). An item a person claimed, or one over its rule's limits, is left to people. \
            docs/operations.md describes the format with worked examples.

            Exit codes: 0 done; 1 failed; 64 bad usage, or a policy file that does not validate.
            """,
        subcommands: [PolicyCheckCommand.self, PolicyPreviewCommand.self]
    )
}
