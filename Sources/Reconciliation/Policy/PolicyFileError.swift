/// Why a policy file was refused: where (the file, the line), which key, and why. `reconcile
/// policy check` prints it and exits 64; a run or the notification receiver given such a file
/// (`RECONCILE_POLICY_FILE`) refuses to start with the same line.
public struct PolicyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file as it was named.
    public var file: String
    /// The line (from 1); nil when the file could not be read at all.
    public var line: Int?
    /// The key at fault as a path from the top (`rules[1].when.max_amount.CNY`); empty for the file.
    public var key: String
    /// What is wrong and, where it helps, what is expected.
    public var why: String

    public init(file: String, line: Int?, key: String, why: String) {
        self.file = file
        self.line = line
        self.key = key
        self.why = why
    }

    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        if !key.isEmpty { text += ": \(key)" }
        return text + ": " + why
    }
}
