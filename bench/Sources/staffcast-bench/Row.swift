/// One line of the final table.
struct Row {
    var scenario: String
    var measured: String
    var target: String
    var met: Bool?
    var notes: String
}
