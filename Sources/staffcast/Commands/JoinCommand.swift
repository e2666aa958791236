import ArgumentParser
import Foundation
import StaffcastClient
import StaffcastCore

/// `staffcast join URL --name NAME`: redeems an invite link and saves the new token where
/// `staffcast watch` looks for it.
struct JoinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join an event with an invite link; saves your token for `staffcast watch`.",
        discussion: """
            The organiser gives you a link (or a QR code of it) like
            http://10.0.0.5:8080/join/CODE. Joining creates your profile with the name you
            give, and saves your new token in ~/.config/staffcast/token (mode 0600), the
            server in ~/.config/staffcast/server and the event in
            ~/.config/staffcast/event, so that a plain `staffcast watch` works right
            after. It speaks English or Turkish (--lang, else LC_ALL, LC_MESSAGES or
            LANG).

            Examples:
              staffcast join http://10.0.0.5:8080/join/3q2-7wEXAMPLEcodeAbCd --name \\
                "Sam (gate 3)"
              LANG=tr_TR.UTF-8 staffcast join URL --name "Ayşe"
            """)

    @Argument(help: "The join link from the organiser.") var url: String
    @Option(help: "Your name, as organisers see it in receipts.") var name: String
    @Option(help: ArgumentHelp("Save the token here instead (default ~/.config/staffcast/token).", valueName: "file"))
    var tokenFile: String?
    @Flag(help: "Replace a token already saved there.") var force = false
    @OptionGroup var tls: TrustOptions
    @OptionGroup var language: LanguageOption

    func run() throws {
        try reportingFailures {
            let t = try language.strings()
            guard let (base, code) = InviteURL.parse(url) else { throw CommandFailure(t.text(.joinNotURL, ["url": url])) }
            let path = tokenFile ?? ClientOptions.defaultTokenFile
            if !force, let existing = try? String(contentsOfFile: path, encoding: .utf8),
               !existing.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw CommandFailure(t.text(.joinTokenExists, ["path": path]))
            }
            let trust = tls.trust
            let api = try APIClient(server: base, token: nil, trust: trust)
            let body = WireJSON.encode(RedeemRequest(displayName: name))
            let response: APIClient.Response
            do {
                response = try api.raw("POST", "/v1/invites/\(code)/redeem", body: body, contentType: "application/json")
            } catch {
                throw CommandFailure(t.text(.joinUnreachable, ["server": base, "reason": "\(error)"]), status: ExitStatus.of(error))
            }
            let joined: Redemption
            switch response.status {
            case 201:
                guard let r = try? JSONDecoder().decode(Redemption.self, from: response.body) else {
                    throw CommandFailure(t.text(.joinFailed, ["reason": "the server's answer was not understood"]))
                }
                joined = r
            case 410: throw CommandFailure(t[.joinGone])
            case 404: throw CommandFailure(t[.joinNotFound])
            case 429: throw CommandFailure(t[.joinRateLimited])
            default:
                let message = ErrorBody.decode(response.body)?.message ?? "HTTP \(response.status)"
                throw CommandFailure(t.text(.joinFailed, ["reason": message]))
            }
            try SecretFile.write(joined.token + "\n", to: path)
            let event = joined.eventID.uuidString.lowercased()
            if tokenFile == nil {
                try? SecretFile.write(base + "\n", to: ClientOptions.defaultServerFile)
                try? SecretFile.write(event + "\n", to: EventOptions.defaultEventFile)
            }
            print(t.text(.joinJoined, ["name": name, "event": event, "level": t.name(joined.accessLevel)]))
            print(t.text(.joinSaved, ["path": path]))
            // Servers learn of a new token from the database within 2 s; wait for it so that
            // `watch` works at once.
            let mine = try APIClient(server: base, token: joined.token, trust: trust)
            ClientOptions.warnIfTokenInClear(mine)
            let deadline = Date().addingTimeInterval(6)
            var accepted = false
            while Date() < deadline {
                if let r = try? mine.raw("GET", "/v1/me/events"), r.status == 200 { accepted = true; break }
                usleep(200_000)
            }
            if !accepted { printError(t[.joinNotYetValid]) }
            print(t.text(.joinNext, ["server": base, "event": event]))
        }
    }
}

/// Writes a file only its owner can read (mode 0600, its folder 0700 when created).
enum SecretFile {
    static func write(_ text: String, to path: String) throws {
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty, !FileManager.default.fileExists(atPath: dir) {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CommandFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0 else { throw CommandFailure("cannot make \(path) private: \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw CommandFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
    }
}
