import ArgumentParser
import StaffcastClient

/// `--ca-file`: how a client command trusts an https:// (wss://) server; the same flag and
/// environment for `join` as for the commands that take `ClientOptions`.
struct TrustOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("""
        PEM file of the CA that signed an https:// server's certificate, for a private or self-signed \
        CA (env STAFFCAST_CA_FILE; default: the system's trusted CAs).
        """, valueName: "file"))
    var caFile: String?

    /// --ca-file, else $STAFFCAST_CA_FILE, else the system's store.
    var trust: TLSTrust { TLSTrust(caFile: caFile ?? environment("STAFFCAST_CA_FILE")) }
}
