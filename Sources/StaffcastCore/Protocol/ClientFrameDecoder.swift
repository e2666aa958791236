import Foundation

/// Turns the bytes of one client text frame into a `ClientFrame`, or a `ClientFrameError`
/// whose sentence names the field at fault. Pure: no I/O, safe on any thread.
public enum ClientFrameDecoder {
    public static func decode(_ bytes: [UInt8]) -> Result<ClientFrame, ClientFrameError> {
        if bytes.count > Limits.maxFrameBytes {
            return .failure(ClientFrameError(ref: nil, error: StaffcastError(.tooLarge,
                "The frame is \(bytes.count) bytes; the limit is \(Limits.maxFrameBytes) bytes.")))
        }
        if let frame = decodePlain(bytes) { return .success(frame) }
        return decodeGeneral(bytes)
    }

    /// Any frame, through its Codable conformance (`ClientFrame+Codable`).
    static func decodeGeneral(_ bytes: [UInt8]) -> Result<ClientFrame, ClientFrameError> {
        do {
            return .success(try JSONDecoder().decode(ClientFrame.self, from: Data(bytes)))
        } catch let error as ClientFrameError {
            return .failure(error)
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty && startsArray(bytes) {
            return .failure(ClientFrameError(ref: nil, error: .invalid("The frame must be a JSON object with an \"op\" field.")))
        } catch {
            // Not JSON, or a bare string or number (JSON, but never a frame).
            return .failure(ClientFrameError(ref: nil, error: .invalid("The frame is not valid JSON; send one JSON object per text frame.")))
        }
    }

    private static func startsArray(_ bytes: [UInt8]) -> Bool {
        bytes.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 } == UInt8(ascii: "[")
    }
}
