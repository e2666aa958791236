import Foundation

extension StaffcastServer {
    /// Checks `tls_cert` and `tls_key` as the server will use them: both or neither, both
    /// readable, and accepted by libwebsockets/OpenSSL (PEM, the key belongs to the certificate).
    /// Throws a sentence for a person; called by `start()` and by `serve --check-config`.
    public static func checkTLS(_ configuration: ServerConfiguration) throws(ServerError) {
        switch (configuration.tlsCertificate, configuration.tlsKey) {
        case (nil, nil):
            return
        case (_?, nil), (nil, _?):
            throw ServerError.tls("tls_cert and tls_key go together: set both (the certificate and its private key, PEM files) or neither")
        case (let certificate?, let key?):
            for (name, path) in [("tls_cert", certificate), ("tls_key", key)] {
                guard let handle = FileHandle(forReadingAtPath: path) else {
                    let reason = FileManager.default.fileExists(atPath: path) ? "not readable by this user" : "no such file"
                    throw ServerError.tls("cannot read \(name) \(path): \(reason)")
                }
                try? handle.close()
            }
            do {
                try LWSContext.checkTLS(configuration)
            } catch {
                throw ServerError.tls(error.description)
            }
        }
    }
}
