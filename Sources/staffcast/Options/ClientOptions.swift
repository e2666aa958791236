import ArgumentParser
import Foundation
import StaffcastClient

/// How client commands (`send`, `watch`, `status`) find the server and their token.
struct ClientOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Server URL (env STAFFCAST_SERVER; default http://127.0.0.1:8080).", valueName: "url"))
    var server: String?

    @Option(name: .long, help: ArgumentHelp("API token (env STAFFCAST_TOKEN). Prefer --token-file: a command line is visible to other users.",
                                            valueName: "token"))
    var token: String?

    @Option(name: .long, help: ArgumentHelp("File holding the token, mode 0600 (default ~/.config/staffcast/token if present).",
                                            valueName: "file"))
    var tokenFile: String?

    @Option(name: .long, help: ArgumentHelp("""
        PEM file of the CA that signed an https:// server's certificate, for a private or self-signed \
        CA (env STAFFCAST_CA_FILE; default: the system's trusted CAs).
        """, valueName: "file"))
    var caFile: String?

    var serverURL: String {
        server ?? environment("STAFFCAST_SERVER")
            ?? "http://127.0.0.1:8080"
    }

    /// --token, else $STAFFCAST_TOKEN, else the token file; nil when there is none.
    func resolveToken(required: Bool = true) throws -> String? {
        if let token, !token.isEmpty { return token }
        if let env = environment("STAFFCAST_TOKEN") { return env }
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        let path = tokenFile ?? "\(home)/.config/staffcast/token"
        if FileManager.default.fileExists(atPath: path) {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
            guard mode & 0o077 == 0 else {
                throw CommandFailure("token file \(path) is readable by others (mode \(String(mode, radix: 8))); run chmod 600 \(path)")
            }
            let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty { return text }
        } else if tokenFile != nil {
            throw CommandFailure("token file \(path) does not exist")
        }
        if required { throw ClientError.missingToken }
        return nil
    }

    /// How https:// and wss:// servers are trusted: --ca-file, else $STAFFCAST_CA_FILE, else
    /// the system's store.
    var trust: TLSTrust { TLSTrust(caFile: caFile ?? environment("STAFFCAST_CA_FILE")) }

    /// The server's API; warns on stderr when the token would cross the network unencrypted.
    func api(required: Bool = true) throws -> APIClient {
        let api = try APIClient(server: serverURL, token: try resolveToken(required: required), trust: trust)
        if api.sendsTokenInClear {
            printError("""
                staffcast: warning: sending your token to \(api.server.host ?? "the server") over plain http:// (and ws://), \
                which anyone on the network path can read; use https:// (the server needs tls_cert and tls_key)
                """)
        }
        return api
    }
}
