import JSON
import Testing

private func members(_ text: String) -> [(key: String, kind: JSONSyntax.Kind, value: String)]? {
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBufferPointer { buffer in
        var found: [(key: String, kind: JSONSyntax.Kind, value: String)] = []
        let valid = JSONSyntax.scanObject(buffer) { key, kind, value in
            found.append(
                (
                    String(decoding: buffer[key], as: UTF8.self), kind,
                    String(decoding: buffer[value], as: UTF8.self)
                ))
        }
        return valid ? found : nil
    }
}

private func parse(_ text: String) -> Result<JSONValue, JSONSyntaxError> {
    do throws(JSONSyntaxError) {
        return .success(try JSONParser.parse(Array(text.utf8)))
    } catch {
        return .failure(error)
    }
}

private func parseError(_ text: String) -> JSONSyntaxError? {
    if case .failure(let error) = parse(text) { return error }
    return nil
}

private func decodedString(_ json: String) -> String? {
    let bytes = Array(json.utf8)
    return bytes.withUnsafeBufferPointer { JSONSyntax.string($0, 0..<$0.count) }
}

@Suite struct JSONScannerTests {
    @Test func reportsTopLevelMembersWithKindsAndRanges() throws {
        let found = try #require(
            members(#" {"class":"TPV", "n":-1.5e3, "ok":true, "x":null, "o":{"a":[1,{"b":2}]}, "l":[]} "#))
        #expect(found.map(\.key) == ["class", "n", "ok", "x", "o", "l"])
        #expect(found.map(\.kind) == [.string, .number, .bool, .null, .object, .array])
        #expect(found.map(\.value) == [#""TPV""#, "-1.5e3", "true", "null", #"{"a":[1,{"b":2}]}"#, "[]"])
    }

    @Test(arguments: ["0", "-0", "10", "0.5", "-0.5e-3", "1E+2", "123456789012345678901234567890"])
    func acceptsRFC8259Numbers(number: String) {
        #expect(members(#"{"n":"# + number + "}") != nil)
        #expect(parseError(#"{"n":"# + number + "}") == nil)
    }

    /// One grammar: the flat scan and the tree parser refuse the same numbers (RFC 8259 has no leading zeros).
    @Test(arguments: ["01", "-01", "00", "1.", ".5", "+1", "1e", "1e+", "-", "0x10", "NaN", "Infinity"])
    func refusesWhatRFC8259Refuses(number: String) {
        #expect(members(#"{"n":"# + number + "}") == nil)
        #expect(parseError(#"{"n":"# + number + "}") != nil)
    }

    @Test func leadingZeroSaysSo() {
        #expect(parseError(#"{"n": 01}"#)?.message == "a number must not start with 0")
        #expect(parseError(#"{"n": 01}"#)?.column == 7)
    }

    @Test(arguments: [
        "", "{", "}", "[]", #"{"a":1,}"#, #"{"a" 1}"#, #"{"a":1 "b":2}"#, #"{a:1}"#, #"{"a":tru}"#,
        #"{"a":"x\q"}"#, #"{"a":"\u12G4"}"#, "{\"a\":\"tab\there\"}", #"{"a":1} x"#, #"{"a":[1,]}"#,
        #"{"a":"open}"#, "{\"a\":1}\u{0}",
    ])
    func refusesInvalidObjects(text: String) {
        #expect(members(text) == nil)
    }

    @Test func scansTopLevelArrayElements() {
        let bytes = Array(#"["a", 1, ["b"], "c\n"]"#.utf8)
        var kinds: [JSONSyntax.Kind] = []
        var strings: [String] = []
        let valid = bytes.withUnsafeBufferPointer { buffer in
            JSONSyntax.scanArray(buffer) { kind, range in
                kinds.append(kind)
                if kind == .string, let text = JSONSyntax.string(buffer, range) { strings.append(text) }
            }
        }
        #expect(valid)
        #expect(kinds == [.string, .number, .array, .string])
        #expect(strings == ["a", "c\n"])
        #expect(Array(#"{"a":1}"#.utf8).withUnsafeBufferPointer { JSONSyntax.scanArray($0) { _, _ in } } == false)
    }

    @Test func nestingIsBounded() {
        func nested(_ depth: Int) -> String {
            #"{"a":"# + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}"
        }
        #expect(members(nested(63)) != nil)
        #expect(members(nested(64)) == nil)
        #expect(members(#"{"a":"# + String(repeating: "[", count: 100_000)) == nil)
        // Profiles are shallower: the tree parser stops at 32 levels.
        #expect(parseError(nested(32)) == nil)
        #expect(parseError(nested(33))?.message == "nested too deeply")
    }
}

@Suite struct JSONStringTests {
    @Test func decodesEveryEscape() {
        #expect(decodedString(#""a\"b\\c\/d\be\ff\ng\rh\ti""#) == "a\"b\\c/d\u{8}e\u{C}f\ng\rh\ti")
        #expect(decodedString(#""\u00e9\u20AC""#) == "é€")
        #expect(decodedString(#""plain é""#) == "plain é")
    }

    @Test func decodesSurrogatePairs() {
        #expect(decodedString(#""\ud83d\ude00""#) == "😀")
        #expect(decodedString(#""x\uD834\uDD1Ey""#) == "x𝄞y")
    }

    @Test(arguments: [#""\ud83d""#, #""\ude00""#, #""\ud83dx""#, #""\ud83d\n""#, #""\ud83d\ud83d""#])
    func refusesUnpairedSurrogates(json: String) {
        #expect(decodedString(json) == nil)
        #expect(parseError(#"{"s":"# + json + "}")?.message == "a \\u escape has an unpaired surrogate")
    }

    @Test func anUnpairedSurrogateIsReportedAfterItsString() {
        #expect(parseError(#"{"s":"\ud83d"}"#)?.column == 14)
    }

    @Test func refusesBytesThatAreNotUTF8() {
        var bytes = Array(#"{"s":"x"#.utf8)
        bytes += [0xFF, UInt8(ascii: "\""), UInt8(ascii: "}")]
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(bytes) }
    }
}

@Suite struct JSONValueTests {
    @Test func keepsMemberOrderAndKeyPaths() throws {
        let value = try JSONParser.parse(Array(#"{"z":1,"a":{"m":[true,null,"s"],"b":2.5}}"#.utf8))
        guard case .object(let top) = value else {
            Issue.record("not an object")
            return
        }
        #expect(top.map(\.key) == ["z", "a"])
        guard case .number(let b)? = value.value(at: "a.b") else {
            Issue.record("a.b is not a number")
            return
        }
        #expect(b == 2.5)
        #expect(value.value(at: "a.m")?.typeName == "a list")
        #expect(value.value(at: "a.missing") == nil)
        #expect(value.value(at: "z.deeper") == nil)
    }

    @Test func acceptsAByteOrderMark() {
        #expect(throws: Never.self) { try JSONParser.parse([0xEF, 0xBB, 0xBF] + Array("{}".utf8)) }
    }

    @Test func errorsSayWhereAndWhat() {
        let trailing = parseError("{\n  \"a\": 1,\n}")
        #expect(trailing?.line == 3)
        #expect(trailing?.column == 1)
        #expect(trailing?.message == "expected a key in double quotes, found '}' (JSON allows no trailing comma)")
        #expect(parseError(#"{"a": 1, "a": 2}"#)?.message == #"the key "a" appears twice in the same object"#)
        #expect(parseError(#"{"a": 1, "a": 2}"#)?.column == 10)
        #expect(parseError(#"{"a" 1}"#)?.message == #"expected ':' after the key "a", found '1'"#)
        #expect(
            parseError(#"{"a": 1 // no"#)?.message
                == #"expected ',' or '}' after the value of "a", found '/' (JSON has no comments)"#)
        #expect(parseError("[1, 2,]")?.message == "expected a value, found ']' (JSON allows no trailing comma)")
        #expect(parseError(#"{"a": "\x"}"#)?.message == #"'\x' is not a JSON escape"#)
        #expect(parseError(#"{"a": 1e999}"#)?.message == "a number too large to represent")
        #expect(parseError("  ")?.message == "the file is empty: expected a JSON object")
        #expect(parseError(#"{"a": 1} 2"#)?.message == "unexpected text after the end of the JSON value")
        #expect(parseError("{\"é\": x}")?.column == 7)
    }
}

@Suite struct JSONWriterTests {
    @Test func escapesQuotesBackslashesAndControlCharacters() {
        #expect(
            JSONWriter.quoted("a\"b\\c\nd\re\tf\u{1}g\u{1F}h/é😀") == #""a\"b\\c\nd\re\tf\u0001g\u001fh/é😀""#)
    }

    @Test(arguments: ["", "plain", "a\"b\\c\nd\u{0}\u{7F}", "é€😀𝄞", "\u{1}\u{8}\u{C}"])
    func quotedStringsReadBack(text: String) {
        #expect(decodedString(JSONWriter.quoted(text)) == text)
    }

    @Test func numbers() {
        #expect(JSONWriter.numberText(120) == "120")
        #expect(JSONWriter.numberText(-3) == "-3")
        #expect(JSONWriter.numberText(0.0235) == "0.0235")
        #expect(JSONWriter.numberText(1e-5) == "1e-05")
        #expect(JSONWriter.numberText(1e20) == "1e+20")
        var bytes: [UInt8] = []
        JSONWriter.appendNumber(120, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "120.0")
    }

    @Test func compactObjectsLeaveOutWhatIsUnknown() {
        var object = JSONObject()
        object.add("s", string: "x\"")
        object.add("missing", string: nil)
        object.add("n", number: 1.5)
        object.add("nan", number: .nan)
        object.add("i", integer: 7)
        object.add(dynamicKey: "dyn\n", number: 2)
        var inner = JSONObject()
        inner.add("a", integer: 1)
        object.add("o", json: inner.closed)
        #expect(object.line == #"{"s":"x\"","n":1.5,"i":7,"dyn\n":2.0,"o":{"a":1}}"# + "\n")
    }

    @Test func prettyTextRoundTrips() throws {
        let text = """
            {
              "name": "x\\ty",
              "list": [1, 2.5, "a", true, null],
              "empty": {},
              "nested": {
                "deep": [
                  {
                    "k": -0.001
                  }
                ]
              }
            }

            """
        let value = try JSONParser.parse(Array(text.utf8))
        #expect(JSONWriter.text(value) == text)
        #expect(JSONWriter.text(try JSONParser.parse(Array(JSONWriter.text(value).utf8))) == text)
    }
}
