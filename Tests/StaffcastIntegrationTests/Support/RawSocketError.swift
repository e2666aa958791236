/// Why a raw socket operation failed, with what had arrived so far (for the failure message).
struct RawSocketError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
