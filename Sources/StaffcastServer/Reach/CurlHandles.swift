/// The libcurl handles of one delivery thread, one per destination host, so that deliveries to
/// a push service or a receiver reuse their connection. Confined to its thread (no lock); at
/// most `capacity` hosts are kept, the least recently used is let go first.
final class CurlHandles {
    private let timeout: Double
    private let caFile: String?
    private let capacity: Int
    private var handles: [String: CurlEasy] = [:]
    private var recent: [String] = []

    init(timeout: Double, caFile: String?, capacity: Int = 16) {
        self.timeout = timeout
        self.caFile = caFile
        self.capacity = max(1, capacity)
    }

    /// The handle for `host`, made when there is none.
    func handle(host: String) throws(CurlEasy.TransportError) -> CurlEasy {
        recent.removeAll { $0 == host }
        recent.append(host)
        if let h = handles[host] { return h }
        let h = try CurlEasy(timeout: timeout, caFile: caFile)
        handles[host] = h
        while handles.count > capacity, let oldest = recent.first {
            recent.removeFirst()
            handles[oldest] = nil
        }
        return h
    }

    /// Forgets `host`'s handle (after a failure: the next attempt starts a fresh connection).
    func discard(host: String) {
        handles[host] = nil
        recent.removeAll { $0 == host }
    }
}
