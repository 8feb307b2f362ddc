import JSON

// What the two table-driven config files share: a profile (Sources/Lodestar/Profiles/ProfileSchema.swift) and
// `lodestar run`'s config (Sources/Daemon/DaemonConfigurationSchema.swift) each declare their keys once, as a
// list of dotted key paths; these pieces turn such a list into the file's tree of objects, walk a document over
// it (`ConfigurationTreeReader`: each file words its own problems) and write one from it (`jsonValue`), split
// an object's members into known and unknown ones (naming the known key nearest a typo: the one "did you mean"),
// and write the rows of the generated tables of docs/profiles.md and docs/config.md.

/// The keys of a schema as a tree of objects: members in the order of the key list, which is the order a
/// writer writes and a reader reports in.
package indirect enum ConfigurationTree<Key> {
    case key(Key)
    case object(path: String, members: [(name: String, node: ConfigurationTree<Key>)])

    /// The tree of `keys`, each placed by its dotted `path`.
    package init(_ keys: [Key], path: (Key) -> String) {
        self = .object(path: "", members: Self.members(of: "", keys.map { (path($0).split(separator: ".").map(String.init), $0) }))
    }

    /// The member names of an object, in order; empty for a key.
    package var memberNames: [String] {
        if case .object(_, let members) = self { return members.map(\.name) }
        return []
    }

    private static func members(of path: String, _ keys: [([String], Key)]) -> [(name: String, node: Self)] {
        var names: [String] = []
        var groups: [String: [([String], Key)]] = [:]
        for (components, key) in keys {
            guard let head = components.first else { continue }
            if groups[head] == nil { names.append(head) }
            groups[head, default: []].append((Array(components.dropFirst()), key))
        }
        return names.map { name in
            let group = groups[name] ?? []
            let memberPath = ConfigurationTree.join(path, name)
            if group.count == 1, let (rest, key) = group.first, rest.isEmpty { return (name, .key(key)) }
            return (name, .object(path: memberPath, members: members(of: memberPath, group)))
        }
    }

    /// `parent.key`, or `key` at the top.
    package static func join(_ parent: String, _ key: String) -> String { parent.isEmpty ? key : "\(parent).\(key)" }
}

extension ConfigurationTree {
    /// The document of `root` as a file writes it: every key's `value`, in the tree's order; an optional object
    /// that is off is null. The one writer of a profile (`jsonText`) and of `lodestar run`'s config (`config show`).
    package func jsonValue<Root>(
        of root: Root, optionalObjects: [ConfigurationOptionalObject<Root>], value: (Key, Root) -> JSONValue
    ) -> JSONValue {
        switch self {
        case .key(let key): return value(key, root)
        case .object(let path, let members):
            if let object = optionalObjects.first(where: { $0.path == path }), !object.isOn(root) { return .null }
            return .object(members.map { ($0.name, $0.node.jsonValue(of: root, optionalObjects: optionalObjects, value: value)) })
        }
    }
}

/// A reader of one kind of file, at each place of the walk `read(_:_:at:optionalObjects:into:)` makes over a
/// document: the walk is the same for a profile and for `lodestar run`'s config, and each words its own problems.
package protocol ConfigurationTreeReader {
    associatedtype Key
    associatedtype Root
    /// The members of the object at `path` that `keys` names, the others reported; nil (reported) when `value`
    /// is not an object.
    mutating func members(_ value: JSONValue, at path: String, keys: [String]) -> [String: JSONValue]?
    /// Reads one key the document gives; a bad value is reported and leaves the key as it was.
    mutating func read(_ key: Key, _ value: JSONValue, into root: inout Root)
    /// A key the document leaves out, which keeps its default unless it is required.
    mutating func missing(_ key: Key, at path: String)
    /// `value` for an optional object that is neither null (off) nor an object (on, its members read): what
    /// else the file allows (`true` for the defaults), or a problem.
    mutating func optional(
        _ object: ConfigurationOptionalObject<Root>, _ value: JSONValue, keys: [String], into root: inout Root)
}

extension ConfigurationTreeReader {
    /// Reads `value` as the object `node` into `root`: its unknown members first (in the document's order), then
    /// every known one, in the schema's order. An optional object is off when null, and an object turns it on
    /// with its defaults before its members are read.
    package mutating func read(
        _ node: ConfigurationTree<Key>, _ value: JSONValue, at path: String,
        optionalObjects: [ConfigurationOptionalObject<Root>], into root: inout Root
    ) {
        guard case .object(_, let schemaMembers) = node, let members = members(value, at: path, keys: node.memberNames)
        else { return }
        for (name, member) in schemaMembers {
            let memberPath = ConfigurationTree<Key>.join(path, name)
            guard let value = members[name] else {
                if case .key(let key) = member { missing(key, at: memberPath) }
                continue
            }
            switch member {
            case .key(let key): read(key, value, into: &root)
            case .object:
                if let object = optionalObjects.first(where: { $0.path == memberPath }) {
                    switch value {
                    case .null: object.setOff(&root)
                    case .object: object.setOn(&root)
                    default: optional(object, value, keys: member.memberNames, into: &root)
                    }
                    guard case .object = value else { continue }
                }
                read(member, value, at: memberPath, optionalObjects: optionalObjects, into: &root)
            }
        }
    }
}

/// An object's members checked against the names its schema allows.
package struct ConfigurationMembers {
    /// The known members by name.
    package var known: [String: JSONValue] = [:]
    /// The unknown names, in the document's order, each with the known name nearest it when one is close.
    package var unknown: [(name: String, suggestion: String?)] = []

    package init(_ members: [(key: String, value: JSONValue)], allowed names: [String]) {
        for (name, value) in members {
            if names.contains(name) {
                known[name] = value
            } else {
                unknown.append((name, Self.closest(to: name, in: names)))
            }
        }
    }

    /// "unknown key (did you mean 'host'?)", or "unknown key" when no known name is near.
    package static func unknownKey(_ suggestion: String?) -> String {
        "unknown key" + hint(suggestion)
    }

    /// " (did you mean 'usb'?)", or nothing: the one way both files word a suggestion.
    package static func hint(_ suggestion: String?) -> String {
        suggestion.map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// The known word nearest a mistyped one ("maximumage", "windw", "USB"), when it is at most two edits
    /// away, case ignored; the first of equally near ones.
    package static func closest(to word: String, in candidates: [String]) -> String? {
        let typed = Array(word.lowercased())
        var best: (word: String, edits: Int)?
        for candidate in candidates {
            let target = Array(candidate.lowercased())
            // Levenshtein distance, one row at a time.
            var row = Array(0...target.count)
            for (i, a) in typed.enumerated() {
                var next = [i + 1]
                for (j, b) in target.enumerated() {
                    next.append(Swift.min(row[j + 1] + 1, next[j] + 1, row[j] + (a == b ? 0 : 1)))
                }
                row = next
            }
            if row[target.count] <= 2, row[target.count] < best?.edits ?? .max { best = (candidate, row[target.count]) }
        }
        return best?.word
    }
}

/// A key whose value is one of an enumeration's names.
package struct ConfigurationChoice<Root> {
    package var names: [String]
    package var get: (Root) -> String
    /// False when `name` is none of `names`.
    package var set: (inout Root, String) -> Bool

    package init(names: [String], get: @escaping (Root) -> String, set: @escaping (inout Root, String) -> Bool) {
        self.names = names
        self.get = get
        self.set = set
    }

    /// The raw values of the enumeration at `path`.
    package init<Value: RawRepresentable & CaseIterable>(_ path: WritableKeyPath<Root, Value>)
    where Value.RawValue == String {
        self.init(
            names: Value.allCases.map(\.rawValue), get: { $0[keyPath: path].rawValue },
            set: { root, name in
                guard let value = Value(rawValue: name) else { return false }
                root[keyPath: path] = value
                return true
            })
    }
}

/// An object of a config file that may be off instead: a profile's `deferred` (null), an output of the daemon's
/// (null or false, or `true` for its defaults).
package struct ConfigurationOptionalObject<Root> {
    package var path: String
    /// What off means: "no deferral", "no store".
    package var offMeans: String
    package var meaning: String
    /// Whether `true` turns it on with its defaults; else only an object does.
    package var trueGivesDefaults: Bool
    package var isOn: (Root) -> Bool
    package var setOff: (inout Root) -> Void
    /// Makes it present with its defaults, before its members are read.
    package var setOn: (inout Root) -> Void

    package init(
        _ path: String, offMeans: String, trueGivesDefaults: Bool = false, meaning: String,
        isOn: @escaping (Root) -> Bool, setOff: @escaping (inout Root) -> Void, setOn: @escaping (inout Root) -> Void
    ) {
        (self.path, self.offMeans, self.meaning, self.trueGivesDefaults, self.isOn, self.setOff, self.setOn)
            = (path, offMeans, meaning, trueGivesDefaults, isOn, setOff, setOn)
    }
}

/// The cells of the generated tables of keys.
package enum ConfigurationMarkdown {
    /// `| a | b |`, an empty cell written `—`.
    package static func row(_ cells: [String]) -> String {
        "| " + cells.map { $0.isEmpty ? "—" : $0 }.joined(separator: " | ") + " |"
    }

    /// A value as a table shows it: a number bare, anything else as its JSON in backticks.
    package static func value(_ value: JSONValue) -> String {
        switch value {
        case .number(let number): JSONWriter.numberText(number)
        default: "`" + JSONWriter.text(value).dropLast() + "`"
        }
    }

    /// `` `a`, `b` ``.
    package static func quoted(_ names: [String]) -> String { names.map { "`\($0)`" }.joined(separator: ", ") }
}
