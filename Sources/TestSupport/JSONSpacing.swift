/// `json` as Python's json module writes it: a space after every `:` and `,` outside strings.
public func spacedJSON(_ json: String) -> String {
    var result = ""
    var inString = false
    var escaped = false
    for character in json {
        result.append(character)
        if inString {
            if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
        } else if character == "\"" {
            inString = true
        } else if character == ":" || character == "," {
            result.append(" ")
        }
    }
    return result
}
