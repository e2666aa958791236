import StaffcastCore

extension ServerConfiguration {
    /// The server's settings from the effective configuration (checked by `ConfigResolver`:
    /// every value here is in its key's range). The one place a key meets its field.
    /// The database keys (database_url, data_dir, log_*) are the command line's, not the server's.
    public init(_ settings: EffectiveConfiguration) {
        self.init()
        let s = settings
        if let listen = s.text(.listen), let (host, port) = ConfigKey.splitHostPort(listen) {
            self.host = host
            self.port = port
        }
        for (field, key) in Self.integerFields { self[keyPath: field] = s.integer(key) }
        for (field, key) in Self.numberFields { self[keyPath: field] = s.number(key) }
        for (field, key) in Self.textFields { self[keyPath: field] = s.text(key) }
        eventLoop = s.text(.eventLoop).flatMap(EventLoopKind.init(rawValue:)) ?? eventLoop
        if let v = s.text(.nodeID) { nodeID = v }
        metricsRequireToken = s.flag(.metricsRequireToken)
        reach.allowPrivateHosts = s.flag(.pushAllowPrivateHosts)
        localFanout = s.flag(.localFanout)
        let minutes = s.integer(.escalateAfterMinutes)
        escalation.emergencyDefaultMinutes = minutes == 0 ? nil : minutes
        escalation.intervalSecondsOverride = s.value(.escalationIntervalSeconds)?.integer
        reach.pushContact = s.text(.pushContact) ?? reach.pushContact
    }

    // Computed, not stored: a key path is not Sendable, so Swift 6 refuses a stored table.

    /// The fields that take their key's whole number as it is.
    private static var integerFields: [(WritableKeyPath<ServerConfiguration, Int>, ConfigKey)] {
        [
            (\.databaseWorkers, .databaseWorkers), (\.jobQueueCapacity, .jobQueueCapacity),
            (\.outboundMaxFrames, .outboundMaxFrames), (\.outboundMaxBytes, .outboundMaxBytes),
            (\.maxInFlightPerConnection, .maxInFlightPerConnection), (\.heartbeatInterval, .heartbeatInterval),
            (\.serviceThreads, .serviceThreads), (\.maxConnections, .maxConnections),
            (\.maxConnectionsPerUser, .maxConnectionsPerUser), (\.duplicateWindowMinutes, .duplicateWindowMinutes),
            (\.recentWindow, .recentWindow), (\.escalation.maxRounds, .maxEscalationRounds),
            (\.reach.emailAfterSeconds, .emailAfterSeconds), (\.reach.concurrencyPerHost, .deliveryConcurrencyPerHost),
            (\.reach.threads, .deliveryThreads), (\.reach.maxSubscriptionsPerUser, .pushMaxSubscriptionsPerUser),
        ]
    }

    /// The fields that take their key's number as it is.
    private static var numberFields: [(WritableKeyPath<ServerConfiguration, Double>, ConfigKey)] {
        [
            (\.sendBurst, .sendBurst), (\.sendRatePerSecond, .sendRatePerSecond),
            (\.replyBurst, .replyBurst), (\.replyRatePerMinute, .replyRatePerMinute),
            (\.listenerPollInterval, .listenerPollInterval), (\.headerTimeout, .headerTimeout),
            (\.idleTimeout, .idleTimeout), (\.writeStallTimeout, .writeStallTimeout), (\.shutdownGrace, .shutdownGrace),
        ]
    }

    /// The optional text fields: nil where the key is not set.
    private static var textFields: [(WritableKeyPath<ServerConfiguration, String?>, ConfigKey)] {
        [
            (\.opsToken, .opsToken), (\.tlsCertificate, .tlsCert), (\.tlsKey, .tlsKey),
            (\.reach.pushVapidKey, .pushVapidKey), (\.reach.smtpURL, .smtpURL), (\.reach.emailFrom, .emailFrom),
            (\.reach.publicURL, .publicURL), (\.reach.caFile, .deliveryCAFile),
        ]
    }
}
