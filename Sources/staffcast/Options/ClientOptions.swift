import ArgumentParser
import Foundation
import StaffcastClient

/// How client commands (`send`, `watch`, `status`) find the server and their token.
struct ClientOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Server URL (env STAFFCAST_SERVER; default: the server `staffcast join` noted, else http://127.0.0.1:8080).", valueName: "url"))
    var server: String?

    @Option(name: .long, help: ArgumentHelp("API token (env STAFFCAST_TOKEN). Prefer --token-file: a command line is visible to other users.",
                                            valueName: "token"))
    var token: String?

    @Option(name: .long, help: ArgumentHelp("File holding the token, mode 0600 (default ~/.config/staffcast/token if present).",
                                            valueName: "file"))
    var tokenFile: String?

    @OptionGroup var tls: TrustOptions

    /// Where clients look for a token when none is given, and where `staffcast join` saves one.
    static var defaultTokenFile: String {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        return "\(home)/.config/staffcast/token"
    }

    /// Where `staffcast join` notes the server it joined, read when neither --server nor
    /// STAFFCAST_SERVER says.
    static var defaultServerFile: String {
        (defaultTokenFile as NSString).deletingLastPathComponent + "/server"
    }

    var serverURL: String {
        server ?? environment("STAFFCAST_SERVER")
            ?? (try? String(contentsOfFile: Self.defaultServerFile, encoding: .utf8))
                .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
            ?? "http://127.0.0.1:8080"
    }

    /// --token, else --token-file, else $STAFFCAST_TOKEN, else the default token file; nil when
    /// there is none. What is named on the command line wins over the environment: a staff
    /// member checking in with `--token-file sam.token` from an organiser's shell (where
    /// STAFFCAST_TOKEN is set) was checked in as the organiser.
    func resolveToken(required: Bool = true) throws -> String? {
        if let token, !token.isEmpty { return token }
        if let tokenFile { return try Self.readTokenFile(tokenFile, named: true) }
        if let env = environment("STAFFCAST_TOKEN") { return env }
        if let text = try Self.readTokenFile(Self.defaultTokenFile, named: false) { return text }
        if required { throw ClientError.missingToken }
        return nil
    }

    /// The token in `path`, refused when others may read it; nil when the file is absent or
    /// empty and was not `named` on the command line.
    private static func readTokenFile(_ path: String, named: Bool) throws -> String? {
        guard FileManager.default.fileExists(atPath: path) else {
            if named { throw CommandFailure("token file \(path) does not exist") }
            return nil
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
        guard mode & 0o077 == 0 else {
            throw CommandFailure("token file \(path) is readable by others (mode \(String(mode, radix: 8))); run chmod 600 \(path)")
        }
        let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty && named { throw CommandFailure("token file \(path) is empty") }
        return text.isEmpty ? nil : text
    }

    /// The server's API; warns on stderr when the token would cross the network unencrypted.
    func api(required: Bool = true) throws -> APIClient {
        let api = try APIClient(server: serverURL, token: try resolveToken(required: required), trust: tls.trust)
        Self.warnIfTokenInClear(api)
        return api
    }

    /// A warning on stderr when `api` would send its token over plain http:// to another machine.
    static func warnIfTokenInClear(_ api: APIClient) {
        guard api.sendsTokenInClear else { return }
        printError("""
            staffcast: warning: sending your token to \(api.server.host ?? "the server") over plain http:// (and ws://), \
            which anyone on the network path can read; use https:// (the server needs tls_cert and tls_key)
            """)
    }
}
